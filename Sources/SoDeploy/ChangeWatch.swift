import Foundation
import SoBasics
import SoKube

/// Wakes a polling loop as soon as the API server reports a change to what it polls, instead of at its
/// next tick (a tenth of a second late on average, every time the loop waits for the cluster): the loop
/// still lists for what is true, an event only says "look now". Where the client has no watch, or a watch
/// ends (its time is up, a network error), the loop polls as before.
public final class ChangeWatch: Sendable {
    private let signal = ChangeSignal()
    private let readers: [Task<Void, Never>]

    /// Watches each (type, selector) in `namespace` for `seconds` at most; each of `also` that returns says "look
    /// now" as a reported change does (what the caller learns besides the API server: `ReadyConfirmation`).
    public init(
        _ client: ClusterClient, namespace: String, _ watched: [(ResourceType, String?)], seconds: Double,
        also: [@Sendable () async -> Void] = []
    ) {
        let signal = signal
        let others = also.map { told in
            Task {
                await told()
                await signal.raise()
            }
        }
        readers =
            others
            + watched.map { type, selector in
                Task {
                    let events = client.changes(
                        type, namespace: namespace, labelSelector: selector,
                        seconds: Int(min(seconds, 3600).rounded(.up)))
                    // A watch that fails leaves the loop to its polling: nothing to say.
                    do { for try await _ in events { await signal.raise() } } catch {}
                }
            }
    }

    /// Sleeps `seconds` on `clock`, or less: until a change is reported (one reported since the last pause
    /// ends this one at once).
    public func pause(_ clock: Clock, seconds: Double) async throws {
        try Task.checkCancellation()
        let signal = signal
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await clock.sleep(seconds: seconds) }  // cancelled when a change came first
            group.addTask { await signal.next() }
            await group.next()
            group.cancelAll()
        }
        try Task.checkCancellation()
    }

    /// Ends the watches.
    public func stop() { for reader in readers { reader.cancel() } }

    deinit { stop() }
}
