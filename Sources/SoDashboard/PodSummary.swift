import Foundation
import SoDeploy
import SoKube

/// A pod as the pages show it.
public struct PodSummary: Sendable, Equatable {
    public var name: String
    public var component: String
    public var phase: String
    public var ready: String
    public var restarts: Int
    /// Containers not running, with why (`CrashLoopBackOff`, `Error`, `ImagePullBackOff`).
    public var notRunning: [(container: String, reason: String)]
    public var containers: [String]
    public var running: [String]

    public static func == (a: PodSummary, b: PodSummary) -> Bool {
        a.name == b.name && a.phase == b.phase && a.ready == b.ready && a.restarts == b.restarts
            && a.notRunning.map { "\($0.container)=\($0.reason)" }
                == b.notRunning.map { "\($0.container)=\($0.reason)" }
            && a.containers == b.containers && a.running == b.running
    }

    public init(_ pod: JSON) {
        let info = ObserveAction.podInfo(pod)
        name = info.name
        component = info.component
        phase = info.phase
        ready = info.ready
        restarts = info.restarts
        containers = info.containers
        let statuses = pod.at("status", "containerStatuses")?.array ?? []
        running = statuses.filter { $0.at("state", "running") != nil }.compactMap { $0["name"]?.string }
        notRunning = statuses.compactMap { s in
            guard let c = s["name"]?.string, s.at("state", "running") == nil else { return nil }
            let reason =
                s.at("state", "waiting", "reason")?.string ?? s.at("state", "terminated", "reason")?.string
                ?? "not running"
            return (c, reason)
        }
    }
}
