import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// The deployment's record in the cluster, on a real API server: two `$SO_HOME`s on one machine stand for two
/// machines. What one makes, the other reads, changes and removes; a directory that fell behind is refused; two
/// starts at once never both win; a start killed mid-way is named and taken over; a rollback answers with the
/// old value through Traefik.
@Suite(.serialized, RealNode.required)
struct RecordE2ETests {
    static func name(_ prefix: String) -> String {
        "\(prefix)-\(UInt32.random(in: 0...UInt32.max) % 100_000)"
    }

    /// What `web` serves, read in its container.
    static func served(_ name: String, home: String, in t: TempDir) async throws -> String {
        let r = try await E2E.so(
            ["deployment", "--name", name, "exec", "web", "--", "cat", "/www/index.html"], cwd: t.path,
            env: ["SO_HOME": home, "SO_KUBECONFIG": E2E.kubeconfig!])
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func setValue(_ dir: String, _ value: String) throws {
        let fs = LocalFileSystem()
        let path = Path.join(dir, "config.env")
        let kept = try fs.readText(path).split(separator: "\n").filter { !$0.hasPrefix("VALUE=") }
        try fs.writeText(kept.joined(separator: "\n") + "\nVALUE=\(value)\n", to: path)
    }

    static func revisions(_ name: String, home: String, in t: TempDir) async throws -> [[String: Any]] {
        let r = try await E2E.so(
            ["deployment", "--name", name, "history", "-o", "json"], cwd: t.path,
            env: ["SO_HOME": home, "SO_KUBECONFIG": E2E.kubeconfig!])
        return (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [[String: Any]] ?? []
    }

    @Test func twoHomesShareOneDeploymentThroughItsRecord() async throws {
        let t = try TempDir("so-e2e-record")
        defer { t.cleanup() }
        let name = Self.name("rec")
        let (homeA, homeB) = (t.file("home-a"), t.file("home-b"))
        let envA = ["SO_HOME": homeA, "SO_KUBECONFIG": E2E.kubeconfig!]
        let envB = ["SO_HOME": homeB, "SO_KUBECONFIG": E2E.kubeconfig!]
        let (dirA, dirB) = (Path.join(homeA, "deployments/\(name)"), Path.join(homeB, "deployments/\(name)"))
        func so(_ args: [String], _ env: [String: String]) async throws -> ProcessResult {
            try await E2E.so(args, cwd: t.path, env: env)
        }
        do { try await body() } catch {
            _ = try? await so(["down", name, "--discard", "--timeout", "60"], envB)
            throw error
        }
        func body() async throws {
            var r = try await so(["up", Path.join(RealNode.stacks, "routes"), "--name", name], envA)
            #expect(r.exitCode == 0, "\(r.stderr)")

            // B has no directory: every verb makes it from the record, and says so.
            r = try await so(["deployment", "--name", name, "status"], envB)
            #expect(r.exitCode == 0 && r.stdout.contains(": ready"), "\(r.stdout)\(r.stderr)")
            #expect(
                r.stderr.contains("made \(dirB) from the cluster's record of \(name) (revision 1, up by "),
                "\(r.stderr)")
            #expect(try await Self.served(name, home: homeB, in: t) == "web one")

            // B changes it: revision 2, and what runs is B's.
            try Self.setValue(dirB, "two")
            r = try await so(["deployment", "--name", name, "start", "--progress", "plain"], envB)
            #expect(r.exitCode == 0, "\(r.stderr)")
            #expect(try await Self.served(name, home: homeA, in: t) == "web two")

            // A fell behind: refused before anything is applied, naming who wrote what.
            r = try await so(["deployment", "--name", name, "start"], envA)
            #expect(r.exitCode != 0)
            #expect(
                r.stderr.contains("is out of step with") && r.stderr.contains("revision 2 was written by"),
                "\(r.stderr)")
            #expect(try await Self.served(name, home: homeA, in: t) == "web two")
            r = try await so(["deployment", "--name", name, "pull"], envA)
            #expect(r.exitCode == 0 && r.stdout.contains("pulled revision 2"), "\(r.stdout)\(r.stderr)")
            r = try await so(["deployment", "--name", name, "start"], envA)
            #expect(r.exitCode == 0, "\(r.stderr)")
            #expect(try await Self.revisions(name, home: homeA, in: t).count == 2)

            // Two homes start different changes at once: one wins, the other is refused (it waited for the Lease,
            // then found the record moved on); what runs is the winner's, and nothing interleaved.
            try Self.setValue(dirA, "three-a")
            try Self.setValue(dirB, "three-b")
            async let startA = so(["deployment", "--name", name, "start", "--timeout", "120"], envA)
            async let startB = so(["deployment", "--name", name, "start", "--timeout", "120"], envB)
            let (a, b) = try await (startA, startB)
            #expect([a.exitCode, b.exitCode].filter { $0 == 0 }.count == 1, "A: \(a.stderr) B: \(b.stderr)")
            let loser = a.exitCode == 0 ? b : a
            #expect(loser.stderr.contains("is out of step with"), "\(loser.stderr)")
            let winner = a.exitCode == 0 ? "three-a" : "three-b"
            #expect(try await Self.served(name, home: homeA, in: t) == "web \(winner)")
            let revs = try await Self.revisions(name, home: homeA, in: t)
            #expect(revs.map { $0["revision"] as? Int } == [1, 2, 3] && revs.last?["result"] as? String == "started")

            // A start killed once its revision is written: the next start says so and succeeds.
            let home = a.exitCode == 0 ? homeA : homeB
            let dir = Path.join(home, "deployments/\(name)")
            try Self.setValue(dir, "four")
            let killed = Process()
            killed.executableURL = URL(fileURLWithPath: E2E.binary)
            killed.arguments = ["deployment", "--name", name, "start", "--timeout", "120"]
            killed.environment = ProcessInfo.processInfo.environment.merging([
                "SO_HOME": home, "SO_KUBECONFIG": E2E.kubeconfig!,
            ]) { $1 }
            killed.standardOutput = FileHandle.nullDevice
            killed.standardError = FileHandle.nullDevice
            try killed.run()
            let began = Date()
            var written = false
            while Date().timeIntervalSince(began) < 30 && !written {
                let s = try await E2E.kubectl(["-n", name, "get", "secrets", "-o", "name"])
                written = s.stdout.contains(".v4")
                if !written { try await Task.sleep(nanoseconds: 20_000_000) }
            }
            kill(killed.processIdentifier, SIGKILL)
            killed.waitUntilExit()
            #expect(written, "the killed start never wrote revision 4")
            r = try await so(
                ["deployment", "--name", name, "start", "--timeout", "120"],
                ["SO_HOME": home, "SO_KUBECONFIG": E2E.kubeconfig!])
            #expect(r.exitCode == 0, "\(r.stderr)")
            let after = try await Self.revisions(name, home: home, in: t)
            // Killed before its result was set: revision 4 reads as interrupted, or (killed after) as started; the
            // start that followed changed nothing more (the same files), so it wrote nothing.
            #expect(after.count == 4, "\(after)")
            if after.last?["result"] as? String != "started" {
                #expect(r.stderr.contains("did not finish"), "\(r.stderr)")
            }
            #expect(try await Self.served(name, home: home, in: t) == "web four")

            // B removes it, with its directory; the cluster holds nothing of it.
            r = try await so(["down", name, "--discard", "--timeout", "60"], envB)
            #expect(r.exitCode == 0, "\(r.stderr)")
            // Its namespace is gone or going (down does not wait for the namespace's own deletion).
            let phase = try await E2E.kubectl(["get", "namespace", name, "-o", "jsonpath={.status.phase}"])
            #expect(phase.exitCode != 0 || phase.stdout == "Terminating", "\(phase.stdout)")
            #expect(!LocalFileSystem().exists(dirB))
        }
    }

    /// `rollback` returns when the old version answers, through the ingress controller.
    @Test(.enabled(if: Traefik.enabled, "SO_E2E_TRAEFIK=1 is not set: no Traefik to ask"))
    func aRollbackAnswersWithTheOldValueThroughTraefik() async throws {
        let t = try TempDir("so-e2e-rollback")
        defer { t.cleanup() }
        let web = "\(Self.name("rollback")).so-e2e.test"
        try await Traefik.create("dep", in: t, spec: Traefik.spec(web: web, api: "api-" + web, value: "one"))
        try await RealNode.removing(t) {
            var (r, _) = try await Traefik.start("dep", in: t)
            #expect(r.exitCode == 0, "\(r.stderr)")
            #expect(try await Traefik.fresh(web).body == "web one")
            try Self.setValue(t.file("dep"), "two")
            (r, _) = try await Traefik.start("dep", in: t)
            #expect(r.exitCode == 0, "\(r.stderr)")
            #expect(try await Traefik.fresh(web).body == "web two")
            r = try await E2E.so(
                ["deployment", "--dir", "dep", "rollback", "--timeout", "180"] + RealNode.kc, cwd: t.path)
            #expect(r.exitCode == 0, "\(r.stderr)")
            // Right after it returns, the old value is what answers.
            #expect(try await Traefik.fresh(web).body == "web one")
            r = try await E2E.so(["deployment", "--dir", "dep", "history", "-o", "json"] + RealNode.kc, cwd: t.path)
            let revs = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [[String: Any]] ?? []
            #expect(revs.map { $0["verb"] as? String } == ["start", "start", "rollback"], "\(r.stdout)")
        }
    }
}
