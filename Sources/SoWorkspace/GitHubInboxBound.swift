import Foundation
import SoBasics
import SoKube

extension GitHubInbox {
    /// How many entries are `pending`: from the API server's cache, through the entries' metadata only (never their
    /// data), a page of 4,000 at a time.
    public func pendingCount() async throws -> Int {
        var n = 0
        try await client.forEachLabelsPage(
            .secret, namespace: Self.namespace, labelSelector: "\(Self.label)=event,\(Self.stateLabel)=pending"
        ) { n += $0.count }
        return n
    }

    /// Whether the inbox holds the entry named `name` (a delivery answered again while the inbox is full).
    public func holds(_ name: String) async throws -> Bool {
        try await client.get(.secret, name: name, namespace: Self.namespace) != nil
    }
}
