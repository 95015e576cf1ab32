import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// What this run knows of a Lease it holds: the resourceVersion of its last write (every later write and
/// the release are compare-and-swaps on it), when it was taken, and whether another run took it over.
final class LeaseHold: @unchecked Sendable {
    private let lock = NSLock()
    private var versionValue: String?
    private var acquiredValue = ""
    private var lostValue = false
    private var renewer: Task<Void, Never>?

    var version: String? { lock.withLock { versionValue } }
    var acquired: String { lock.withLock { acquiredValue } }
    var lost: Bool { lock.withLock { lostValue } }

    func hold(_ stored: JSON, acquired: String? = nil) {
        lock.withLock {
            versionValue = stored.at("metadata", "resourceVersion")?.string
            if let acquired { acquiredValue = acquired }
        }
    }

    func markLost() { lock.withLock { lostValue = true } }
    func setRenewer(_ task: Task<Void, Never>) { lock.withLock { renewer = task } }

    /// Stops the renewals (one under way may still land: the release reads the Lease again then).
    func stopRenewing() {
        let task = lock.withLock { () -> Task<Void, Never>? in
            defer { renewer = nil }
            return renewer
        }
        task?.cancel()
    }
}
