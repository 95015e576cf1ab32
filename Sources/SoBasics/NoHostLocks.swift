import Foundation

/// The default of a context: no host-wide locks (the live context takes `FileHostLocks` from SoSystem; a
/// test that reaches a host lock passes its own).
public struct NoHostLocks: HostLocks {
    public init() {}
    public func holding<T: Sendable>(_ name: String, _ body: (_ waited: Bool) async throws -> T) async throws -> T {
        throw SoError(
            "no host locks in this context", hint: "this is a bug in so (or a test that did not pass host locks)")
    }
}
