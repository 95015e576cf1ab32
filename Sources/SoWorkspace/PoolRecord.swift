import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

/// A warm pool as `so pool create` records it (`$SO_HOME/pools/NAME.json`): the stack its members are made of,
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

    public static func load(_ ctx: SoContext, _ name: String) throws -> PoolRecord? {
        let path = try path(ctx, name)
        guard ctx.fs.isFile(path) else { return nil }
        let j = try JSON.parse(Data(try ctx.fs.readText(path).utf8))
        guard let stack = j["stack"]?.string, let size = j["size"]?.int else {
            throw SoError("\(path) is not a pool record", hint: "remove it: so pool remove \(name)")
        }
        var r = PoolRecord(name: name, stack: stack, size: size)
        r.config = j["config"]?.array.compactMap(\.string) ?? []
        r.with = j["with"].flatMap { $0 == .null ? nil : $0.array.compactMap(\.string) }
        r.agent = j["agent"]?.string
        r.files = (j["files"]?.object ?? [:]).compactMapValues(\.string)
        r.fromSpec = j["fromSpec"]?.bool
        return r
    }

    /// Every pool recorded on this host, by name.
    public static func all(_ ctx: SoContext) throws -> [PoolRecord] {
        let dir = directory(ctx)
        guard ctx.fs.isDirectory(dir) else { return [] }
        return try ctx.fs.list(dir).filter { $0.hasSuffix(".json") }.sorted().compactMap {
            try load(ctx, String($0.dropLast(5)))
        }
    }

    /// A stack as pools record and compare it: a path absolute and real (`~` expanded), so `so up ../stack` run
    /// elsewhere finds the pool `so pool create ./stack` made, and a refill (which runs in no particular directory)
    /// finds its stack; a built-in stack's name as it is.
    static func stackKey(_ ctx: SoContext, _ value: String) -> String {
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

    /// The files that changed since the pool was made (none: its members are still what the stack makes).
    func changed(_ stack: ResolvedStack, fs: FileSystem) throws -> [String] {
        guard !files.isEmpty else { return [] }  // a record made before pools recorded their stack's files
        let now = try Self.fingerprint(stack, fs: fs)
        return Set(now.keys).union(files.keys).filter { now[$0] != files[$0] }.sorted()
    }

    func save(_ ctx: SoContext) throws {
        try ctx.fs.createDirectory(Self.directory(ctx))
        try AtomicWrite.text(JSONWriter.encode(self, .pretty) + "\n", to: try Self.path(ctx, name), fs: ctx.fs)
    }
}
