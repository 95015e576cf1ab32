import Foundation
import SoActions
import SoBasics
import SoCompose
import SoDeploy
import SoKube
import SoStack
import SoSystem

/// A context over the real file system rooted at a temp dir, with fakes for everything else.
public struct Harness: Sendable {
    public let tmp: TempDir
    public let console = CapturedConsole()
    public let processes = FakeProcessRunner()
    public let ctx: SoContext

    public init(environment: [String: String] = [:], kindClusters: String? = nil) throws {
        tmp = try TempDir("so-actions")
        if let kindClusters {
            processes.expect(["kind", "get", "clusters"], stdout: kindClusters)
        } else {
            processes.missing = ["kind"]
        }
        // Hermetic: the user's kubeconfig is a file of this temp dir (absent unless a test writes it).
        var environment = environment
        if environment["KUBECONFIG"] == nil { environment["KUBECONFIG"] = tmp.file("user-kubeconfig") }
        // And its own $SO_HOME: what a start remembers (`record-trust`) and `--name`'s directories stay in the temp dir,
        // never the user's ~/.so, where tests at once pushed each other's revisions out of the list kept.
        if environment["SO_HOME"] == nil { environment["SO_HOME"] = tmp.file("so-home") }
        var ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: tmp.path), processes: processes, clock: FixedClock(),
            entropy: SeededEntropy(),
            console: console, environment: environment, builtInRoot: RepoPaths.root)
        ctx.renewsLocks = false
        ctx.hostLocks = FileHostLocks(directory: tmp.path)
        self.ctx = ctx
    }

    public var fs: LocalFileSystem { LocalFileSystem() }
    public func path(_ rel: String) -> String { tmp.file(rel) }
    public func read(_ rel: String) throws -> String { try tmp.read(rel) }

    /// Everything under the temp dir, for "nothing was left behind" checks.
    public func listing() throws -> [String] { try fs.walk(tmp.path).map(\.relative) }

    /// The repository's own stacks in laconic's layout (Tests/Fixtures/laconic-repo/stack-orchestrator).
    public static var laconic: String { RepoPaths.laconicFixtures }
    public static func laconicStack(_ name: String) -> String { RepoPaths.laconicFixture(name) }
    /// The stack directory as `so` records it (symlinks resolved).
    public static func laconicStackReal(_ name: String) -> String { LocalFileSystem().realpath(laconicStack(name)) }
}

extension Harness {
    /// init + create of a stack into `dir`, with extra spec text appended before create.
    @discardableResult
    public func initAndCreate(_ stack: String, dir: String = "dep", config: [String] = [], appendToSpec: String = "")
        async throws -> CreateResult
    {
        try await InitAction(ctx).run(InitRequest(stack: stack, config: config, output: "spec.yml", force: true))
        if !appendToSpec.isEmpty { try tmp.write("spec.yml", try read("spec.yml") + appendToSpec) }
        return try await CreateAction(ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: dir))
    }
}
