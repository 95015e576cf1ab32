import Foundation
import SoActions
import SoBasics
import SoCompose
import SoRender
import SoStack

/// Reads the stack and spec and works out every file of the deployment directory (no writes).
struct DeploymentPlanner {
    let ctx: SoContext
    let spec: Spec
    let stack: ResolvedStack
    let directory: String

    var fs: FileSystem { ctx.fs }

    /// A host directory a deployment's kind node mounts: a spec volume's path, a bind directory or a repository bind.
    typealias HostMount = (name: String, hostPath: String)

    func plan(identity: DeploymentFile, includeIdentity: Bool) throws -> DeploymentPlan {
        var plan = DeploymentPlan()
        plan.add("spec.yml", Data(spec.text.utf8))
        plan.add("stack.yml", try stack.stackFileText.map { Data($0.utf8) } ?? fs.readData(stack.stackFilePath))
        plan.add("config.env", Data(try configEnv().utf8))
        // Binds under the stack's repositories are mounted with no spec entry (RepoBind), kind-config.yml maps them.
        var repoBinds: [HostMount] = []

        let interpolationEnv = Dictionary(
            spec.config.map { ($0.key, $0.isGenerated ? "generated" : $0.value) }, uniquingKeysWith: { $1 })
        var planned: (pods: [ComposeComponent], jobs: [ComposeComponent]) = ([], [])
        let components =
            try stack.pods(with: spec.with, at: SourceLocation(file: spec.path)).map { ($0, "compose") }
            + stack.jobs.map { ($0, "compose-jobs") }
        for (component, folder) in components {
            let c = try planComponent(
                component, folder: folder, environment: interpolationEnv, into: &plan, repoBinds: &repoBinds)
            if folder == "compose" {
                planned.pods.append(c.selecting(profiles: spec.profiles).component)
            } else {
                planned.jobs.append(c)
            }
        }
        // The pod's own config directory, as laconic-so copies it.
        for pod in try stack.pods(with: spec.with, at: nil) {
            let src = Path.join(stack.configDir, pod.name)
            if fs.isDirectory(src) {
                try copyTree(
                    src, to: "config/\(pod.name)", origin: SourceLocation(file: stack.stackFilePath), into: &plan)
            }
        }
        for cm in spec.configmaps { try planConfigmap(cm, into: &plan) }
        var kindVolumes = try planVolumes(into: &plan)
        for volume in plan.bindDirectories { kindVolumes.append((volume, Path.join(directory, "data", volume))) }
        kindVolumes += repoBinds
        // kind maps the ports the deployment publishes: the spec's network.ports replace the compose files' (warned about at load),
        // both parsed after interpolation with the values the compose files got.
        var published = planned.pods + planned.jobs
        try SpecPorts.apply(
            spec, to: &published, environment: interpolationEnv,
            diagnostics: .dropped("warned about when the spec was loaded"))
        let ports = PortPlan(
            pods: Array(published.prefix(planned.pods.count)), jobs: Array(published.dropFirst(planned.pods.count)),
            podPerService: stack.file.podPerService, httpProxy: spec.httpProxy, specPath: spec.path,
            deployTo: spec.deployTo,
            podSecurity: spec.sections.security.podSecurity)
        try planCluster(kindVolumes: kindVolumes, ports: ports, into: &plan)
        var identity = identity
        if !repoBinds.isEmpty { identity.repoBaseDir = ctx.locator.repoBaseDir }
        if includeIdentity { plan.add("deployment.yml", Data(identity.yaml().utf8)) }
        return plan
    }

    /// One compose file: copied as written, interpolated once with the deployment's own config (so `${V:?msg}`,
    /// malformed references and bad ports fail now), and the files it refers to copied or checked.
    func planComponent(
        _ component: ResolvedStack.Component, folder: String, environment: [String: String],
        into plan: inout DeploymentPlan,
        repoBinds: inout [HostMount]
    ) throws -> ComposeComponent {
        let (_, data) = try stack.compose(component, fs: fs, environment: nil, diagnostics: ctx.diagnostics)
        // Its ports (not the text as written) are what kind-config.yml maps.
        guard let root = try YAMLFile.parse(String(decoding: data, as: UTF8.self), file: component.composePath) else {
            throw SoError(
                "compose file is empty", hint: "a compose file has a services: section",
                at: SourceLocation(file: component.composePath))
        }
        let interpolated = try ComposeLoader.decode(
            root, path: component.composePath, environment: environment,
            diagnostics: .dropped("stack.compose just above warned about this file"))
        plan.add("\(folder)/docker-compose-\(component.name).yml", data)
        let c = ComposeComponent(
            name: component.name, compose: interpolated, relativePath: "\(folder)/docker-compose-\(component.name).yml")
        // Paths are read from the interpolated file (`env_file: ../config/${NETWORK:-main}.env`), as the deployment reads them.
        for cfg in interpolated.configs where !cfg.external {
            if let file = cfg.file {
                try copyReferenced(
                    file, what: "config '\(cfg.name)' file", from: interpolated, line: cfg.line, folder: folder,
                    required: true, into: &plan)
            }
        }
        // Secret files stay where they are (never copied into the deployment); start reads them.
        for sec in interpolated.secrets where !sec.external {
            if let file = sec.file,
                !fs.isFile(
                    Path.absolute(Path.expandTilde(file, home: fs.homeDirectory), relativeTo: interpolated.directory))
            {
                throw SoError(
                    "secret '\(sec.name)' file not found: \(Path.absolute(file, relativeTo: interpolated.directory))",
                    hint: "create it, or fix secrets.\(sec.name).file (relative to the compose file)",
                    at: SourceLocation(file: interpolated.path, line: sec.line))
            }
        }
        for svc in interpolated.services {
            try planService(svc, of: interpolated, folder: folder, into: &plan, repoBinds: &repoBinds)
        }
        return c
    }

    /// One service: it needs an image; its binds and env files are copied (host binds checked or recorded).
    func planService(
        _ svc: ComposeService, of compose: ComposeFile, folder: String, into plan: inout DeploymentPlan,
        repoBinds: inout [HostMount]
    ) throws {
        if svc.image == nil && svc.build == nil {
            throw SoError(
                "service '\(svc.name)' has no image", hint: "add 'image: NAME:TAG' (or a build: section)",
                at: SourceLocation(file: compose.path, line: svc.line))
        }
        for m in svc.volumes where m.kind == .bind {
            // Absolute host binds are named volumes with the host path: set by deploy init for a plain
            // compose file, by the spec's opt-in for a laconic stack; never copied.
            if let src = m.source, src.hasPrefix("/") || src.hasPrefix("~") {
                if !HostPathName.allowed(src, spec: spec, podPerService: stack.file.podPerService),
                    let abs = RepoBind.path(of: src, root: ctx.locator.repoBaseDir, home: fs.homeDirectory)
                {
                    if !repoBinds.contains(where: { $0.hostPath == abs }) {
                        repoBinds.append((HostPathName.volume(for: src), abs))
                    }
                    continue
                }
                guard HostPathName.allowed(src, spec: spec, podPerService: stack.file.podPerService) else {
                    throw SoError(
                        "host path '\(src)' is outside the stack and is not mounted unless the spec allows it",
                        hint: HostPathName.optInHint(src),
                        at: SourceLocation(file: compose.path, line: m.line ?? svc.line))
                }
                continue
            }
            try copyReferenced(
                m.source ?? "", what: "bind source of service '\(svc.name)'", from: compose, line: m.line ?? svc.line,
                folder: folder, required: true, into: &plan, bind: true)
        }
        for e in svc.envFiles {
            try copyReferenced(
                e.path, what: "env_file of service '\(svc.name)'", from: compose, line: svc.line, folder: folder,
                required: e.required, into: &plan)
        }
    }

    /// A spec configmap: its directory, from the stack's config (`./configmaps/NAME`) or the path the spec names.
    func planConfigmap(_ cm: (name: String, path: String, line: Int?), into plan: inout DeploymentPlan) throws {
        let location = SourceLocation(file: spec.path, line: cm.line)
        let target = "configmaps/\(cm.name)"
        plan.directories.append(target)
        if cm.path.hasPrefix("./configmaps/") || cm.path == "configmaps/\(cm.name)" {
            let src = Path.join(stack.configDir, cm.name)
            if fs.isDirectory(src) { try copyTree(src, to: target, origin: location, into: &plan) }
        } else {
            let expanded = Path.expandTilde(cm.path, home: fs.homeDirectory)
            let candidates = [fs.currentDirectory, Path.dirname(spec.path)].map {
                Path.absolute(expanded, relativeTo: $0)
            }
            guard let src = candidates.first(where: { fs.isDirectory($0) }) else {
                throw SoError(
                    "configmap '\(cm.name)' source directory not found: \(candidates[0])",
                    hint: "create it, or use ./configmaps/\(cm.name) to start from an empty directory", at: location)
            }
            try copyTree(src, to: target, origin: location, into: &plan, confineTo: src)
        }
    }

    /// The spec's volumes with a path: host paths as they are, relative ones as directories of the deployment.
    func planVolumes(into plan: inout DeploymentPlan) throws -> [HostMount] {
        var kindVolumes: [HostMount] = []
        for v in spec.volumes {
            guard let path = v.path else { continue }
            let location = SourceLocation(file: spec.path, line: v.line)
            if path.hasPrefix("/") || path.hasPrefix("~") {
                kindVolumes.append((v.name, Path.normalize(Path.expandTilde(path, home: fs.homeDirectory))))
                continue
            }
            let rel = Path.normalize(path)
            guard !rel.hasPrefix(".."), rel != "." else {
                throw SoError(
                    "volume '\(v.name)' path '\(path)' leaves the deployment directory",
                    hint: "use a path inside it such as ./data/\(v.name), or an absolute host path", at: location)
            }
            let topReserved =
                rel.split(separator: "/").first.map { DeploymentPlan.reserved.contains(String($0)) && $0 != "data" }
                ?? false
            if DeploymentPlan.reserved.contains(rel) || topReserved {
                throw SoError(
                    "volume '\(v.name)' path '\(path)' collides with a deployment file", hint: "use ./data/\(v.name)",
                    at: location)
            }
            plan.directories.append(rel)
            kindVolumes.append((v.name, Path.join(directory, rel)))
        }
        return kindVolumes
    }

    /// The cluster's file: kind-config.yml on kind, a copy of the kubeconfig the spec names on k8s.
    func planCluster(kindVolumes: [HostMount], ports: PortPlan, into plan: inout DeploymentPlan) throws {
        switch spec.deployTo {
        case .k8sKind:
            let root = spec.kindMountRoot.map { Path.normalize(Path.expandTilde($0, home: fs.homeDirectory)) }
            let kind = KindConfig(
                volumes: kindVolumes, mountRoot: root, hostPorts: ports.kindPorts, nodeImage: spec.kindNodeImage,
                workers: spec.kindWorkers)
            plan.add("kind-config.yml", Data(kind.yaml().utf8))
        case .k8s:
            if let kc = spec.kubeConfig {
                let path = Path.absolute(Path.expandTilde(kc, home: fs.homeDirectory), relativeTo: fs.currentDirectory)
                guard fs.isFile(path) else {
                    throw SoError(
                        "kube-config file not found: \(path)", hint: "point kube-config at an existing kubeconfig file",
                        at: SourceLocation(file: spec.path))
                }
                plan.add("kubeconfig.yml", try fs.readData(path))
            }
        }
    }

    func configEnv() throws -> String {
        // Only where each credentials file is and its key names: the values stay in the file until start
        // copies them into the deployment's Secret (never into config.env).
        var credentials: [CredentialsFile] = []
        for f in spec.credentialsFiles {
            let path = Path.absolute(Path.expandTilde(f, home: fs.homeDirectory), relativeTo: fs.currentDirectory)
            guard fs.isFile(path) else {
                throw SoError(
                    "credentials file not found: \(path)", hint: "create it or remove it from credentials-files",
                    at: SourceLocation(file: spec.path))
            }
            let keys = try DotEnv.parse(try fs.readText(path, what: "credentials file"), file: path).map(\.key)
            var unique: [String] = []
            for k in keys where !unique.contains(k) { unique.append(k) }
            credentials.append(CredentialsFile(path: path, keys: unique))
        }
        return ConfigEnv.render(spec.plainConfig.map { ($0.key, $0.value) }, credentials: credentials)
    }

    /// Copies a file or directory a compose file refers to by a relative path into the same place
    /// relative to the deployment directory, so `../config/x` from `D/compose/` still finds it.
    /// A bind (`bind`) whose source does not exist is not an error: docker would create it as an empty
    /// directory, so the deployment gets one, `data/<volume>`, mounted read-write from the host.
    /// `what` names the entry in errors: "env_file of service 'web'", "config 'nginx' file", "bind source of service 'db'".
    func copyReferenced(
        _ source: String, what: String, from compose: ComposeFile, line: Int?, folder: String, required: Bool,
        into plan: inout DeploymentPlan, bind: Bool = false
    ) throws {
        let location = SourceLocation(file: compose.path, line: line)
        if source.hasPrefix("/") || source.hasPrefix("~") {
            throw SoError(
                "\(what) '\(source)' is a host path, which cannot be deployed to a cluster",
                hint: "use a named volume and give it a host path under the spec's volumes:", at: location)
        }
        let abs = Path.absolute(source, relativeTo: compose.directory)
        guard let fromRoot = Path.relative(abs, to: stack.root), !fromRoot.hasPrefix("..") else {
            throw SoError(
                "\(what) '\(source)' points outside the stack (\(stack.root))",
                hint: "keep files a compose file mounts inside the stack, e.g. under config/", at: location)
        }
        let target = Path.normalize(Path.join(folder, source))
        guard !target.hasPrefix(".."), target != "." else {
            throw SoError(
                "\(what) '\(source)' would land outside the deployment directory",
                hint: "mount files from the stack's config/ directory",
                at: location)
        }
        if let first = target.split(separator: "/").first, DeploymentPlan.reserved.contains(String(first)) {
            throw SoError(
                "\(what) '\(source)' collides with the deployment's own '\(first)'",
                hint: "move the file under the stack's config/ directory",
                at: location)
        }
        guard fs.exists(abs) else {
            if bind {
                let volume = BindDirectory.volume(for: source)
                let data = BindDirectory.path(for: source)
                guard !plan.bindDirectories.contains(volume) else { return }
                plan.bindDirectories.append(volume)
                plan.directories.append(data)
                if !fs.isDirectory(Path.join(directory, data)) {
                    let message =
                        "bind source '\(source)' does not exist (\(abs)); created the empty directory \(data) in the deployment, "
                        + "mounted read-write from the host, as docker would"
                    ctx.diagnostics.warn(
                        Diagnostic(
                            message,
                            hint: "add the directory to the stack if it should start with files, or use a named volume",
                            at: location))
                }
                return
            }
            if !required { return }
            throw SoError("\(what) not found: \(abs)", hint: "add it to the stack or fix the path", at: location)
        }
        if fs.isDirectory(abs) {
            try copyTree(abs, to: target, origin: location, into: &plan)
        } else {
            try copyFile(abs, to: target, origin: location, into: &plan)
        }
    }

    func copyTree(
        _ source: String, to target: String, origin: SourceLocation, into plan: inout DeploymentPlan,
        confineTo: String? = nil
    ) throws {
        plan.directories.append(target)
        for entry in try fs.walk(source) {
            try copyFile(
                Path.join(source, entry.relative), to: Path.join(target, entry.relative), origin: origin, into: &plan,
                confineTo: confineTo)
        }
    }

    func copyFile(
        _ source: String, to target: String, origin: SourceLocation, into plan: inout DeploymentPlan,
        confineTo: String? = nil
    ) throws {
        let real = fs.realpath(source)
        let allowed = fs.realpath(confineTo ?? stack.root)
        if fs.kind(source) == .symlink || real != source {
            guard Path.isWithin(real, allowed) else {
                throw SoError(
                    "symlink \(source) points outside \(allowed) (to \(real))",
                    hint: "replace the link with a copy of the file, inside the stack",
                    at: origin)
            }
        }
        guard fs.isFile(real) else {
            if fs.exists(real) {
                throw SoError(
                    "\(source) is not a regular file", hint: "only files and directories can be copied", at: origin)
            }
            throw SoError("broken symlink \(source)", hint: "fix or remove the link", at: origin)
        }
        plan.add(target, try fs.readData(real), executable: fs.isExecutable(real))
    }
}
