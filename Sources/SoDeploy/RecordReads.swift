import Foundation
import SoBasics
import SoCompose
import SoStack

/// The reads of a revision written into a directory (`dir`), through a file system confined to it and to
/// `roots` (`ConfinedFileSystem`): what it names outside the directory that a load or a start would read, and the
/// place it names (namespace, deployment, cluster). Pure over the file system, and reads nothing outside `roots`
/// but what exists and its kind (the fuzz target `record-gate` holds it to that).
public struct RecordReads {
    let dir: String
    let base: FileSystem
    let origin: RecordOrigin
    let roots: [String]
    /// The page's stricter rule: no host path at all (its machine is the cluster's neighbour, not a user's).
    var strict = false

    /// `extraRoots`: what else may be read (the built-in stacks).
    public init(dir: String, fs: FileSystem, origin: RecordOrigin, extraRoots: [String] = [], strict: Bool = false) {
        self.dir = dir
        base = fs
        self.origin = origin
        roots = [fs.realpath(dir)] + extraRoots.map(fs.realpath)
        self.strict = strict
    }

    var root: String { roots[0] }
    var home: String { base.homeDirectory }
    public var fs: ConfinedFileSystem { ConfinedFileSystem(base: base, roots: roots) }

    func inside(_ abs: String) -> Bool { Path.isWithin(base.realpath(abs), root) }

    /// `path` as a start resolves it from `from` (a directory of the deployment).
    func resolve(_ path: String, from: String) -> String {
        path.hasPrefix("/") || path.hasPrefix("~")
            ? Path.normalize(Path.expandTilde(path, home: home)) : Path.absolute(path, relativeTo: from)
    }

    /// The identity and spec, or the finding that they do not load (a revision whose place cannot be read).
    public func identity() -> Result<(DeploymentFile, Spec), RecordFinding> {
        let probe = DiagnosticSink.dropped("a revision the gate reads (its start warns)")
        var file = "deployment.yml"
        do {
            let identity = try DeploymentFile.load(Path.join(dir, file), fs: fs, diagnostics: probe)
            file = "spec.yml"
            return .success((identity, try Spec.load(Path.join(dir, file), fs: fs, diagnostics: probe)))
        } catch {
            return .failure(.unloadable(file, (error as? SoError)?.message ?? "\(error)"))
        }
    }

    /// The place, then what the spec and the compose files name outside the directory.
    public func findings(_ identity: DeploymentFile, _ spec: Spec, before: String?) -> [RecordFinding] {
        place(identity, spec, before: before) + specReads(spec) + composeReads()
    }

    /// The directory loaded through the confined file system; nil, with the finding, when the load read outside it
    /// (nil without one: a directory that does not load starts nothing, and the verb says why when it loads it).
    public func load() -> (DeploymentModel?, RecordFinding?) {
        let probe = DiagnosticSink.dropped("a revision the gate reads (its start warns)")
        do { return (try DeploymentLoader.load(dir, fs: fs, diagnostics: probe), nil) } catch let e
            as ConfinedFileSystem.Outside
        {
            let rel = Path.isWithin(e.path, root) ? String(e.path.dropFirst(root.count + 1)) : e.path
            return (nil, .init(.reach, RecordFinding.wholeDirectory, "", "reads \(rel), outside it, when it is loaded"))
        } catch {
            return (nil, nil)
        }
    }

    // MARK: the place

    func place(_ identity: DeploymentFile, _ spec: Spec, before: String?) -> [RecordFinding] {
        var out: [RecordFinding] = []
        if identity.deploymentID != origin.deployment {
            out.append(
                .init(
                    .place, "deployment.yml", "deployment-id",
                    "names \(identity.deploymentID), not \(origin.deployment) whose record it is"))
        }
        let namespace = spec.namespace ?? NameRules.dnsLabel(identity.deploymentID)
        if namespace != origin.namespace {
            out.append(
                .init(.place, "spec.yml", "namespace", "names \(namespace), not \(origin.namespace) where it was found")
            )
        }
        // What the directory it replaces had (its cluster): the revision may not move it elsewhere.
        guard let before else { return out }
        let probe = DiagnosticSink.dropped("the directory a revision replaces")
        // A directory it replaces that does not load names no place to keep (its own verb says why).
        guard let old = try? Spec.load(Path.join(before, "spec.yml"), fs: base, diagnostics: probe),
            let oldIdentity = try? DeploymentFile.load(
                Path.join(before, "deployment.yml"), fs: base, diagnostics: probe)
        else { return out }
        if old.deployTo != spec.deployTo {
            out.append(.init(.place, "spec.yml", "deploy-to", "is \(spec.deployTo), where it was \(old.deployTo)"))
        }
        if old.kubeConfig != spec.kubeConfig {
            out.append(.init(.place, "spec.yml", "kube-config", "names another cluster (\(spec.kubeConfig ?? "none"))"))
        }
        if oldIdentity.clusterID != identity.clusterID || old.kindClusterName != spec.kindClusterName {
            out.append(.init(.place, "deployment.yml", "cluster-id", "names another kind cluster"))
        }
        // No kind-config.yml (or an unreadable one) on either side compares as none.
        let kindConfig = { (d: String) in try? base.readData(Path.join(d, "kind-config.yml")) }
        if spec.deployTo == .k8sKind, kindConfig(dir) != kindConfig(before) {
            out.append(.init(.place, "kind-config.yml", "", "changes the kind cluster's own configuration"))
        }
        return out
    }

    // MARK: reads outside the directory

    func specReads(_ spec: Spec) -> [RecordFinding] {
        var out: [RecordFinding] = []
        // No config.env names no credentials file; one outside the directory cannot be a symlink (never written).
        let env = (try? fs.readText(Path.join(dir, "config.env"), what: "config.env")) ?? ""
        for c in ConfigEnv.credentialsFiles(in: env) where !inside(resolve(c.path, from: dir)) {
            out.append(.init(.reach, "config.env", "credentials-files", "reads \(c.path) of this machine"))
        }
        let named: [(String, String)] =
            spec.credentialsFiles.map { ("credentials-files", $0) }
            + spec.sections.caCertificates.map { ("ca-certificates", $0) }
            + (spec.sections.imagePullSecret?.tokenFile.map { [("image-pull-secret.token-file", $0)] } ?? [])
        for (key, file) in named where !inside(resolve(file, from: dir)) {
            out.append(.init(.reach, "spec.yml", key, "reads \(file) of this machine"))
        }
        // A host path is the node's (a privilege the namespace may not have had: `RecordReview`); the page takes none.
        for v in spec.volumes where strict {
            guard let p = v.path, !inside(resolve(p, from: dir)) else { continue }
            out.append(.init(.reach, "spec.yml", "volumes.\(v.name)", "is the host path \(p)"))
        }
        return out
    }

    /// The compose files' keys that name a file a load or a start reads (`include`, `configs`, `secrets`,
    /// `env_file`, `extends`, `build`), read as YAML before the compose loader follows any of them.
    func composeReads() -> [RecordFinding] {
        var out: [RecordFinding] = []
        for folder in ["compose", "compose-jobs"] {
            let folderPath = Path.join(dir, folder)
            // A folder that cannot be listed holds no compose file a load reads (the load says why).
            guard fs.kind(folderPath) == .directory, let entries = try? fs.walk(folderPath) else { continue }
            for entry in entries where entry.kind == .file {
                let rel = folder + "/" + entry.relative
                let path = Path.join(dir, rel)
                // A file that does not parse loads nothing (its start says why).
                // A compose file that does not read or parse loads nothing (its start says why).
                guard let text = try? fs.readText(path, what: "compose file"),
                    let doc = try? YAMLFile.parse(text, file: rel)
                else { continue }
                for (key, file) in Self.namedFiles(doc) where !inside(resolve(file, from: Path.dirname(path))) {
                    out.append(.init(.reach, rel, key, "reads \(file) of this machine"))
                }
            }
        }
        return out
    }

    /// The files a compose document names, by key (`configs.k.file`, `services.s.env_file` …), as written.
    static func namedFiles(_ doc: YNode) -> [(String, String)] {
        var out: [(String, String)] = []
        func entries(_ n: YNode?) -> [(key: String, keyNode: YNode, value: YNode)] {
            guard let n, n.isMapping else { return [] }
            // Not a mapping of strings: it names no file (the compose loader refuses it, naming its line).
            return (try? n.entries("")) ?? []
        }
        func value(_ n: YNode, _ key: String) -> YNode? { entries(n).first { $0.key == key }?.value }
        func scalars(_ n: YNode?) -> [String] {
            guard let n else { return [] }
            // The same: a value that is not text names no file.
            if n.isScalar { return (try? n.string("")).map { [$0] } ?? [] }
            if n.isSequence { return ((try? n.sequence("")) ?? []).flatMap { scalars($0) } }
            return []
        }
        let top = entries(doc)
        func at(_ key: String) -> YNode? { top.first { $0.key == key }?.value }
        // The same for include: and env_file: lists.
        for item in at("include").map({ n in n.isSequence ? ((try? n.sequence("")) ?? []) : [n] }) ?? [] {
            let paths = item.isMapping ? scalars(value(item, "path")) + scalars(value(item, "env_file")) : scalars(item)
            out += paths.map { ("include", $0) }
        }
        for section in ["configs", "secrets"] {
            for e in entries(at(section)) {
                out += scalars(value(e.value, "file")).map { ("\(section).\(e.key).file", $0) }
            }
        }
        for s in entries(at("services")) {
            let svc = s.value
            if let envFile = value(svc, "env_file") {
                // A list that does not read names no file (the compose loader refuses it, naming its line).
                let items = envFile.isSequence ? ((try? envFile.sequence("")) ?? []) : [envFile]
                for i in items {
                    out += (i.isMapping ? scalars(value(i, "path")) : scalars(i)).map {
                        ("services.\(s.key).env_file", $0)
                    }
                }
            }
            if let extends = value(svc, "extends") {
                out += scalars(value(extends, "file")).map { ("services.\(s.key).extends.file", $0) }
            }
            if let build = value(svc, "build") {
                out += (build.isMapping ? scalars(value(build, "context")) : scalars(build)).map {
                    ("services.\(s.key).build", $0)
                }
            }
        }
        return out
    }
}
