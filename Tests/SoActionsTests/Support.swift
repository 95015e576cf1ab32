import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoKube
import SoSystem
import SoTestSupport
import SoWorkspace

/// A context over the real file system rooted at a temp dir, with fakes for everything else.
struct Harness {
    let tmp: TempDir
    let console = CapturedConsole()
    let processes = FakeProcessRunner()
    let ctx: SoContext

    init(environment: [String: String] = [:], kindClusters: String? = nil) throws {
        tmp = try TempDir("so-actions")
        if let kindClusters {
            processes.expect(["kind", "get", "clusters"], stdout: kindClusters)
        } else {
            processes.missing = ["kind"]
        }
        // Hermetic: the user's kubeconfig is a file of this temp dir (absent unless a test writes it).
        var environment = environment
        if environment["KUBECONFIG"] == nil { environment["KUBECONFIG"] = tmp.file("user-kubeconfig") }
        var ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: tmp.path), processes: processes, clock: FixedClock(),
            entropy: SeededEntropy(),
            console: console, environment: environment, builtInRoot: RepoPaths.root)
        ctx.renewsLocks = false
        ctx.hostLocks = FileHostLocks(directory: tmp.path)
        self.ctx = ctx
    }

    var fs: LocalFileSystem { LocalFileSystem() }
    func path(_ rel: String) -> String { tmp.file(rel) }
    func read(_ rel: String) throws -> String { try tmp.read(rel) }

    /// Everything under the temp dir, for "nothing was left behind" checks.
    func listing() throws -> [String] { try fs.walk(tmp.path).map(\.relative) }

    /// The repository's own stacks in laconic's layout (Tests/Fixtures/laconic-repo/stack-orchestrator).
    static var laconic: String { RepoPaths.laconicFixtures }
    static func laconicStack(_ name: String) -> String { RepoPaths.laconicFixture(name) }
    /// The stack directory as `so` records it (symlinks resolved).
    static func laconicStackReal(_ name: String) -> String { LocalFileSystem().realpath(laconicStack(name)) }
}

/// A workspace's agent pod as the fake cluster shows it once its container runs.
enum AgentPod {
    static func running(id: String, namespace: String, name: String? = nil) -> KubeObject {
        KubeObject(
            apiVersion: "v1", kind: "Pod", name: name ?? "\(id)-agent-abc", namespace: namespace, labels: [("app", id)],
            body: [
                ("spec", .map([("containers", .list([.map([("name", .string("agent"))])]))])),
                (
                    "status",
                    .map([
                        ("phase", .string("Running")),
                        (
                            "containerStatuses",
                            .list([.map([("name", .string("agent")), ("state", .map([("running", .map([]))]))])])
                        ),
                    ])
                ),
            ])
    }
}
