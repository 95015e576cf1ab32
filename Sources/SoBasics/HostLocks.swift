import Foundation

/// Locks between the processes of this host, for what exists once per host (the kind cluster `start`
/// creates): two `so` runs never create it at the same time.
public protocol HostLocks: Sendable {
    /// Runs `body` holding the host-wide lock `name`; `body` learns whether this run had to wait for
    /// another process (which may have done the work meanwhile).
    func holding<T: Sendable>(_ name: String, _ body: (_ waited: Bool) async throws -> T) async throws -> T
}

/// The default of a context: no host-wide locks (the live context takes `FileHostLocks` from SoSystem; a
/// test that reaches a host lock passes its own).
public struct NoHostLocks: HostLocks {
    public init() {}
    public func holding<T: Sendable>(_ name: String, _ body: (_ waited: Bool) async throws -> T) async throws -> T {
        throw SoError("no host locks in this context", hint: "this is a bug in so (or a test that did not pass host locks)")
    }
}
