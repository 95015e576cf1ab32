import Foundation
import SoBasics
import SoTestSupport
import Testing

/// Two writers on one deployment never interleave, on a real API server: `start` (with a changed value)
/// racing `stop` leaves the deployment wholly up or wholly stopped, and a rotation that exits 0 is never
/// undone by a start that read the old values (before the Lease covered every writer: 1 race in 6 left a
/// Deployment without its Services; 3 rotations in 4 were undone).
@Suite(
    .serialized,
    RealNode.required
)
struct WriterRaceE2ETests {
    /// How many Deployments and Services the deployment has on the cluster.
    static func counts(_ id: String) async throws -> (deployments: Int, services: Int) {
        func count(_ kind: String) async throws -> Int {
            let r = try await E2E.kubectl(["-n", id, "get", kind, "-l", "app=\(id)", "-o", "name"])
            return r.stdout.split(separator: "\n").count
        }
        return (try await count("deployments"), try await count("services"))
    }

    static func setRound(_ t: TempDir, _ round: Int) throws {
        let env = try t.read("dep/config.env").split(separator: "\n").filter { !$0.hasPrefix("ROUND=") }.joined(
            separator: "\n")
        try t.write("dep/config.env", env + "\nROUND=\(round)\n")
    }

    @Test func startRacingStopLeavesTheDeploymentWhollyUpOrWhollyStopped() async throws {
        let t = try TempDir("so-e2e-race-stop")
        defer { t.cleanup() }
        let id = try await RealNode.deploy("names", in: t, appendToSpec: "config:\n  ROUND: '0'\n")
        let dep = ["deployment", "--dir", "dep"]
        try await RealNode.removing(t) {
            var r = try await E2E.so(dep + ["start", "--no-wait"] + RealNode.kc, cwd: t.path)
            #expect(r.exitCode == 0, "\(r.stderr)")
            let up = try await Self.counts(id)
            #expect(up.deployments == 3 && up.services == 3, "\(up)")
            var outcomes: [String] = []
            for round in 1...6 {
                if try await Self.counts(id).deployments == 0 {
                    r = try await E2E.so(dep + ["start", "--no-wait"] + RealNode.kc, cwd: t.path)
                    #expect(r.exitCode == 0, "\(r.stderr)")
                }
                try Self.setRound(t, round)
                async let start = E2E.so(dep + ["start", "--no-wait", "--timeout", "120"] + RealNode.kc, cwd: t.path)
                async let stop = E2E.so(dep + ["stop", "--timeout", "120"] + RealNode.kc, cwd: t.path)
                let (started, stopped) = try await (start, stop)
                #expect(
                    started.exitCode == 0 && stopped.exitCode == 0,
                    "round \(round): start \(started.stderr) stop \(stopped.stderr)")
                let now = try await Self.counts(id)
                let whole = now == up ? "up" : now == (0, 0) ? "stopped" : "partial \(now)"
                outcomes.append(whole)
                #expect(whole == "up" || whole == "stopped", "round \(round): \(whole)")
            }
            print("start racing stop, 6 rounds: \(outcomes.joined(separator: ", "))")
        }
    }

    @Test func aRotationThatExitsZeroIsNeverUndoneByARacingStart() async throws {
        let t = try TempDir("so-e2e-race-rotate")
        defer { t.cleanup() }
        let id = try await RealNode.deploy(
            "names", in: t, appendToSpec: "config:\n  PIN: $generate:hex:8$\n  ROUND: '0'\n")
        let dep = ["deployment", "--dir", "dep"]
        try await RealNode.removing(t) {
            var r = try await E2E.so(dep + ["start", "--timeout", "120"] + RealNode.kc, cwd: t.path)
            #expect(r.exitCode == 0, "\(r.stderr)")
            // The stored value, compared but never printed.
            func pin() async throws -> String {
                try await E2E.kubectl([
                    "-n", id, "get", "secret", "\(id)-generated-secrets", "-o", "jsonpath={.data.PIN}",
                ]).stdout
            }
            var rotations = 0
            for round in 1...4 {
                let before = try await pin()
                try Self.setRound(t, round)
                async let start = E2E.so(dep + ["start", "--timeout", "120"] + RealNode.kc, cwd: t.path)
                async let rotate = E2E.so(
                    dep + ["rotate-secrets", "PIN", "--timeout", "120"] + RealNode.kc, cwd: t.path)
                let (started, rotated) = try await (start, rotate)
                #expect(started.exitCode == 0, "round \(round): start \(started.stderr)")
                r = rotated
                guard rotated.exitCode == 0 else {
                    Issue.record("round \(round): rotate-secrets failed: \(rotated.stderr)")
                    continue
                }
                rotations += 1
                let after = try await pin()
                #expect(!after.isEmpty && after != before, "round \(round): the rotation was undone")
            }
            #expect(rotations == 4)
        }
    }
}
