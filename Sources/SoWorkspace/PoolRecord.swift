import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

/// A warm pool as `so pool create` records it (in the cluster: `PoolStore`): the stack its members are made of,
/// with which `--config`, `--with` and `--agent`, and how many to keep warm.
public struct PoolRecord: Sendable, Equatable, Encodable {
    public var name: String
    public var stack: String
    public var size: Int
    public var config: [String] = []
    public var with: [String]?
    public var agent: String?
    /// The stack's files when the pool was made (path → FNV-1a of the text): members of a stack changed since
    /// are refused, naming the files.
    public var files: [String: String] = [:]
    /// Made by `so up` for the spec's `workspace.pool` (`PoolFromSpec`): made again when its stack changes.
    public var fromSpec: Bool?
    /// The variables a claim hands in from the claimer's environment (the members' `secret-env`), recorded by the
    /// machine that made the pool from its own stack: a member's record, anyone's to write in its namespace, names no
    /// more. nil for a pool an older `so` made (its claims hand in none).
    public var secretEnv: [String]?

    public init(name: String, stack: String, size: Int) {
        self.name = name
        self.stack = stack
        self.size = size
    }

    static func directory(_ ctx: SoContext) -> String { Path.join(ctx.soHome, "pools") }
    /// The record's file; a name that is not a pool's (a path, `..`) is refused before any file is touched.
    static func path(_ ctx: SoContext, _ name: String) throws -> String {
        try NameRules.checkWorkspaceName(name)
        return Path.join(directory(ctx), "\(name).json")
    }

    /// A pool an older `so` recorded in `$SO_HOME/pools/NAME.json` (`PoolStore` moves it to the cluster).
    static func loadFile(_ ctx: SoContext, _ name: String) throws -> PoolRecord? {
        let path = try path(ctx, name)
        guard ctx.fs.isFile(path) else { return nil }
        return try parse(name: name, data: Data(try ctx.fs.readText(path).utf8), at: path)
    }

    /// The record `name` from its JSON (`at`: where it was read, for the error).
    static func parse(name: String, data: Data, at: String) throws -> PoolRecord {
        let j: JSON
        do { j = try JSON.parse(data) } catch {
            throw SoError(
                "\(at) is not a pool record: \(SoContext.oneLine(error))", hint: "remove it: so pool remove \(name)")
        }
        guard let stack = j["stack"]?.string, let size = j["size"]?.int else {
            throw SoError("\(at) is not a pool record", hint: "remove it: so pool remove \(name)")
        }
        var r = PoolRecord(name: name, stack: stack, size: size)
        r.config = j["config"]?.array.compactMap(\.string) ?? []
        r.with = j["with"].flatMap { $0 == .null ? nil : $0.array.compactMap(\.string) }
        r.agent = j["agent"]?.string
        r.files = (j["files"]?.object ?? [:]).compactMapValues(\.string)
        r.fromSpec = j["fromSpec"]?.bool
        r.secretEnv = j["secretEnv"].flatMap { $0 == .null ? nil : $0.array.compactMap(\.string) }
        return r
    }

    /// A stack as pools record and compare it: a path absolute and real (`~` expanded), so `so up ../stack` run
    /// elsewhere finds the pool `so pool create ./stack` made, and a refill (which runs in no particular directory)
    /// finds its stack; a built-in stack's name as it is.
    public static func stackKey(_ ctx: SoContext, _ value: String) -> String {
        let v = value.trimmedSpaces
        guard StackLocator.looksLikePath(v), !v.contains(",") else { return v }
        return ctx.fs.realpath(ctx.absolute(v))
    }

    /// What the stack is made of, now: its stack.yml, its pods' compose files and its config directory.
    static func fingerprint(_ stack: ResolvedStack, fs: FileSystem) throws -> [String: String] {
        var paths = [stack.stackFilePath] + (stack.pods + stack.optionalPods + stack.jobs).map(\.composePath)
        let config = Path.join(stack.configDir, stack.name)
        if fs.isDirectory(config) {
            paths += try fs.walk(config).filter { $0.kind == .file }.map { Path.join(config, $0.relative) }
        }
        var out: [String: String] = [:]
        for p in paths where fs.isFile(p) {
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for b in try fs.readText(p).utf8 {
                h ^= UInt64(b)
                h = h &* 0x0000_0100_0000_01b3
            }
            out[p.hasPrefix(stack.root + "/") ? String(p.dropFirst(stack.root.count + 1)) : p] = String(h, radix: 16)
        }
        return out
    }

    /// The pool's stack on this machine: where the pool names it, else `copy` (this machine's copy of it, whose
    /// files `changed` compares); the path to make members from, and the stack.
    func stackHere(_ ctx: SoContext, copy: String?) throws -> (String, ResolvedStack) {
        let quiet = DiagnosticSink.dropped("a pool's stack")
        if let copy {
            return (copy, try ctx.locator.resolve(copy, diagnostics: quiet))
        }
        do { return (stack, try ctx.locator.resolve(stack, diagnostics: quiet)) } catch let e as SoError {
            throw SoError(
                "pool \(name)'s stack \(stack) cannot be read on this machine: \(e.message)",
                hint: "name this machine's copy of it: so pool fill \(name) --stack PATH")
        }
    }

    /// The files that changed since the pool was made (none: its members are still what the stack makes).
    func changed(_ stack: ResolvedStack, fs: FileSystem) throws -> [String] {
        guard !files.isEmpty else { return [] }  // a record made before pools recorded their stack's files
        return changed(now: try Self.fingerprint(stack, fs: fs))
    }

    /// The files that changed, against the stack's fingerprint `now` (`fingerprint`).
    func changed(now: [String: String]) -> [String] {
        guard !files.isEmpty else { return [] }
        return Set(now.keys).union(files.keys).filter { now[$0] != files[$0] }.sorted()
    }

}
