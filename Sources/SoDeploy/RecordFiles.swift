import Foundation
import SoBasics
import SoCompose
import SoStack

/// Which files of a deployment directory its record holds, and writing them back (`pull`, a verb run by
/// `--name` on a machine without the directory). The record holds laconic's layout: spec.yml, stack.yml,
/// deployment.yml, config.env, kind-config.yml and the compose, compose-jobs, config and configmaps trees.
/// Never: `data/` (volumes), `kubeconfig.yml` (credentials), `*.bak` copies, dotfiles, symlinks (their target
/// is another file of the host), or any value of a secret key in config.env.
public enum RecordFiles {
    static let topFiles = ["spec.yml", "stack.yml", "deployment.yml", "config.env", "kind-config.yml"]
    static let trees = ["compose", "compose-jobs", "config", "configmaps"]

    /// The file in a deployment directory that remembers which revision of the record the directory was last in
    /// step with.
    public static let stepFile = ".so-record"

    /// The files of `dir` a record holds. `secretKeys`: config.env keys whose values are secret (generated,
    /// `secret-env`, credentials files' keys, which laconic-so appended to config.env): left out.
    public static func collect(_ dir: String, fs: FileSystem, secretKeys: [String]) throws -> [DeploymentRecord.File] {
        var out: [DeploymentRecord.File] = []
        for name in topFiles {
            let p = Path.join(dir, name)
            guard fs.kind(p) == .file else { continue }
            var data = try fs.readData(p)
            if name == "config.env" { data = try withoutSecrets(data, path: p, secretKeys: Set(secretKeys)) }
            out.append(.init(path: name, data: data, executable: fs.isExecutable(p)))
        }
        for tree in trees {
            let base = Path.join(dir, tree)
            guard fs.kind(base) == .directory else { continue }
            for entry in try fs.walk(base) where entry.kind == .file && included(entry.relative) {
                let p = Path.join(base, entry.relative)
                out.append(
                    .init(path: tree + "/" + entry.relative, data: try fs.readData(p), executable: fs.isExecutable(p)))
            }
        }
        return out.sorted { $0.path < $1.path }
    }

    private static func included(_ relative: String) -> Bool {
        !relative.hasSuffix(".bak") && !relative.split(separator: "/").contains { $0.hasPrefix(".") }
    }

    /// config.env without the values of `secretKeys` (as `so deploy create` writes it: those keys never appear
    /// in it; laconic-so's appended credentials do). Unchanged bytes when there is nothing to leave out.
    static func withoutSecrets(_ data: Data, path: String, secretKeys: Set<String>) throws -> Data {
        guard !secretKeys.isEmpty, let text = String(data: data, encoding: .utf8) else { return data }
        let entries = try DotEnv.parse(text, file: path)
        guard entries.contains(where: { secretKeys.contains($0.key) }) else { return data }
        let kept = entries.filter { !secretKeys.contains($0.key) }
        return Data(ConfigEnv.render(kept, credentials: ConfigEnv.credentialsFiles(in: text)).utf8)
    }

    /// Whether `path` (from a record, so from anyone who could write to the namespace) names a file the record may
    /// hold: relative, inside laconic's layout, no `.`/`..`/empty component, no dotfile, no control character.
    public static func isSafe(_ path: String) -> Bool {
        guard !path.isEmpty, path.utf8.count <= 1024, !path.hasPrefix("/"), !path.contains("\\"),
            !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
        else { return false }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.allSatisfy({ !$0.isEmpty && !$0.hasPrefix(".") }) else { return false }
        if parts.count == 1 { return topFiles.contains(parts[0]) }
        return trees.contains(parts[0]) && included(path)
    }

    /// Writes `record`'s files into `dir`, made if absent. A new directory is written beside and renamed into place
    /// (nothing half-written is left); in an existing one each file is replaced in one step and the files of the
    /// record's trees that it no longer holds are removed (`data/`, `kubeconfig.yml` and the rest are left alone).
    /// With `keepOld`, a file replaced or removed keeps its old content as `FILE.bak` (as `deploy create --update`
    /// does). `copies`: what this machine's starts of the directory copy from its environment (`Step.copies`):
    /// nothing, unless the caller kept what it copied before. Returns the paths written or removed.
    @discardableResult
    public static func write(
        _ record: DeploymentRecord, to dir: String, fs: FileSystem, keepOld: Bool = false, copies: [String] = []
    ) throws -> [String] {
        for f in record.files where !isSafe(f.path) {
            throw SoError(
                "the record of \(record.deployment) (revision \(record.revision)) names the file '\(f.path)', "
                    + "which a deployment directory does not hold",
                hint: "the record was changed outside so; roll back to another revision, or start from a directory "
                    + "with --force")
        }
        if !fs.exists(dir) {
            let prefix = Path.basename(dir) + ".pulling"
            let tmp = try fs.temporaryDirectory(beside: dir, prefix: prefix)
            do {
                for f in record.files { try put(f, in: tmp, fs: fs) }
                try writeStep(record, in: tmp, fs: fs, copies: copies)
                try fs.move(tmp, to: dir)
            } catch {
                try? fs.removeOwnedTree(tmp, owner: .scratch(prefix: prefix))  // best effort: the error next matters
                throw error
            }
            return record.files.map(\.path)
        }
        var changed: [String] = []
        let wanted = Set(record.files.map(\.path))
        // A file is written only where the directory itself holds it: a folder on its way that is a symlink would
        // take the write elsewhere on this host.
        for f in record.files {
            let parts = f.path.split(separator: "/").dropLast()
            for i in parts.indices where fs.kind(Path.join(dir, parts[...i].joined(separator: "/"))) == .symlink {
                throw SoError(
                    "\(Path.join(dir, parts[...i].joined(separator: "/"))) is a symlink, where the record of "
                        + "\(record.deployment) writes \(f.path)",
                    hint: "replace the link with a folder of its own, then run the verb again")
            }
        }
        for f in record.files {
            let p = Path.join(dir, f.path)
            // An unreadable file counts as different: it is replaced.
            if fs.kind(p) == .file, (try? fs.readData(p)) == f.data, fs.isExecutable(p) == f.executable { continue }
            if fs.kind(p) == .directory {
                throw SoError(
                    "\(p) is a directory, where the record of \(record.deployment) has a file",
                    hint: "move it aside, then run the verb again")
            }
            // A symlink is replaced, never followed: the file goes where the link was.
            if fs.kind(p) == .symlink { try fs.remove(p) }
            let tmp = p + ".so-pull"
            try fs.write(f.data, to: tmp)
            if f.executable { try fs.setExecutable(tmp, true) }
            if fs.exists(p) && keepOld { try keep(p, fs: fs) }
            if fs.exists(p) { try fs.replace(p, with: tmp) } else { try fs.move(tmp, to: p) }
            changed.append(f.path)
        }
        for name in topFiles
        where name != "config.env" && !wanted.contains(name) && fs.kind(Path.join(dir, name)) == .file {
            // config.env and deployment.yml are always in a record; the rest may leave it (kind-config.yml, stack.yml).
            if keepOld { try keep(Path.join(dir, name), fs: fs) } else { try fs.remove(Path.join(dir, name)) }
            changed.append(name)
        }
        for tree in trees where fs.kind(Path.join(dir, tree)) == .directory {
            for entry in try fs.walk(Path.join(dir, tree)) where entry.kind == .file && included(entry.relative) {
                let rel = tree + "/" + entry.relative
                if !wanted.contains(rel) {
                    if keepOld { try keep(Path.join(dir, rel), fs: fs) } else { try fs.remove(Path.join(dir, rel)) }
                    changed.append(rel)
                }
            }
        }
        try writeStep(record, in: dir, fs: fs, copies: copies)
        return changed.sorted()
    }

    /// `path` moved to `path.bak` (an older `.bak` replaced).
    private static func keep(_ path: String, fs: FileSystem) throws {
        try fs.remove(path + ".bak")
        try fs.move(path, to: path + ".bak")
    }

    private static func put(_ f: DeploymentRecord.File, in dir: String, fs: FileSystem) throws {
        let p = Path.join(dir, f.path)
        try fs.write(f.data, to: p)
        if f.executable { try fs.setExecutable(p, true) }
    }

    // MARK: the revision a directory is in step with

    public struct Step: Sendable, Equatable, Codable {
        public var deployment: String
        public var revision: Int
        public var digest: String
        /// The variables this machine's starts of the directory copy from its environment (`RecordTrust.copies`),
        /// for a directory written from the cluster's record; nil for one made here (all its files name).
        public var copies: [String]? = nil
        /// What the directory remembers of the revision the gate wrote it from (`RecordGate.recheck`); nil for one
        /// made or started here.
        public var made: RecordMark? = nil
        /// Made from the cluster's record (not here): its cluster is the one the record was found in, never one its
        /// files name or a kind cluster they would create (`ClusterTargets`). nil for a directory made here.
        public var fromRecord: Bool? = nil

        public init(deployment: String, revision: Int, digest: String, copies: [String]? = nil) {
            self.deployment = deployment
            self.revision = revision
            self.digest = digest
            self.copies = copies
        }
    }

    static func writeStep(_ record: DeploymentRecord, in dir: String, fs: FileSystem, copies: [String]?) throws {
        try writeStep(
            Step(deployment: record.deployment, revision: record.revision, digest: record.digest, copies: copies),
            in: dir, fs: fs)
    }

    public static func writeStep(_ step: Step, in dir: String, fs: FileSystem) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let p = Path.join(dir, stepFile)
        let tmp = p + ".tmp"
        try fs.write(try encoder.encode(step) + Data("\n".utf8), to: tmp)
        if fs.exists(p) { try fs.replace(p, with: tmp) } else { try fs.move(tmp, to: p) }
    }

    /// The revision `dir` was last in step with; nil when it never was (made by `deploy create`, or by an older
    /// `so`), or the file is unreadable (counted as never: start then compares the files themselves).
    public static func step(in dir: String, fs: FileSystem) -> Step? {
        let p = Path.join(dir, stepFile)
        // Unreadable counts as never in step (said above): start then compares the files themselves.
        guard fs.kind(p) == .file, let data = try? fs.readData(p) else { return nil }
        return try? JSONDecoder().decode(Step.self, from: data)  // the same: a damaged file is no step
    }
}
