import SoWorkspace
import Testing

@testable import SoDashboard

/// The dashboard's values passed by value through its pages and its feed (issue 67): what a copy of each costs.
@Suite struct SnapshotSizeTests {
    /// A page is drawn from a snapshot passed down by value, one workspace and one task at a time: each is a few
    /// pointers, not hundreds of bytes of a Hummingbird handler's stack. Held to 400 bytes; printed.
    @Test func theSnapshotAndWhatPagesTakeFromItAreSmall() {
        let sizes: [(String, Int)] = [
            ("DashboardSnapshot", MemoryLayout<DashboardSnapshot>.size),
            ("WorkspaceView", MemoryLayout<WorkspaceView>.size), ("TaskRecord", MemoryLayout<TaskRecord>.size),
            ("GitHubView", MemoryLayout<GitHubView>.size), ("PageContext", MemoryLayout<PageContext>.size),
        ]
        print(sizes.map { "\($0.0): \($0.1) bytes" }.joined(separator: "\n"))
        #expect(sizes.allSatisfy { $0.1 <= 400 }, "\(sizes)")
    }
}
