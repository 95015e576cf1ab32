import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// `so deployment --dir D render`: the objects `start` applies, in apply order, without a cluster.
public struct RenderAction: Sendable {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    /// Loads and renders a deployment directory; rendering warnings go to the context's diagnostics.
    public func load(_ directory: String, placeholderSecrets: Bool = false) throws -> (DeploymentModel, Manifest) {
        let model = try self.model(directory)
        return (model, try render(model, placeholderSecrets: placeholderSecrets))
    }

    /// The deployment directory read and validated, not yet rendered.
    public func model(_ directory: String) throws -> DeploymentModel {
        try DeploymentLoader.load(ctx.absolute(directory), fs: ctx.fs, diagnostics: ctx.diagnostics)
    }

    /// The objects of a loaded deployment (egress host names are resolved here). `hostGateway`: the address
    /// compose's `host-gateway` stands for, when the caller found one (start, on kind); `volumeNode`: the node
    /// that holds the path volumes, when start found it.
    public func render(
        _ model: DeploymentModel, placeholderSecrets: Bool = false, hostGateway: String? = nil,
        clusterDNS: ClusterDNS? = nil, ingressClass: String? = nil, volumeNode: VolumeNode? = nil,
        warn: Bool = true
    ) throws -> Manifest {
        var addresses: [String: [String]] = [:]
        if let egress = model.spec.sections.egress {
            let config = Dictionary(model.config.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
            addresses = ctx.resolver.addresses(of: egress.targets(config: config).hosts)
        }
        var options = RenderOptions(
            placeholderSecrets: placeholderSecrets, egressAddresses: addresses, hostGateway: hostGateway,
            clusterDNS: clusterDNS, ingressClass: ingressClass)
        options.dashboardAccount = try DashboardReader.parse(ctx.environment[DashboardReader.variable])
        options.volumeNode = volumeNode
        let manifest = try Renderer.render(model, options: options)
        if warn { for w in manifest.warnings { ctx.diagnostics.warn(w) } }
        return manifest
    }

    /// What each compose key became; rendering runs too, so its errors and warnings show.
    public func report(_ directory: String) throws -> [MappingEntry] {
        let (model, manifest) = try load(directory)
        return MappingReport.build(model, plan: manifest.ports)
    }

    public func manifest(_ directory: String, placeholderSecrets: Bool = false) throws -> Manifest {
        try load(directory, placeholderSecrets: placeholderSecrets).1
    }

    @discardableResult
    public func run(_ req: RenderRequest) throws -> Manifest {
        let manifest = try self.manifest(req.directory, placeholderSecrets: req.placeholderSecrets)
        if req.output == "-" {
            switch req.format {
            case .yaml: ctx.console.out(manifest.yaml().trimmedNewlines)
            case .json: ctx.console.out(manifest.json().trimmedNewlines)
            }
            return manifest
        }
        let out = ctx.absolute(req.output)
        try writeFiles(manifest, to: out, format: req.format, force: req.force)
        ctx.say("wrote \(manifest.objects.count) objects to \(out)")
        return manifest
    }

    /// The index of the files a render wrote into a directory, so the next render replaces exactly those.
    public static let indexName = ".so-render"

    /// One file per object, named `NN-kind-name.yaml|json` by apply order. Only files this command wrote
    /// (listed in the directory's `.so-render`) are ever replaced or removed; a directory holding anything
    /// else is refused unless `force`, and even then its other files are left as they are.
    func writeFiles(_ manifest: Manifest, to out: String, format: RenderRequest.Format, force: Bool) throws {
        if ctx.fs.exists(out) && !ctx.fs.isDirectory(out) {
            throw SoError.usage(
                "\(out) exists and is not a directory",
                hint: "--output-dir names a directory (one file per object); omit it to print to stdout")
        }
        let index = Path.join(out, Self.indexName)
        let previous: Set<String> =
            ctx.fs.isFile(index)
            ? Set(
                (try ctx.fs.readText(index)).split(separator: "\n").map(String.init).filter {
                    !$0.isEmpty && !$0.contains("/") && $0 != ".." && $0 != "."
                })
            : []
        let present = ctx.fs.isDirectory(out) ? try ctx.fs.list(out) : []
        let foreign = present.filter { $0 != Self.indexName && !previous.contains($0) }
        if !foreign.isEmpty && !force {
            throw SoError.usage(
                "\(out) holds files render did not write (\(foreign.prefix(3).joined(separator: ", "))\(foreign.count > 3 ? ", …" : ""))",
                hint: "choose an empty or new directory, or pass --force to write beside them (they are never deleted)")
        }
        var names: [String] = []
        for (i, o) in manifest.objects.enumerated() {
            let name = String(format: "%02d-%@-%@.%@", i + 1, o.kind.lowercased(), o.name, format.rawValue)
            names.append(name)
            try AtomicWrite.text(format == .yaml ? o.yaml() : o.json() + "\n", to: Path.join(out, name), fs: ctx.fs)
        }
        let written = Set(names)
        for stale in previous.subtracting(written).sorted() where present.contains(stale) {
            try ctx.fs.remove(Path.join(out, stale))
        }
        try AtomicWrite.text(names.joined(separator: "\n") + "\n", to: index, fs: ctx.fs)
    }
}
