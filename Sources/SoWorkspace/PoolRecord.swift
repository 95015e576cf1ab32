import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube

/// A warm pool as `so pool create` records it (`$SO_HOME/pools/NAME.json`): the stack its members are made of,
/// with which `--config`, `--with` and `--agent`, and how many to keep warm.
public struct PoolRecord: Sendable, Equatable, Encodable {
    public var name: String
    public var stack: String
    public var size: Int
    public var config: [String] = []
    public var with: [String]?
    public var agent: String?

    public init(name: String, stack: String, size: Int) {
        self.name = name
        self.stack = stack
        self.size = size
    }

    static func directory(_ ctx: SoContext) -> String { Path.join(ctx.soHome, "pools") }
    static func path(_ ctx: SoContext, _ name: String) -> String { Path.join(directory(ctx), "\(name).json") }

    public static func load(_ ctx: SoContext, _ name: String) throws -> PoolRecord? {
        let path = path(ctx, name)
        guard ctx.fs.isFile(path) else { return nil }
        let j = try JSON.parse(Data(try ctx.fs.readText(path).utf8))
        guard let stack = j["stack"]?.string, let size = j["size"]?.int else {
            throw SoError("\(path) is not a pool record", hint: "remove it: so pool remove \(name)")
        }
        var r = PoolRecord(name: name, stack: stack, size: size)
        r.config = j["config"]?.array.compactMap(\.string) ?? []
        r.with = j["with"].flatMap { $0 == .null ? nil : $0.array.compactMap(\.string) }
        r.agent = j["agent"]?.string
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

    func save(_ ctx: SoContext) throws {
        try ctx.fs.createDirectory(Self.directory(ctx))
        try AtomicWrite.text(JSONWriter.encode(self, .pretty) + "\n", to: Self.path(ctx, name), fs: ctx.fs)
    }
}
