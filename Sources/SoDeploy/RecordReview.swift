import Foundation
import SoActions
import SoBasics
import SoCompose
import SoRender
import SoStack

/// What a directory written from a record would do on this machine and in the cluster, read through a file system
/// confined to the directory: whatever its load would read outside it, the commands it would run here, the
/// namespace and deployment it names, and the privilege it asks for. Pure over the file system: it reads, never
/// writes, and reads nothing outside the directory (and the built-in stacks) but what exists and its kind.
public struct RecordReview {
    let ctx: SoContext
    let dir: String
    let origin: RecordOrigin
    /// The page's stricter rule: no host path at all (its machine is the cluster's neighbour, not a user's).
    var strict = false

    public init(ctx: SoContext, dir: String, origin: RecordOrigin, strict: Bool = false) {
        self.ctx = ctx
        self.dir = dir
        self.origin = origin
        self.strict = strict
    }

    var root: String { ctx.fs.realpath(dir) }
    var reads: RecordReads {
        RecordReads(
            dir: dir, fs: ctx.fs, origin: origin, extraRoots: ctx.locator.builtInRoot.map { [$0] } ?? [],
            strict: strict)
    }

    func inside(_ abs: String) -> Bool { Path.isWithin(ctx.fs.realpath(abs), root) }

    /// Every finding, in the order the files are read. `before`: the directory the revision replaces (its privilege
    /// is not new), nil for one made from the record.
    public func findings(before: String? = nil) -> [RecordFinding] {
        let reads = self.reads
        // The place first: a revision of another namespace or deployment is refused whatever else it says.
        let identity: DeploymentFile
        let spec: Spec
        switch reads.identity() {
        case .success(let read): (identity, spec) = read
        case .failure(let finding): return [finding]
        }
        var out = reads.findings(identity, spec, before: before) + startCommands(spec)
        // The catch-all: whatever the load itself reads outside the directory.
        let (model, outside) = reads.load()
        if let outside, !out.contains(where: { $0.kind == .reach }) { out.append(outside) }
        if let model { out += privilege(model, before: before) }
        return out
    }

    // MARK: commands run here

    /// The stack's start commands run on this machine: a revision this machine did not start runs none, whether its
    /// stack is inside the directory or one of this machine's it names (only its commands read it).
    func startCommands(_ spec: Spec) -> [RecordFinding] {
        let probe = DiagnosticSink.dropped("the stack a revision names")
        // A stack that does not resolve here runs no start command (its start warns that it cannot be read).
        guard let stack = try? ctx.locator.resolve(spec.stack, relativeTo: [dir], diagnostics: probe) else { return [] }
        var out: [RecordFinding] = []
        let own = inside(stack.stackFilePath)
        let file = String(ctx.fs.realpath(stack.stackFilePath).dropFirst(root.count + 1))
        for pod in stack.pods {
            for (key, command) in [
                ("pre_start_command", pod.preStartCommand), ("post_start_command", pod.postStartCommand),
            ]
            where command != nil {
                // A stack of this machine's is the record's choice through spec.yml's stack: (its file is not the record's).
                out.append(
                    own
                        ? .init(.reach, file, "pods.\(pod.name).\(key)", "runs a command on this machine")
                        : .init(
                            .reach, "spec.yml", "stack",
                            "names \(stack.stackFilePath), whose pods.\(pod.name).\(key) runs a command on this machine"
                        ))
            }
        }
        return out
    }

    // MARK: privilege

    /// What `model` asks for beyond Pod Security `baseline` that neither the namespace (at `privileged`) nor the
    /// directory it replaces had.
    func privilege(_ model: DeploymentModel, before: String?) -> [RecordFinding] {
        guard origin.podSecurity != "privileged" else { return [] }
        let now = Self.privileges(model, dir: dir, fs: ctx.fs)
        guard let before else { return now }
        let probe = DiagnosticSink.dropped("the directory a revision replaces")
        // A directory it replaces that does not load had no privilege to keep: all of the revision's is new.
        guard let old = try? DeploymentLoader.load(before, fs: ctx.fs, diagnostics: probe) else { return now }
        let had = Set(Self.privileges(old, dir: before, fs: ctx.fs).map(\.description))
        return now.filter { !had.contains($0.description) }
    }

    /// Each setting of `model` (loaded from `dir`) that needs more than Pod Security `baseline`, naming its file
    /// and key.
    static func privileges(_ model: DeploymentModel, dir: String, fs: FileSystem) -> [RecordFinding] {
        let root = fs.realpath(dir)
        func outside(_ src: String, from base: String) -> Bool {
            let abs =
                src.hasPrefix("/") || src.hasPrefix("~")
                ? Path.normalize(Path.expandTilde(src, home: fs.homeDirectory)) : Path.absolute(src, relativeTo: base)
            return !Path.isWithin(fs.realpath(abs), root)
        }
        var out: [RecordFinding] = []
        let security = model.spec.sections.security
        for v in model.spec.volumes {
            guard let p = v.path, outside(p, from: dir) else { continue }
            out.append(.init(.privilege, "spec.yml", "volumes.\(v.name)", "is the host path \(p)"))
        }
        if security.privileged { out.append(.init(.privilege, "spec.yml", "security.privileged", "runs privileged")) }
        if security.unlimitedMemlock {
            out.append(.init(.privilege, "spec.yml", "security.unlimited-memlock", "runs privileged"))
        }
        if let level = security.podSecurity, level == "privileged" {
            out.append(.init(.privilege, "spec.yml", "security.pod-security", "sets Pod Security to \(level)"))
        }
        for c in model.pods + model.jobs {
            for svc in c.compose.services {
                let at = "services.\(svc.name)"
                if svc.privileged == true {
                    out.append(.init(.privilege, c.relativePath, at + ".privileged", "is true"))
                }
                if let mode = svc.networkMode, mode == "host" || mode.hasPrefix("container:") {
                    out.append(.init(.privilege, c.relativePath, at + ".network_mode", "is \(mode)"))
                }
                if !svc.capAdd.isEmpty {
                    out.append(
                        .init(.privilege, c.relativePath, at + ".cap_add", "adds \(svc.capAdd.joined(separator: ", "))")
                    )
                }
                for m in svc.volumes where m.kind == .bind {
                    guard let src = m.source else { continue }
                    if outside(src, from: Path.join(dir, Path.dirname(c.relativePath))) {
                        out.append(.init(.privilege, c.relativePath, at + ".volumes", "mounts the host path \(src)"))
                    }
                }
            }
        }
        // Ports that do not plan start nothing (the start refuses them, naming the service).
        for s in (try? Renderer.ports(of: model).services) ?? [] where !s.hostPorts.isEmpty {
            let ports = s.hostPorts.values.sorted().map(String.init).joined(separator: ", ")
            let file = s.file.hasPrefix(dir + "/") ? String(s.file.dropFirst(dir.count + 1)) : s.file
            out.append(.init(.privilege, file, "services.\(s.name).ports", "binds host port \(ports) on the node"))
        }
        return out
    }
}
