import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoWorkspace

/// What a deployment's page shows beyond the snapshot, read when the page is drawn (at most once per snapshot
/// version, however many pages are open): `so deployment status` from the cluster alone, its recent events,
/// its config keys (never a value of a Secret), and the last lines of each container that is not running.
public struct DeploymentDetail: Sendable {
    public var status: DeploymentStatus
    public struct Event: Sendable {
        public var time: String
        public var type: String
        public var reason: String
        public var object: String
        public var message: String
    }
    public var events: [Event] = []
    public struct Config: Sendable {
        public var kind: String
        public var name: String
        public var keys: [String]
    }
    public var config: [Config] = []
    /// "POD/CONTAINER" → its last lines (secret values replaced).
    public var failing: [(container: String, reason: String, lines: String)] = []
}

extension DashboardFeed {
    /// The detail of the deployment in `namespace`, read once per snapshot version.
    public func detail(_ listing: DeploymentListing) async throws -> DeploymentDetail {
        let version = snapshot.version
        if let d = details[listing.namespace], d.version == version { return d.detail }
        let d = try await readDetail(listing, pods: snapshot.pods[listing.namespace] ?? [])
        details[listing.namespace] = (version, d)
        details = details.filter { $0.value.version >= version - 50 }
        return d
    }

    nonisolated func readDetail(_ l: DeploymentListing, pods summaries: [PodSummary]) async throws -> DeploymentDetail {
        let ns = l.namespace
        let pods = try await client.list(.pod, namespace: ns, labelSelector: DeploymentNames.Label.managedBySoSelector)
        var d = DeploymentDetail(
            status: try await ObserveAction(ctx).status(
                client, namespace: ns, id: l.id, cluster: clusterName, pods: pods))
        d.events = try await client.list(.event, namespace: ns, labelSelector: nil)
            .map { e in
                DeploymentDetail.Event(
                    time: e["lastTimestamp"]?.string ?? e["eventTime"]?.string ?? "", type: e["type"]?.string ?? "",
                    reason: e["reason"]?.string ?? "",
                    object:
                        "\(e.at("involvedObject", "kind")?.string ?? "?")/\(e.at("involvedObject", "name")?.string ?? "?")",
                    message: e["message"]?.string ?? "")
            }
            .sorted { $0.time > $1.time }.prefix(15).map { $0 }
        let selector = DeploymentNames.selector(l.id)
        for (type, kind) in [(ResourceType.configMap, "ConfigMap"), (.secret, "Secret")] {
            for o in try await client.list(type, namespace: ns, labelSelector: selector) {
                let keys = Array((o["data"]?.object ?? [:]).keys) + Array((o["binaryData"]?.object ?? [:]).keys)
                d.config.append(.init(kind: kind, name: o.name, keys: keys.sorted()))
            }
        }
        let failing = summaries.flatMap { p in p.notRunning.map { (p.name, $0.container, $0.reason) } }
        let redactor = try await Redactor.read(client, namespace: ns, ctx: ctx)
        if !failing.isEmpty {
            for (pod, container, reason) in failing.prefix(5) {
                var text = ""
                do {
                    var options = LogOptions(container: container, tailLines: 20)
                    // A container crashing again and again: the run that crashed, not the one started since.
                    options.previous = reason == "CrashLoopBackOff"
                    for try await chunk in client.logs(namespace: ns, pod: pod, options: options) { text += chunk }
                } catch {
                    text = "(no log: \(error))"
                }
                d.failing.append(("\(pod)/\(container)", reason, HTML.stripTerminal(text)))
            }
        }
        return d.redacted(redactor)
    }
}
