import Foundation
import SoActions
import SoBasics
import SoCompose
import SoRender
import SoStack

public struct InitAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    /// Ports and volumes of the compose files, as written: what the spec skeleton lists.
    struct ComposeScan {
        var ports: [(String, YValue)] = []
        var volumeUses: [String: (uses: Int, readOnly: Int)] = [:]
        var declared: [String] = []
        var hostVolumes: [(String, YValue)] = []
    }

    @discardableResult
    public func run(_ req: InitRequest) async throws -> String {
        let target = try checkTarget(req)
        let recipe = try Self.portRecipe(req.mapPortsToHost)
        let output = ctx.absolute(req.output)
        if ctx.fs.exists(output) && !req.force {
            throw SoError("\(output) already exists", hint: "pass --force to overwrite it, or choose another --output")
        }
        if ctx.fs.isDirectory(output) {
            throw SoError("\(output) is a directory", hint: "--output names the spec file to write, e.g. spec.yml")
        }

        let stack =
            try req.resolved
            ?? (req.composeFiles.isEmpty
                ? try ctx.locator.resolve(req.stack, diagnostics: ctx.diagnostics)
                : try ctx.locator.resolve(composeFiles: req.composeFiles, diagnostics: ctx.diagnostics))
        try stack.requirePods()
        let (config, extraDefaults) = try configuration(stack, req: req)
        let with = try chooseOptionalPods(stack, requested: req.with)
        let scan = try scanCompose(stack, with: with, values: Self.interpolationValues(config), recipe: recipe)

        var spec: [(String, YValue)] = [("stack", .string(stack.specValue)), ("deploy-to", .string(target.rawValue))]
        if let k = req.kubeConfig { spec.append(("kube-config", .string(ctx.absolute(k)))) }
        if let r = req.imageRegistry { spec.append(("image-registry", .string(r))) }
        if let image = req.kindNodeImage { spec.append(("kind-node-image", .string(image))) }
        if !config.pairs.isEmpty { spec.append(("config", .map(config.pairs))) }
        spec += Self.storageSections(scan)
        if !with.isEmpty { spec.append(("with", .list(with.map { .string($0) }))) }
        if !req.profiles.isEmpty { spec.append(("profiles", .list(req.profiles.map { .string($0) }))) }
        for (k, v) in extraDefaults where !spec.contains(where: { $0.0 == k }) { spec.append((k, v)) }

        let text = YValue.map(spec).yaml()
        if req.dryRun {
            ctx.console.out("would write \(req.output):")
            ctx.console.out(text.trimmedNewlines)
            return output
        }
        try AtomicWrite.text(text, to: output, fs: ctx.fs)
        ctx.say("wrote \(req.output) (stack \(stack.name), deploy-to \(target.rawValue))")
        ctx.say("next: so deploy create --spec-file \(req.output) --deployment-dir DIR")
        return output
    }

    /// The deploy target, with the flags that only fit the other one refused (a k8s target without a registry is warned about).
    func checkTarget(_ req: InitRequest) throws -> DeployTarget {
        let target = try DeployTarget.parse(req.deployTo, at: nil)
        switch target {
        case .k8s where req.kubeConfig == nil:
            throw SoError.usage(
                "--deploy-to k8s needs --kube-config",
                hint: "pass --kube-config /path/to/kubeconfig, or use --deploy-to k8s-kind for a local kind cluster")
        case .k8sKind where req.kubeConfig != nil:
            throw SoError.usage(
                "--kube-config is only for --deploy-to k8s",
                hint: "k8s-kind deployments use the kind cluster's own kubeconfig; drop --kube-config")
        case .k8sKind where req.imageRegistry != nil:
            throw SoError.usage(
                "--image-registry is only for --deploy-to k8s",
                hint: "kind loads local images directly; drop --image-registry")
        case .k8s where req.kindNodeImage != nil:
            throw SoError.usage(
                "--kind-node-image is only for --deploy-to k8s-kind",
                hint: "a k8s deployment runs on a cluster that already exists; drop --kind-node-image")
        case .k8s where req.imageRegistry == nil:
            ctx.diagnostics.warn(
                "no --image-registry given for deploy-to k8s",
                hint: "local images (…:local) cannot be pulled by a remote cluster without one")
        default: break
        }
        if let image = req.kindNodeImage, !ImageReference.isPlausible(image) {
            throw SoError.usage(
                "--kind-node-image '\(image)' is not an image reference",
                hint: "name a kind node image, e.g. --kind-node-image kindest/node:v1.31.0")
        }
        return target
    }

    /// `--map-ports-to-host`, parsed (nil: ports as written).
    static func portRecipe(_ value: String?) throws -> PortRecipe? {
        try value.map { value -> PortRecipe in
            guard let r = PortRecipe(rawValue: value) else {
                let recipes = PortRecipe.allCases.map(\.rawValue)
                let close = Suggest.closest(to: value, in: recipes).map { "did you mean '\($0)'? " } ?? ""
                throw SoError.usage(
                    "unknown --map-ports-to-host recipe '\(value)'",
                    hint: close + "use one of " + recipes.joined(separator: ", "))
            }
            return r
        }
    }

    /// Config: stack defaults < --config-file < --config (command line wins); and the stack's other spec defaults.
    func configuration(_ stack: ResolvedStack, req: InitRequest) throws -> (
        config: OrderedPairs, extraDefaults: [(String, YValue)]
    ) {
        var config = OrderedPairs()
        var extraDefaults: [(String, YValue)] = []
        if let defaults = stack.file.specDefaults {
            for e in try defaults.entries("'spec-defaults'") {
                if e.key == "config" {
                    for c in try e.value.entries("'spec-defaults.config'") {
                        config.set(c.key, try YValue.fromConfigNode(c.value))
                    }
                } else if !["stack", "deploy-to"].contains(e.key) {
                    extraDefaults.append((e.key, YValue.from(e.value)))
                }
            }
        }
        if let file = req.configFile {
            let path = ctx.absolute(file)
            for e in try DotEnv.parse(try ctx.fs.readText(path, what: "config file"), file: path) {
                config.set(e.key, .string(e.value))
            }
        }
        for arg in req.config {
            for (k, v) in try Self.parseConfigArgument(arg) { config.set(k, .string(v)) }
        }
        for (k, v) in config.pairs {
            if case .string(let s) = v { _ = try GenerateToken.parse(s, at: SourceLocation(file: "--config \(k)")) }
        }
        return (config, extraDefaults)
    }

    /// The config as the deployment will interpolate with it (generated values as "generated").
    static func interpolationValues(_ config: OrderedPairs) -> [String: String] {
        var values: [String: String] = [:]
        for (k, v) in config.pairs {
            switch v {
            case .string(let s): values[k] = GenerateToken.contains(s) ? "generated" : s
            case .int(let i): values[k] = String(i)
            case .bool(let b): values[k] = b ? "true" : "false"
            case .null, .map, .list: continue
            }
        }
        return values
    }

    /// Ports and volumes from the compose files, as written. Ports are checked (and mapped by a recipe) after
    /// interpolation with the config the deployment gets (`values`).
    func scanCompose(_ stack: ResolvedStack, with: [String], values: [String: String], recipe: PortRecipe?) throws
        -> ComposeScan
    {
        var scan = ComposeScan()
        for pod in try stack.pods(with: with, at: SourceLocation(file: "--with")) {
            let compose = try stack.compose(pod, fs: ctx.fs, environment: nil, diagnostics: ctx.diagnostics).file
            for v in compose.volumes where !scan.declared.contains(v.name) { scan.declared.append(v.name) }
            for svc in compose.services {
                // Plain compose: a host directory bind becomes a named volume that keeps the host path.
                if stack.file.podPerService {
                    for m in svc.volumes where m.kind == .bind {
                        guard let src = m.source, src.hasPrefix("/") || src.hasPrefix("~") else { continue }
                        let name = HostPathName.volume(for: src)
                        if !scan.hostVolumes.contains(where: { $0.0 == name }) {
                            scan.hostVolumes.append((name, .string(src)))
                        }
                    }
                }
                if !svc.portEntries.isEmpty {
                    let parsed = try ComposePorts.parse(
                        svc.portEntries, environment: values, diagnostics: ctx.diagnostics)
                    // Without a recipe, each entry as written: a `${WEB_PORT:-30080}:80` keeps following WEB_PORT.
                    let written =
                        recipe == nil ? svc.portEntries.map(\.written) : parsed.map { Self.mapPort($0, recipe: recipe) }
                    scan.ports.append((svc.name, .list(written.map { .string($0) })))
                }
                for m in svc.volumes where m.kind == .volume {
                    guard let src = m.source else { continue }
                    var u = scan.volumeUses[src] ?? (0, 0)
                    u.uses += 1
                    if m.readOnly { u.readOnly += 1 }
                    scan.volumeUses[src] = u
                }
            }
        }
        return scan
    }

    /// network, volumes, configmaps and secrets of the skeleton: a declared volume only ever mounted
    /// read-only whose name says config becomes a configmap.
    static func storageSections(_ scan: ComposeScan) -> [(String, YValue)] {
        var volumes: [(String, YValue)] = []
        var configmaps: [(String, YValue)] = []
        for name in scan.declared {
            guard let u = scan.volumeUses[name] else { continue }
            if u.uses == u.readOnly && name.contains("config") {
                configmaps.append((name, .string("./configmaps/\(name)")))
            } else {
                volumes.append((name, .null))
            }
        }
        return [
            ("network", .map([("ports", .map(scan.ports))])), ("volumes", .map(volumes + scan.hostVolumes)),
            ("configmaps", .map(configmaps)), ("secrets", .map([])),
        ]
    }

    /// `--with` as given (comma lists allowed), else a question on a terminal, else none.
    func chooseOptionalPods(_ stack: ResolvedStack, requested: [String]?) throws -> [String] {
        let optional = stack.file.optionalPods
        if let requested {
            let names = requested.flatMap(\.commaSeparatedItems)
            _ = try stack.file.selectedPods(with: names, at: SourceLocation(file: "--with"))
            return optional.filter { names.contains($0) }
        }
        guard !optional.isEmpty else { return [] }
        let question =
            "optional services of \(stack.name): \(optional.joined(separator: ", ")). Include which (comma-separated, empty for none)? "
        guard let answer = ctx.console.ask(question) else { return [] }
        return try chooseOptionalPods(stack, requested: [answer])
    }

    /// `K=V`, or laconic-so's `K=V,K2=V2`: a comma starts a new pair only when an upper-case
    /// `NAME=` follows it, so values may hold `,` and `=` (`URL=h/?a=1,b=2` stays one pair).
    public static func parseConfigArgument(_ arg: String) throws -> [(String, String)] {
        var pieces: [String] = []
        var current = ""
        var i = arg.startIndex
        while i < arg.endIndex {
            let c = arg[i]
            if c == ",", let eq = arg[arg.index(after: i)...].firstIndex(of: "="),
                NameRules.isUpperVariable(arg[arg.index(after: i)..<eq])
            {
                pieces.append(current)
                current = ""
            } else {
                current.append(c)
            }
            i = arg.index(after: i)
        }
        pieces.append(current)
        return try pieces.map { piece in
            guard let eq = piece.firstIndex(of: "="), eq != piece.startIndex else {
                throw SoError.usage(
                    "--config '\(piece)' is not KEY=VALUE", hint: "write --config NAME=value (repeat the flag for more)"
                )
            }
            let key = String(piece[..<eq])
            guard NameRules.isVariable(key) else {
                throw SoError.usage(
                    "--config key '\(key)' is not a valid variable name", hint: "use letters, digits and '_'")
            }
            return (key, String(piece[piece.index(after: eq)...]))
        }
    }

    static func mapPort(_ port: ComposePort, recipe: PortRecipe?) -> String {
        guard let recipe else { return port.raw }
        let c = port.containerPort
        let proto = port.proto == .tcp ? "" : "/\(port.proto)"
        switch recipe {
        case .anyVariableRandom: return "0.0.0.0::\(c)\(proto)"
        case .localhostSame: return "127.0.0.1:\(c):\(c)\(proto)"
        case .anySame: return "0.0.0.0:\(c):\(c)\(proto)"
        case .localhostFixedRandom: return "127.0.0.1:\(Self.randomPort(c)):\(c)\(proto)"
        case .anyFixedRandom: return "0.0.0.0:\(Self.randomPort(c)):\(c)\(proto)"
        }
    }

    /// A host port in 20000…50000 derived from the container port (stable across runs).
    static func randomPort(_ c: Int) -> Int { 20000 + (c * 7919) % 30000 }
}

extension YValue {
    /// A YAML node as an ordered value: plain ints and bools keep their type, everything else is text.
    static func from(_ n: YNode) -> YValue {
        if n.isNull { return .null }
        // The three reads below cannot fail: each asks for the shape the node was just tested to have.
        if n.isMapping { return .map(((try? n.entries("value")) ?? []).map { ($0.key, from($0.value)) }) }
        if n.isSequence { return .list(((try? n.sequence("value")) ?? []).map(from)) }
        let text = (try? n.string("value")) ?? ""
        if !n.isQuoted {
            if let i = Int(text) { return .int(i) }
            if text == "true" || text == "false" { return .bool(text == "true") }
        }
        return .string(text)
    }

    static func fromConfigNode(_ n: YNode) throws -> YValue {
        guard n.isScalar || n.isNull else {
            throw n.error("config values must be single values", hint: "quote the value")
        }
        return from(n)
    }
}
