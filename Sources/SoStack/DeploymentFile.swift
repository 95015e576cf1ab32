import Foundation
import SoBasics

/// `deployment.yml`: the identity of a deployment directory (reference §3.5).
public struct DeploymentFile: Sendable, Equatable {
    public var clusterID: String
    public var deploymentID: String
    public var stackSource: String?
    /// The stack's repositories (`$SO_REPO_BASE_DIR` at create), recorded when a compose file binds a host
    /// path under it (mounted with no spec entry, as laconic-so does); absent: `~/cerc`.
    public var repoBaseDir: String?

    public init(clusterID: String, deploymentID: String, stackSource: String?, repoBaseDir: String? = nil) {
        self.repoBaseDir = repoBaseDir
        self.clusterID = clusterID
        self.deploymentID = deploymentID
        self.stackSource = stackSource
    }

    public func yaml() -> String {
        var pairs: [(String, YValue)] = [("cluster-id", .string(clusterID)), ("deployment-id", .string(deploymentID))]
        if let stackSource { pairs.append(("stack-source", .string(stackSource))) }
        if let repoBaseDir { pairs.append(("repo-base-dir", .string(repoBaseDir))) }
        return YValue.map(pairs).yaml()
    }

    public static func load(_ path: String, fs: FileSystem, diagnostics: DiagnosticSink) throws -> DeploymentFile {
        guard let root = try YAMLFile.load(path, fs: fs, what: "deployment file") else {
            throw SoError(
                "deployment.yml is empty", hint: "restore it from a backup; it holds the deployment's identity",
                at: SourceLocation(file: path))
        }
        let m = try root.mapping("deployment.yml")
        let cluster = try m.required("cluster-id").string("'cluster-id'")
        // Older laconic-so files have only cluster-id; it doubles as the deployment id.
        let deployment = try m.string("deployment-id") ?? cluster
        let source = try m.string("stack-source")
        let repos = try m.string("repo-base-dir")
        m.finish(into: diagnostics)
        return DeploymentFile(clusterID: cluster, deploymentID: deployment, stackSource: source, repoBaseDir: repos)
    }

    /// laconic-so's id shape: `laconic-` + base36 tenths of a second since 2024-01-01 (7 chars) + 3 random base36 chars.
    /// Sorts by time and is a valid DNS-1123 label. Two `deploy create`s in the same tenth of a second (CI jobs, or tests,
    /// started together) share a namespace once in 46,656 (with 2 random chars it was once in 1,296, and an e2e run met it).
    public static func makeID(now: Date, entropy: Entropy) -> String {
        let epoch = Date(timeIntervalSince1970: 1_704_067_200)  // 2024-01-01T00:00:00Z
        let tenths = max(0, Int64((now.timeIntervalSince(epoch) * 10).rounded(.down)))
        var time = String(tenths, radix: 36)
        if time.count < 7 { time = String(repeating: "0", count: 7 - time.count) + time }
        let alphabet = Array("0123456789abcdefghijklmnopqrstuvwxyz")
        var rand = ""
        while rand.count < 3 {
            for b in entropy.bytes(3 - rand.count) where b < 252 { rand.append(alphabet[Int(b) % 36]) }
        }
        return "laconic-" + time + rand
    }
}
