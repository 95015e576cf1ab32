import Foundation

/// `cleanup --idle -o json`: what was removed (with --expired, --orphaned or --older-than) and the idle workspaces.
struct IdleCleanupJSON: Encodable {
    var removed: [ListingJSON]
    var idle: [IdleJSON]
}
