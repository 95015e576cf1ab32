import Foundation

/// Locks between the processes of this host, for what exists once per host (the kind cluster `start`
/// creates): two `so` runs never create it at the same time.
public protocol HostLocks: Sendable {
    /// Runs `body` holding the host-wide lock `name`; `body` learns whether this run had to wait for
    /// another process (which may have done the work meanwhile).
    func holding<T: Sendable>(_ name: String, _ body: (_ waited: Bool) async throws -> T) async throws -> T
}
