import Foundation
import SoBasics
import SoDeploy
import SoKube
import SoWorkspace

extension DashboardFeed {
    /// The log of `container` in a running pod of `namespace`'s deployment, its last `tail` lines and then each
    /// line as it is written, every secret value of the namespace replaced: a page's live log of a service.
    /// Ends when the pod's log ends (the page's stream reconnects and finds the pod that replaced it).
    public func followLog(namespace: String, container: String, tail: Int = 100) -> AsyncThrowingStream<String, Error> {
        let pod =
            snapshot.pods[namespace]?.first { $0.running.contains(container) }
            ?? snapshot.pods[namespace]?.first {
                $0.containers.contains(container)
            }
        let client = client
        let ctx = ctx
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    guard let pod else {
                        throw SoError("no pod of \(namespace) runs \(container)", hint: "start the deployment")
                    }
                    let redactor = try await Redactor.read(client, namespace: namespace, ctx: ctx)
                    var pending = ""
                    for try await chunk in client.logs(
                        namespace: namespace, pod: pod.name,
                        options: LogOptions(container: container, follow: true, tailLines: tail))
                    {
                        pending += chunk
                        while let nl = pending.firstIndex(of: "\n") {
                            continuation.yield(
                                HTML.visible(redactor.apply(HTML.stripTerminal(String(pending[..<nl])))))
                            pending = String(pending[pending.index(after: nl)...])
                        }
                    }
                    if !pending.isEmpty {
                        continuation.yield(HTML.visible(redactor.apply(HTML.stripTerminal(pending))))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
