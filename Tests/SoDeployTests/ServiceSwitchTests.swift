import Foundation
import SoBasics
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// A compose service that loses (or gains) all its ports switches its Service between a cluster IP and
/// headless, which the API server refuses in place: start deletes it first, then applies.
@Suite struct ServiceSwitchTests {
    @Test func aServiceSwitchingToHeadlessIsReplaced() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        #expect(c.cluster.object("Service", "web", namespace: c.id)?.at("spec", "clusterIP") == nil)
        // web loses its ports (compose and the spec's network.ports): it answers to its name headless.
        try c.h.tmp.write(
            "dep/spec.yml",
            try c.h.read("dep/spec.yml").replacingOccurrences(
                of: "network:\n  ports:\n    web:\n      - '80'\n", with: ""))
        let compose = try c.h.read("dep/compose/docker-compose-example.yml")
        try c.h.tmp.write(
            "dep/compose/docker-compose-example.yml",
            compose.replacingOccurrences(of: "    ports:\n      - \"80\"\n", with: ""))
        #expect(try c.h.read("dep/compose/docker-compose-example.yml") != compose)
        let before = c.cluster.calls.count
        _ = try await c.start()
        let calls = Array(c.cluster.calls.dropFirst(before))
        let delete = try #require(calls.firstIndex(of: "delete Service \(c.id)/web"), "\(calls)")
        let apply = try #require(calls.firstIndex { $0.hasPrefix("apply Service") && $0.hasSuffix("/web") }, "\(calls)")
        #expect(delete < apply)
        #expect(c.cluster.object("Service", "web", namespace: c.id)?.at("spec", "clusterIP")?.string == "None")
        // Nothing changes on the next start: nothing is deleted.
        let again = c.cluster.calls.count
        _ = try await c.start()
        #expect(!c.cluster.calls.dropFirst(again).contains { $0.hasPrefix("delete Service") })
    }
}
