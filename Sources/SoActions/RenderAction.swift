import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack

public struct RenderRequest: Sendable {
    public enum Format: String, Sendable { case yaml, json }
    public var directory: String
    /// A directory to write one file per object into, or "-" for stdout.
    public var output: String
    public var format: Format
    public var placeholderSecrets: Bool

    public init(directory: String, output: String = "-", format: Format = .yaml, placeholderSecrets: Bool = false) {
        self.directory = directory
        self.output = output
        self.format = format
        self.placeholderSecrets = placeholderSecrets
    }
}

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

    /// The objects of a loaded deployment (egress host names are resolved here).
    public func render(_ model: DeploymentModel, placeholderSecrets: Bool = false) throws -> Manifest {
        var addresses: [String: [String]] = [:]
        if let egress = model.spec.sections.egress {
            let config = Dictionary(model.config.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
            for host in egress.targets(config: config).hosts { addresses[host] = ctx.resolver.addresses(of: host) }
        }
        let manifest = try Renderer.render(model, options: RenderOptions(placeholderSecrets: placeholderSecrets, egressAddresses: addresses))
        for w in manifest.warnings { ctx.diagnostics.warn(w) }
        return manifest
    }

    /// What each compose key became; rendering runs too, so its errors and warnings show.
    public func report(_ directory: String) throws -> [MappingEntry] {
        let (model, _) = try load(directory)
        return MappingReport.build(model)
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
        if ctx.fs.exists(out) && !ctx.fs.isDirectory(out) {
            throw SoError("\(out) exists and is not a directory", hint: "--output names a directory (one file per object) or '-' for stdout")
        }
        // Replace the directory as a whole: a reader never sees a mix of old and new files.
        let tmp = try ctx.fs.temporaryDirectory(beside: out, prefix: Path.basename(out) + ".rendering")
        do {
            for (i, o) in manifest.objects.enumerated() {
                let name = String(format: "%02d-%@-%@.%@", i + 1, o.kind.lowercased(), o.name, req.format.rawValue)
                try ctx.fs.writeText(req.format == .yaml ? o.yaml() : o.json() + "\n", to: Path.join(tmp, name))
            }
            let old = out + ".old-\(getpid())"
            if ctx.fs.exists(out) { try ctx.fs.move(out, to: old) }
            try ctx.fs.move(tmp, to: out)
            try ctx.fs.remove(old)
        } catch {
            try? ctx.fs.remove(tmp)
            throw error
        }
        ctx.say("wrote \(manifest.objects.count) objects to \(out)")
        return manifest
    }
}
