import Foundation
import SoBasics
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// What a first start and a re-start of the example cost in API requests (the fake cluster counts
/// them). A re-start that changes nothing must stay a handful of requests: that is what keeps it
/// well over 10× faster than laconic-so's.
@Suite struct RequestCountTests {
    static func counts(_ calls: ArraySlice<String>) -> String {
        let verbs = Dictionary(grouping: calls) { String($0.split(separator: " ")[0]) }.mapValues(\.count)
        return "\(calls.count) (" + verbs.keys.sorted().map { "\($0) \(verbs[$0]!)" }.joined(separator: ", ") + ")"
    }

    @Test func firstStartAndRestart() async throws {
        let c = try await ClusterHarness(config: ["SESSION=$generate:hex:16$"])
        _ = try await c.start()
        let first = c.cluster.calls.count
        _ = try await c.start()
        // First start: the namespace created, the Lease; nothing to read in a namespace this run made; the
        // values made; the record's first revision (who writes it asked: a review, then its Secret, and the
        // Namespace told who wrote last: a patch); 8 applies;
        // the Nodes listed as the Lease is taken (a one-node cluster's name for the new claim, made then: none here);
        // the wait's lists (its last look: the Services and their EndpointSlices); the record's result (a
        // patch); the Lease deleted. Re-start: the namespace's create refused, the Lease, then under it the
        // Namespace, the stored secret and the record's revisions read at once, one list per recorded kind and
        // volume, nothing sent (all unchanged, the Namespace and the record included), the wait's lists, the Lease
        // deleted.
        #expect(
            Self.counts(c.cluster.calls[..<first]) == "21 (apply 8, create 4, delete 1, list 6, patch 2)",
            "\(c.cluster.calls[..<first])")
        #expect(
            Self.counts(c.cluster.calls[first...]) == "18 (create 2, delete 1, get 2, list 13)",
            "\(c.cluster.calls[first...])")
    }
}
