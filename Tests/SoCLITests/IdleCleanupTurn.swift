/// `so cleanup --idle` looks at every workspace on the cluster, so the e2e tests that run it (on the host, or
/// in the cluster from the example CronJob) take turns: one test's cleanup would otherwise stop the other's
/// idle workspace first, or report the other's running task.
actor IdleCleanupTurn {
    static let shared = IdleCleanupTurn()
    private var taken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` while no other test holding a turn runs.
    static func exclusive(_ body: () async throws -> Void) async throws {
        await shared.take()
        do { try await body() } catch {
            await shared.give()
            throw error
        }
        await shared.give()
    }

    private func take() async {
        guard taken else {
            taken = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func give() {
        if waiting.isEmpty { taken = false } else { waiting.removeFirst().resume() }
    }
}
