import Foundation
import SoActions
import SoBasics
import SoCompose
import SoRender
import SoStack

/// The complete content of a deployment directory, computed before anything is written.
public struct DeploymentPlan: Sendable {
    public struct File: Sendable {
        public var path: String  // relative to the deployment directory
        public var data: Data
        public var executable: Bool
    }
    public var files: [File] = []
    public var directories: [String] = []
    /// Volumes made for relative binds whose source does not exist (`data/<volume>`), for kind-config.yml.
    public var bindDirectories: [String] = []

    /// Top-level entries of a deployment directory that copied stack files may not take over.
    static let reserved: Set<String> = [
        "spec.yml", "stack.yml", "deployment.yml", "config.env", "kind-config.yml", "kubeconfig.yml", "data",
        "configmaps",
    ]
    /// Directories whose files are the stack's: files that left the stack are removed on update.
    static let managedDirectories = ["compose/", "compose-jobs/", "config/"]

    mutating func add(_ path: String, _ data: Data, executable: Bool = false) {
        if let i = files.firstIndex(where: { $0.path == path }) {
            files[i] = File(path: path, data: data, executable: executable)
        } else {
            files.append(File(path: path, data: data, executable: executable))
        }
    }

    static func temporaryPrefix(_ dir: String) -> String { Path.basename(dir) + ".creating" }

    /// Writes a new deployment directory: everything goes into a temporary directory beside `dir`,
    /// which is renamed into place at the end; on any error, or SIGINT/SIGTERM, nothing is left behind.
    func write(to dir: String, fs: FileSystem, interrupts: Interrupts) throws {
        var guardID = 0
        let tmp = try interrupts.step { () throws -> String in
            let t = try fs.temporaryDirectory(beside: dir, prefix: Self.temporaryPrefix(dir))
            // best effort at an interrupt: the next create removes a leftover temporary directory by its prefix
            guardID = interrupts.onInterrupt {
                try? fs.removeOwnedTree(t, owner: .scratch(prefix: Self.temporaryPrefix(dir)))
            }
            return t
        }
        do {
            try populate(tmp, fs: fs, interrupts: interrupts)
            try interrupts.step {
                try fs.move(tmp, to: dir)
                interrupts.done(guardID)
            }
        } catch {
            // best effort: the error next matters
            try? fs.removeOwnedTree(tmp, owner: .scratch(prefix: Self.temporaryPrefix(dir)))
            interrupts.done(guardID)
            throw error
        }
    }

    private func populate(_ root: String, fs: FileSystem, interrupts: Interrupts) throws {
        for d in directories { try interrupts.step { try fs.createDirectory(Path.join(root, d)) } }
        for f in files {
            let p = Path.join(root, f.path)
            try interrupts.step {
                try fs.write(f.data, to: p)
                if f.executable { try fs.setExecutable(p, true) }
            }
        }
    }

    /// What `apply(over:)` would change, without writing: `deploy create --update --dry-run`.
    func changes(over dir: String, fs: FileSystem) throws -> (changed: [String], added: [String], removed: [String]) {
        var changed: [String] = []
        var added: [String] = []
        var removed: [String] = []
        let wanted = Set(files.map(\.path))
        for managed in Self.managedDirectories {
            let base = Path.join(dir, String(managed.dropLast()))
            guard fs.isDirectory(base) else { continue }
            for entry in try fs.walk(base) where entry.kind != .directory {
                let rel = managed + entry.relative
                if !rel.hasSuffix(".bak") && !wanted.contains(rel) { removed.append(rel) }
            }
        }
        for f in files {
            let p = Path.join(dir, f.path)
            if fs.isFile(p) {
                if try fs.readData(p) != f.data { changed.append(f.path) }
            } else {
                added.append(f.path)
            }
        }
        return (changed, added, removed)
    }

    /// Refreshes an existing deployment directory: changed files keep a `.bak` of their old content,
    /// files that left the stack are removed; deployment.yml and data/ are never touched.
    func apply(over dir: String, fs: FileSystem) throws -> (changed: [String], added: [String], removed: [String]) {
        var changed: [String] = []
        var added: [String] = []
        var removed: [String] = []
        let wanted = Set(files.map(\.path))
        var stale: [String] = []
        for managed in Self.managedDirectories {
            let base = Path.join(dir, String(managed.dropLast()))
            guard fs.isDirectory(base) else { continue }
            for entry in try fs.walk(base) {
                let rel = managed + entry.relative
                if !rel.hasSuffix(".bak") && !wanted.contains(rel) { stale.append(rel) }
            }
        }
        for d in directories { try fs.createDirectory(Path.join(dir, d)) }
        for f in files {
            let p = Path.join(dir, f.path)
            if fs.isFile(p) {
                let old = try fs.readData(p)
                if old == f.data { continue }
                let bak = p + ".bak"
                try fs.remove(bak)
                try fs.move(p, to: bak)
                changed.append(f.path)
            } else {
                if fs.exists(p) { try fs.remove(p) }
                added.append(f.path)
            }
            try fs.write(f.data, to: p)
            if f.executable { try fs.setExecutable(p, true) }
        }
        for rel in stale {
            try fs.remove(Path.join(dir, rel))
            removed.append(rel)
        }
        return (changed, added, removed)
    }
}
