import Foundation
import SoBasics
import SoTestSupport
import Testing

/// Compose parity on a node whose pods run: the API server accepts every combination of limits and
/// reservations `so` renders, and a version-1 file with a link alias and volumes_from starts and works.
@Suite(
    .serialized,
    RealNode.required
)
struct ComposeParityE2ETests {
    /// A quantity in CPUs or bytes, as the API server writes it back.
    static func value(_ q: String) -> Double {
        let units: [(String, Double)] = [
            ("m", 0.001), ("Ki", 1024), ("Mi", 1_048_576), ("Gi", 1_073_741_824), ("k", 1e3), ("M", 1e6), ("G", 1e9),
        ]
        for (u, f) in units where q.hasSuffix(u) { return (Double(q.dropLast(u.count)) ?? -1) * f }
        return Double(q) ?? -1
    }

    @Test func theAPIServerAcceptsEveryLimitAndReservationCombination() async throws {
        let t = try TempDir("so-e2e-resources")
        defer { t.cleanup() }
        let id = try await RealNode.deploy("resources", in: t)
        try await RealNode.removing(t) {
            let r = try await E2E.so(
                ["deployment", "--dir", "dep", "start", "--timeout", "180", "--progress", "plain"] + RealNode.kc,
                cwd: t.path)
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            // What the server stored: every request at or under its limit, every limit given kept.
            let got = try await E2E.kubectl([
                "-n", id, "get", "deployments", "-o",
                "jsonpath={range .items[*]}{.metadata.name}{' '}{.spec.template.spec.containers[0].resources.requests.cpu}{' '}"
                    + "{.spec.template.spec.containers[0].resources.limits.cpu}{' '}{.spec.template.spec.containers[0].resources.requests.memory}{' '}"
                    + "{.spec.template.spec.containers[0].resources.limits.memory}{'\\n'}{end}",
            ])
            let rows = got.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            #expect(rows.count == 7, "\(got.stdout) \(got.stderr)")
            for row in rows where row.count == 5 {
                #expect(Self.value(row[1]) <= Self.value(row[2]) && Self.value(row[3]) <= Self.value(row[4]), "\(row)")
            }
            let memoryLimit = rows.first { $0.first?.contains("-memory-limit") == true }
            #expect(memoryLimit?[3] == "50Mi" && memoryLimit?[4] == "50Mi", "\(String(describing: memoryLimit))")
            // And a server-side dry run of the rendered objects, as kubectl users check manifests.
            let rendered = try await E2E.so(["deployment", "--dir", "dep", "render"], cwd: t.path)
            try t.write("rendered.yaml", rendered.stdout)
            let dry = try await E2E.kubectl([
                "apply", "--dry-run=server", "--server-side", "--field-manager", "so-e2e", "-f",
                t.file("rendered.yaml"),
            ])
            #expect(dry.exitCode == 0, "\(dry.stdout)\n\(dry.stderr)")
        }
    }

    @Test func aVersion1FileStartsWithItsLinkAliasAndVolumesFrom() async throws {
        let t = try TempDir("so-e2e-legacy-v1")
        defer { t.cleanup() }
        _ = try await RealNode.deploy("legacy-v1", in: t)
        try await RealNode.removing(t) {
            var r = try await E2E.so(
                ["deployment", "--dir", "dep", "start", "--timeout", "180", "--progress", "plain"] + RealNode.kc,
                cwd: t.path)
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            let seen = try await RealNode.log(
                of: "client", in: t, until: "got hello-from-v1 file hello-from-v1", tail: 3)
            #expect(seen.contains("got hello-from-v1 file hello-from-v1"), "client's log: \(seen)")
            r = try await E2E.so(["deployment", "--dir", "dep", "render", "--report"], cwd: t.path)
            #expect(r.stdout.contains("(layout)") && r.stdout.contains("Service 'frontend' like 'web'"), "\(r.stdout)")
        }
    }
}
