import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender

/// GitHub's webhook deliveries, kept in the cluster until a loop takes them: a Secret per delivery
/// (`so.github.DELIVERY`, type `so.dev/github-event.v1`) in the namespace `so-github`, holding the normalized event
/// (`GitHubEvent`, JSON under `event`), never the raw body. Created only if absent, so a redelivery (the same
/// `X-GitHub-Delivery`) changes nothing, and a restart of the receiver loses nothing it answered 202 for.
///
/// Labels index it: `so.dev/github-inbox=event` on every entry, the repository (`so.dev/github-repo`), the issue's
/// or pull request's number (`so.dev/github-number`), the event's name and the state (`so.dev/github-state`:
/// `pending` when written; a consumer marks it `taken` with `mark`, a compare-and-swap on the resourceVersion it
/// read). The annotation `so.dev/received-at` (microseconds) orders them. A Secret, not a ConfigMap: issue and
/// comment texts of a private repository are readable by whoever may read Secrets there, and no one else.
public struct GitHubInbox: Sendable {
    public let client: ClusterClient

    public static let namespace = "so-github"
    public static let secretType = "so.dev/github-event.v1"
    public static let label = "so.dev/github-inbox"
    public static let repoLabel = "so.dev/github-repo"
    public static let numberLabel = "so.dev/github-number"
    public static let eventLabel = "so.dev/github-event"
    public static let stateLabel = "so.dev/github-state"
    public static let receivedAnnotation = "so.dev/received-at"
    public static let deliveryAnnotation = "so.dev/github-delivery"
    /// When the entry got its state (UTC, microseconds): a `taken` one's lease, a `done` one's age for pruning.
    public static let markedAnnotation = "so.dev/github-marked-at"
    /// The loop that took it (`GitHubLoopEffects.identity`).
    public static let takenByAnnotation = "so.dev/github-taken-by"
    static let dataKey = "event"

    public init(client: ClusterClient) { self.client = client }

    /// The Secret's name of a delivery (a valid id is `A-Z a-z 0-9 -`; a Secret's name is lowercase).
    public static func secretName(_ delivery: String) -> String { "so.github.\(delivery.lowercased())" }

    /// A repository as a label's value: `owner_name` lowercased when that fits in 63 characters and ends with a
    /// letter or digit, else `sha256-` and the first 40 hex digits of its lowercased name's hash.
    public static func repoLabelValue(_ repository: String) -> String {
        let lower = repository.lowercased()
        let plain = lower.replacingOccurrences(of: "/", with: "_")
        if plain.count <= 63, let last = plain.unicodeScalars.last, CharacterSet.alphanumerics.contains(last) {
            return plain
        }
        return "sha256-" + String(SHA256.hex(Array(lower.utf8)).prefix(40))
    }

    /// One delivery as the inbox holds it.
    public struct Entry: Sendable {
        public var secretName: String
        public var event: GitHubEvent
        public var receivedAt: Date?
        public var state: String
        public var resourceVersion: String
        public var markedAt: Date?
        public var takenBy: String?
        public init(
            secretName: String, event: GitHubEvent, receivedAt: Date?, state: String, resourceVersion: String,
            markedAt: Date? = nil, takenBy: String? = nil
        ) {
            self.secretName = secretName
            self.event = event
            self.receivedAt = receivedAt
            self.state = state
            self.resourceVersion = resourceVersion
            self.markedAt = markedAt
            self.takenBy = takenBy
        }
    }

    /// The Secret's name of a delivery whose signed body has the SHA-256 `digest` (64 hex digits): the same body
    /// sent again, under any delivery id, is the same entry.
    public static func bodyName(_ digest: String) -> String { "so.github.body-\(digest.lowercased())" }

    /// Writes `event` received at `at`: true when new, false when the inbox held that delivery already (a
    /// redelivery). `digest`, the SHA-256 of its signed body, names the entry when given (the receiver's: a body
    /// replayed with a new delivery id is no new entry); else the delivery's id does. Throws when the cluster could
    /// not be written (the sender should deliver again).
    @discardableResult
    public func record(_ event: GitHubEvent, at: Date, digest: String? = nil) async throws -> Bool {
        let data = Data(JSONWriter.encode(event, .compact).utf8).base64EncodedString()
        let secret = KubeObject(
            .secret, name: digest.map(Self.bodyName) ?? Self.secretName(event.delivery), namespace: Self.namespace,
            labels: [
                (Self.label, "event"), (Self.repoLabel, Self.repoLabelValue(event.repository)),
                (Self.numberLabel, String(event.number)), (Self.eventLabel, event.event), (Self.stateLabel, "pending"),
                DeploymentNames.Label.managedBySo,
            ],
            annotations: [
                (Self.receivedAnnotation, Timestamps.microTime(at)), (Self.deliveryAnnotation, event.delivery),
            ],
            body: [("type", .string(Self.secretType)), ("data", .map([(Self.dataKey, .string(data))]))])
        do {
            return try await client.create(secret, fieldManager: "so") != nil
        } catch let e as SoError where e.message.contains("namespaces \"\(Self.namespace)\" not found") {
            // The first delivery on this cluster: the namespace is made here (a cluster whose manifest made it
            // needs no right to make namespaces).
            _ = try await client.create(
                KubeObject(
                    .namespace, name: Self.namespace, labels: [("so.dev/role", "github-inbox")],
                    annotations: [("so.dev/what", "GitHub's webhook deliveries to so dashboard: a Secret per delivery")]
                ), fieldManager: "so")
            return try await client.create(secret, fieldManager: "so") != nil
        }
    }

    /// Every entry (in `state` only, when given), oldest first (by the time received, then name).
    public func list(state: String? = nil) async throws -> [Entry] {
        let selector = "\(Self.label)=event" + (state.map { ",\(Self.stateLabel)=\($0)" } ?? "")
        let entries = try await client.list(.secret, namespace: Self.namespace, labelSelector: selector)
            .compactMap(Self.decode)
        return entries.sorted {
            ($0.receivedAt ?? .distantPast, $0.secretName) < ($1.receivedAt ?? .distantPast, $1.secretName)
        }
    }

    /// An entry read from its Secret, or nil when it is not one (of another type, or damaged).
    static func decode(_ secret: JSON) -> Entry? {
        guard secret["type"]?.string == secretType, let encoded = secret["data"]?[dataKey]?.string,
            let data = Data(base64Encoded: encoded), let event = try? JSONDecoder().decode(GitHubEvent.self, from: data)
        else { return nil }
        return Entry(
            secretName: secret.name, event: event,
            receivedAt: secret.annotations[receivedAnnotation].flatMap(Timestamps.parse),
            state: secret.labels[stateLabel] ?? "",
            resourceVersion: secret.at("metadata", "resourceVersion")?.string ?? "",
            markedAt: secret.annotations[markedAnnotation].flatMap(Timestamps.parse),
            takenBy: secret.annotations[takenByAnnotation])
    }

    /// Sets an entry's state (e.g. `taken`), only if it is still as read: false when another changed it meanwhile.
    public func mark(_ entry: Entry, state: String, at: Date = Date(), by: String? = nil) async throws -> Bool {
        try await marked(entry, state: state, at: at, by: by) != nil
    }

    /// The states an entry goes through: written `pending`, `taken` by a loop before it acts, then `done` or `failed`.
    public static let states = ["pending", "taken", "done", "failed"]

    /// `mark`, returning the entry as it now is (its new resourceVersion, for the next mark), or nil when another
    /// changed it meanwhile. `at` is kept as `so.dev/github-marked-at`; `by`, the loop marking it `taken`, as
    /// `so.dev/github-taken-by` (removed when nil).
    public func marked(_ entry: Entry, state: String, at: Date = Date(), by: String? = nil) async throws -> Entry? {
        let annotations: [String: Any] = [
            Self.markedAnnotation: Timestamps.microTime(at), Self.takenByAnnotation: by.map { $0 as Any } ?? NSNull(),
        ]
        let patch: [String: Any] = [
            "metadata": [
                "resourceVersion": entry.resourceVersion, "labels": [Self.stateLabel: state],
                "annotations": annotations,
            ]
        ]
        do {
            let object = try await client.patch(
                .secret, name: entry.secretName, namespace: Self.namespace,
                mergePatch: try JSONSerialization.data(withJSONObject: patch, options: [.sortedKeys]))
            var now = entry
            now.state = state
            now.markedAt = Timestamps.parse(Timestamps.microTime(at))
            now.takenBy = by
            now.resourceVersion = object.at("metadata", "resourceVersion")?.string ?? ""
            return now
        } catch let e as SoError where e.message.contains("(Conflict)") || e.message.contains("(NotFound)") {
            return nil
        }
    }

    /// Deletes an entry only if it is still as read (pruning): false when it was gone or changed meanwhile.
    public func delete(_ entry: Entry) async throws -> Bool {
        try await client.delete(
            .secret, name: entry.secretName, namespace: Self.namespace, resourceVersion: entry.resourceVersion)
    }
}
