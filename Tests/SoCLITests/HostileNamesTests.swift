import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoCLI
import SoDeploy
import SoSystem
import SoTestSupport
import SoWorkspace
import Testing

/// Names and paths a user gives are hostile: every verb that deletes refuses them with exit 64 before the
/// cluster is contacted, and nothing outside what `so` made is touched.
@Suite struct HostileNamesTests {
    /// A home with `$SO_HOME` holding another deployment, files that are not `so`'s, a directory outside, and
    /// `$SO_HOME/deployments/evil`, a symlink to that outside directory (which even holds a deployment.yml).
    struct Home {
        let t: TempDir
        let sentinels: [String]
        var env: [String: String] {
            ["SO_HOME": t.file("home/.so"), "HOME": t.file("home"), "KUBECONFIG": t.file("no-kubeconfig")]
        }

        init() throws {
            t = try TempDir("so-hostile")
            try t.write("home/.so/deployments/keep/deployment.yml", "cluster-id: laconic-keep\ndeployment-id: keep\n")
            try t.write("home/.so/notes.txt", "not so's\n")
            try t.write("home/precious.txt", "the user's\n")
            try t.write("outside/dir/deployment.yml", "cluster-id: evil\ndeployment-id: evil\n")
            try t.write("outside/dir/data.txt", "elsewhere\n")
            guard symlink(t.file("outside/dir"), t.file("home/.so/deployments/evil")) == 0 else {
                throw SoError("symlink failed")
            }
            sentinels = [
                "home/.so/deployments/keep/deployment.yml", "home/.so/notes.txt", "home/precious.txt",
                "outside/dir/deployment.yml", "outside/dir/data.txt", "home/.so/deployments/evil",
            ]
        }

        func run(_ args: [String], connected: Counter) async -> CLIRun {
            let console = CapturedConsole()
            let processes = FakeProcessRunner()
            processes.missing = ["kind"]
            let ctx = SoContext(
                fs: LocalFileSystem(currentDirectory: t.file("home/.so/deployments")), processes: processes,
                clock: FixedClock(),
                entropy: SeededEntropy(), console: console, environment: env, builtInRoot: RepoPaths.root,
                connect: { _ in
                    connected.bump()
                    throw SoError("a cluster was contacted")
                })
            return CLIRun(code: await SoCommandLine.execute(args, context: ctx), console: console)
        }

        func intact() -> [String] { sentinels.filter { !t.exists($0) } }
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func bump() {
            lock.lock()
            n += 1
            lock.unlock()
        }
        var count: Int {
            lock.lock()
            defer { lock.unlock() }
            return n
        }
    }

    static let hostile = ["..", ".", "", "/abs", "a/../..", "~", "../..", "deployments/keep", "Keep", "-rf"]

    @Test func everyDeletingVerbRefusesHostileNames() async throws {
        let home = try Home()
        defer { home.t.cleanup() }
        let outside = home.t.file("outside/dir")
        var lines: [[String]] = []
        for name in Self.hostile + [outside] {
            lines.append(["down", name])
            lines.append(["down", name, "--discard"])
            lines.append(["down", "--dry-run", name])
            lines.append(["deployment", "--name", name, "stop", "--delete-volumes", "--delete-namespace"])
            lines.append(["deployment", "--name", name, "stop", "--delete-volumes", "--discard"])
            lines.append(["up", "example", "--name", name])
        }
        for args in lines {
            let connected = Counter()
            let r = await home.run(args, connected: connected)
            #expect(r.code == 64, "\(args): exit \(r.code) \(r.stderr)")
            #expect(r.stderr.hasPrefix("error: "), "\(args): \(r.stderr)")
            #expect(connected.count == 0, "\(args) contacted the cluster")
            #expect(home.intact().isEmpty, "\(args) removed \(home.intact())")
        }
    }

    @Test func aDeploymentDirectoryThatIsASymlinkIsNeverFollowed() async throws {
        let home = try Home()
        defer { home.t.cleanup() }
        for args in [["down", "evil"], ["down", "evil", "--discard"]] {
            let connected = Counter()
            let r = await home.run(args, connected: connected)
            #expect(r.code == 64, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("refusing to remove") && r.stderr.contains("symlink"), "\(r.stderr)")
            #expect(connected.count == 0)
            #expect(home.intact().isEmpty)
        }
    }

    @Test func stopOfTheRootDirectoryDeletesNothing() async throws {
        let home = try Home()
        defer { home.t.cleanup() }
        for args in [
            ["deployment", "--dir", "/", "stop", "--delete-volumes", "--delete-namespace"],
            ["deployment", "--dir", home.t.file("home"), "stop", "--delete-volumes", "--delete-namespace"],
            [
                "deployment", "--dir", home.t.file("home/.so/deployments"), "stop", "--delete-volumes",
                "--delete-namespace",
            ],
        ] {
            let connected = Counter()
            let r = await home.run(args, connected: connected)
            #expect(r.code != 0, "\(args)")
            #expect(r.stderr.contains("deployment"), "\(r.stderr)")
            #expect(connected.count == 0, "\(args) contacted the cluster")
            #expect(home.intact().isEmpty)
        }
    }
}

/// Every recursive delete goes through `removeOwnedTree` (SoBasics/Deletion.swift), which checks what it
/// removes: no other source file calls the unchecked primitive.
@Suite struct OneRecursiveDeleteTests {
    @Test func onlyRemoveOwnedTreeCallsRemoveTree() throws {
        let fs = LocalFileSystem()
        let sources = Path.join(RepoPaths.root, "Sources")
        var callers: [String] = []
        for f in try fs.walk(sources) where f.relative.hasSuffix(".swift") && !f.relative.hasPrefix("SoTestSupport/") {
            let text = try fs.readText(Path.join(sources, f.relative))
            for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("removeTree(") {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("///") || code.hasPrefix("//") || code.hasPrefix("func removeTree(")
                    || code.hasPrefix("public func removeTree(")
                {
                    continue
                }
                callers.append("\(f.relative):\(i + 1)")
            }
        }
        #expect(callers.count == 1 && callers.first?.hasPrefix("SoBasics/Deletion.swift:") == true, "\(callers)")
        // And no FileManager removal outside the file system seam.
        for f in try fs.walk(sources)
        where f.relative.hasSuffix(".swift") && f.relative != "SoSystem/LocalFileSystem.swift"
            && !f.relative.hasPrefix("SoTestSupport/")
        {
            #expect(!(try fs.readText(Path.join(sources, f.relative))).contains("removeItem("), "\(f.relative)")
        }
    }
}
