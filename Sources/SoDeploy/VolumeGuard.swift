import Foundation

/// Refuses to delete a volume that holds work not yet taken out (`check` throws naming it); with
/// `discard` it only warns, with `dryRun` it says what it would refuse.
public protocol VolumeGuard: Sendable {
    func check(discard: Bool, dryRun: Bool) async throws
}
