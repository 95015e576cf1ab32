import Foundation

/// Work bounded in time.
public enum Deadline {
    /// What `work` gives, or nil when `seconds` pass first: the work is then cancelled, and waited for.
    public static func within<T: Sendable>(_ seconds: Double, _ work: @escaping @Sendable () async throws -> T)
        async throws -> T?
    {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                // Cancelled: the work ended first, and this answer is not read.
                try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                group.cancelAll()
                _ = try? await group.next()  // the cancelled work's end; what it threw is not the answer
                return nil
            }
            return value
        }
    }
}
