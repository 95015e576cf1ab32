import Foundation

/// What one wait has seen of each container start, across its looks: the evidence a container without a
/// readiness probe is believed on. The kubelet reports container states in rounds (its relist of the
/// runtime, once a second): a container that exits at once is reported exited by the round after the one
/// that reported it running. So a container is believed once one round and a little (the status write and
/// this wait's next look) has passed since this wait saw its start reported, with no exit reported — longer
/// when this kubelet reported the start late (a busy node reports the exit later still). One already running
/// at this wait's first look is believed once its `startedAt` is that far behind (a re-start believes what
/// the start before it waited for at its first look), or at once when the last start's wait believed this very start
/// of it (`so.dev/believed`: same pod, container and restart count). Sooner, where the container can be asked
/// (`ContainerUptime`): once its first process has run `provenSeconds`, as the container's own kernel says — a
/// container that exits at once never answers so. No other clock. A container that can be asked is believed by its
/// answer, not by the round (a busy kubelet reports an exit seconds after the process is gone): one that says it is not
/// running, or that it has run less than `provenSeconds`, is asked again; one whose ask fails in words not known here
/// is asked again `unansweredAtMost` times, then believed by the round counted from its last ask.
struct ContainerEvidence {
    /// One kubelet round (its relist period, 1 s, counted from the end of the last) and half a second for a busy
    /// kubelet's relist and status write. The wait sees a report as it is made (a watch wakes it), so nothing of
    /// this wait's own polling adds to it: at 1.25 s, once the watch took that lag away, a full e2e run under load
    /// saw a container that exits at once reported exited later than that, and believed it.
    static let reportSeconds = 1.5
    /// The most a late report of the start adds (the settle this replaces was 5 s).
    static let lateAtMost = 4.0
    /// How long a container's first process must have run, by its own account, to be believed: a container
    /// that exits at once (or within a second) is not. The kubelet's round believes it no later.
    static let provenSeconds = 1.0

    /// A container start → the age its first process said it had, and when it was asked.
    private var proven: [String: (age: Double, at: Date)] = [:]
    /// Container starts that could not tell their age: believed by the kubelet's round.
    private var unprovable: Set<String> = []
    /// Container starts whose container said it was not running, or did not answer, and when it was asked: not
    /// believed, asked again.
    private var stopped: [String: Date] = [:]
    /// How long after a "not running" (or no answer) the container is asked again.
    static let stoppedAskAgain = 1.0
    /// Container starts whose ask went unanswered (`UptimeAnswer.unanswered`), and how many times.
    private var unanswered: [String: Int] = [:]
    /// How many unanswered asks a start is given before the kubelet's round believes it, as one that cannot tell,
    /// counted from the last ask (`roundFrom`): a second apart, time for a container that is gone to say so in words
    /// known here (the kubelet's "container not found" follows the runtime's within a second or two) or for the
    /// kubelet to report its exit.
    static let unansweredAtMost = 3
    /// Container starts the round believes counted from this moment (their last unanswered ask), not from their
    /// start's report.
    private var roundFrom: [String: Date] = [:]
    /// No container can be asked in this wait (no kubectl, or no right to exec).
    private var askingOff = false

    /// A container start (pod, container, startedAt, restarts) → when this wait first saw it running.
    private var firstSeenRunning: [String: Date] = [:]
    /// Containers (pod uid and container name) this wait saw before they ran: their start's report delay
    /// is known.
    private var seenBeforeRunning: Set<String> = []

    /// Notes a container this wait sees not running (waiting, or with no status yet).
    mutating func notRunning(pod: String, container: String) {
        seenBeforeRunning.insert(pod + "/" + container)
    }

    /// How long a container running since `startedAt` (as the API reports it: whole seconds, rounded down)
    /// has still to run, as seen at `now`, for an exit to have been reported: 0 once it has. `restarts` tells
    /// one start from the next.
    mutating func timeToBelief(pod: String, container: String, startedAt: Date, restarts: Int, now: Date) -> Double {
        let start = Self.key(pod: pod, container: container, startedAt: startedAt, restarts: restarts)
        if let said = proven[start], said.age >= Self.provenSeconds { return 0 }
        // Gone by the runtime's word (or unanswered): believed by no round (the kubelet reports the exit, or a new
        // start, later).
        if let at = stopped[start] { return max(0.05, Self.stoppedAskAgain - now.timeIntervalSince(at)) }
        // Running, by its own account, for less than it takes: believed by its next answer, not by the round (it may
        // exit before then, and a busy kubelet report that late).
        if let wait = timeToAsk(start, now: now), proven[start] != nil { return max(0.05, wait) }
        if let from = roundFrom[start] { return max(0, Self.reportSeconds - now.timeIntervalSince(from)) }
        let first = firstSeenRunning[start, default: now]
        firstSeenRunning[start] = first
        let seenBefore = seenBeforeRunning.contains(pod + "/" + container)
        // Seen before it ran: this wait saw the kubelet report the start, and an exit comes a round after that
        // report; for longer when the report came late beyond one round (a busy kubelet reports the exit later
        // still). Running when first seen: since its latest start (startedAt is rounded down to the second).
        let latestStart = startedAt.addingTimeInterval(1)
        let ran =
            seenBefore
            ? now.timeIntervalSince(first) : max(now.timeIntervalSince(first), now.timeIntervalSince(latestStart))
        let late = seenBefore ? min(Self.lateAtMost, max(0, first.timeIntervalSince(latestStart) - 1)) : 0
        return max(0, Self.reportSeconds + late - ran)
    }

    /// One container start, as `timeToBelief` and the asking name it.
    static func key(pod: String, container: String, startedAt: Date, restarts: Int) -> String {
        "\(pod)/\(container)@\(startedAt.timeIntervalSince1970)#\(restarts)"
    }

    /// When a container start (not yet believed) is to be asked its age, in seconds from `now`: 0 when it has not
    /// been asked, else when its first process will have run `provenSeconds` by what it said last; nil when
    /// it cannot be asked.
    func timeToAsk(_ start: String, now: Date) -> Double? {
        if askingOff || unprovable.contains(start) { return nil }
        if let at = stopped[start] { return max(0, Self.stoppedAskAgain - now.timeIntervalSince(at)) }
        guard let said = proven[start] else { return 0 }
        // Asked again as long after the last ask as it lacked of the second: its files are read as far into that ask
        // as into the last (kubectl, the API server and the kubelet take about as long each time), and a little
        // past it (they count in hundredths of a second). A read that comes early is only asked once more: the
        // belief still wants an age of a second.
        return max(0, Self.provenSeconds + 0.05 - said.age - now.timeIntervalSince(said.at))
    }

    /// Notes what a container start said of its age when asked at `at` (the ask's start).
    mutating func heard(_ start: String, _ answer: UptimeAnswer, at: Date) {
        switch answer {
        case .ran(let age):
            proven[start] = (age, at)
            stopped[start] = nil
        case .notRunning: stopped[start] = at
        case .cannotTell: unprovable.insert(start)
        case .unanswered:
            unanswered[start, default: 0] += 1
            if unanswered[start, default: 0] >= Self.unansweredAtMost {
                stopped[start] = nil
                unprovable.insert(start)
                roundFrom[start] = at
            } else {
                stopped[start] = at
            }
        case .unavailable: askingOff = true
        }
    }
}
