import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoDeploy

/// A pause in a polling loop ends when the API server reports a change to what it watches, not only when its
/// time is up; a change reported between two pauses is not lost; where there is no watch, it is a sleep.
@Suite struct ChangeWatchTests {
    /// A clock whose sleeps end only when cancelled, or after 30 s of real time (then `ranOut`, and the test
    /// fails instead of hanging): a pause that returns before was ended by a change.
    final class StoppedClock: Clock, @unchecked Sendable {
        private let lock = NSLock()
        private var out = false
        var ranOut: Bool { lock.withLock { out } }
        func now() -> Date { Date(timeIntervalSince1970: 1_780_000_000) }
        func sleep(seconds: Double) async throws {
            try await Task.sleep(nanoseconds: 30_000_000_000)
            lock.withLock { out = true }
        }
    }

    static func claim(_ name: String, phase: String) -> KubeObject {
        KubeObject(
            .persistentVolumeClaim, name: name, namespace: "ns", body: [("status", .map([("phase", .string(phase))]))])
    }

    static func phase(_ phase: String) -> (inout JSON) -> Void {
        { json in
            guard case .object(var o) = json else { return }
            o["status"] = .object(["phase": .string(phase)])
            json = .object(o)
        }
    }

    @Test func aChangeEndsThePauseAndOneReportedBetweenPausesIsNotLost() async throws {
        let cluster = FakeCluster()
        cluster.emitsChanges = true
        try cluster.seed(Self.claim("data", phase: "Pending"))
        let watch = ChangeWatch(cluster, namespace: "ns", [(.persistentVolumeClaim, nil)], seconds: 60)
        defer { watch.stop() }
        let clock = StoppedClock()
        // Reported while the pause waits: it ends. Each update is a change (the fake reports only those), so one made
        // before the watch is in place (a loaded machine) does not leave the pause waiting for ever.
        let bind = Task {
            var n = 0
            while !Task.isCancelled {
                n += 1
                cluster.update("PersistentVolumeClaim", "data", namespace: "ns", Self.phase("Bound \(n)"))
                try await Task.sleep(nanoseconds: 20_000_000)
            }
        }
        try await watch.pause(clock, seconds: 3600)
        bind.cancel()
        #expect(!clock.ranOut && cluster.watched == ["watch PersistentVolumeClaim ns"])
        // Reported before the next pause: that pause ends at once.
        try await Task.sleep(nanoseconds: 50_000_000)
        cluster.update("PersistentVolumeClaim", "data", namespace: "ns", Self.phase("Lost"))
        try await Task.sleep(nanoseconds: 50_000_000)
        try await watch.pause(clock, seconds: 3600)
        #expect(!clock.ranOut)
    }

    /// A client without a watch (the fake by default): the pause is the clock's sleep, whole.
    @Test func withoutAWatchThePauseIsTheClocksSleep() async throws {
        let cluster = FakeCluster()
        try cluster.seed(Self.claim("data", phase: "Pending"))
        let watch = ChangeWatch(cluster, namespace: "ns", [(.persistentVolumeClaim, nil)], seconds: 60)
        defer { watch.stop() }
        cluster.update("PersistentVolumeClaim", "data", namespace: "ns", Self.phase("Bound"))
        let clock = FixedClock()
        try await watch.pause(clock, seconds: 0.25)
        #expect(clock.slept == 0.25)
    }

    /// A cancelled task's pause ends at once, with CancellationError.
    @Test func aCancelledPauseEnds() async throws {
        let watch = ChangeWatch(FakeCluster(), namespace: "ns", [(.pod, nil)], seconds: 60)
        defer { watch.stop() }
        let paused = Task { try await watch.pause(StoppedClock(), seconds: 3600) }
        try await Task.sleep(nanoseconds: 20_000_000)
        paused.cancel()
        await #expect(throws: CancellationError.self) { try await paused.value }
    }
}
