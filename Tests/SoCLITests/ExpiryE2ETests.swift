import Foundation
import SoBasics
import SoTestSupport
import Testing

/// A ttl taken away on a real API server: a re-start that changed nothing renewed `expires-at` with a merge
/// patch (another field manager then owns it), and the server-side apply of the next start, which leaves it
/// out, would keep it. The start removes it by name, so `cleanup --expired` never takes a deployment meant
/// to stay.
@Suite(
    .serialized,
    RealNode.required
)
struct ExpiryE2ETests {
    @Test func aTTLTakenAwayLeavesNoExpiry() async throws {
        let t = try TempDir("so-e2e-expiry")
        defer { t.cleanup() }
        let id = try await RealNode.deploy("names", in: t)
        let dep = ["deployment", "--dir", "dep"]
        func expiry() async throws -> String {
            try await E2E.kubectl([
                "get", "namespace", id, "-o", "jsonpath={.metadata.annotations.so\\.dev/expires-at}",
            ]).stdout
        }
        try await RealNode.removing(t) {
            for (ttl, what) in [
                (["--ttl", "2h"], "with a ttl"), (["--ttl", "2h"], "the same again: only renewed"),
                ([], "without a ttl"),
            ] {
                // A second later: a new started-at, so the unchanged re-start renews the annotations.
                try await Task.sleep(nanoseconds: 1_100_000_000)
                let r = try await E2E.so(dep + ["start", "--no-wait"] + ttl + RealNode.kc, cwd: t.path)
                #expect(r.exitCode == 0, "\(what): \(r.stderr)")
                if what == "with a ttl" { #expect(!(try await expiry()).isEmpty) }
            }
            #expect(try await expiry() == "", "the ttl was taken away")
        }
    }
}
