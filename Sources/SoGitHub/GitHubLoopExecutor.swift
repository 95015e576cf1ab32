import Foundation
import SoBasics
import SoWorkspace

/// One pass of the GitHub loop (`so github loop --config F --once`): the entries a loop left `taken` are reconciled
/// with the threads and the workspaces' tasks (`reconcileTaken`), the threads whose task ended are brought up to
/// date and each of the loop's tasks that ended gets its outcome comment, once (`reconcile`), the inbox's pending
/// entries are planned (`GitHubLoopPlanner`), and each step's entries are marked `taken`
/// (a compare-and-swap: a step whose entries another loop took is skipped); its thread is saved with the step
/// before it acts (`GitHubLoopStep`), and again with what it did, then its entries are marked `done` or `failed`.
/// Old entries are pruned last (on a loop's first pass, then at most once an hour). Every effect goes through
/// `GitHubLoopEffects`. Each step is one line (`say`), naming the issue, the step, the workspace and the deliveries:
/// never a title, body, comment or token.
public struct GitHubLoopExecutor: Sendable {
    public let effects: any GitHubLoopEffects
    public let config: GitHubLoopConfig
    public let say: @Sendable (String) -> Void
    /// When this loop last pruned: a list of every ended entry is not made every pass.
    let pruned = PruneTime()
    /// The pending entries already looked up among the taken digests (`unreplayed`).
    let checked = Checked()

    /// A loop's last prune, shared by its passes.
    final class PruneTime: @unchecked Sendable {
        private let lock = NSLock()
        private var last: Date?
        /// True (and `now` kept) when the loop never pruned, or last did an hour or more before `now`.
        func due(_ now: Date) -> Bool {
            lock.withLock {
                if let last, now.timeIntervalSince(last) < 3600, now >= last { return false }
                last = now
                return true
            }
        }
    }

    public init(effects: any GitHubLoopEffects, config: GitHubLoopConfig, say: @escaping @Sendable (String) -> Void) {
        self.effects = effects
        self.config = config
        self.say = say
    }

    /// The inbox's entries in `state`, and the threads, of the config's repositories alone: loops with other
    /// repositories share the `so-github` namespace, and their entries (pending, taken past a lease, old) and
    /// threads are theirs to plan, settle, comment on with their token, and prune.
    func entries(_ state: String) async throws -> [GitHubInbox.Entry] {
        try await effects.entries(state: state).filter { config.watches($0.event.repository) }
    }
    func threads() async throws -> [GitHubLoopStore.Stored] {
        try await effects.threads().filter { config.watches($0.thread.repository) }
    }

    /// One pass at `now`.
    public func pass(now: Date) async throws {
        var stored = try await threads()
        if try await reconcileTaken(stored, now: now) { stored = try await threads() }
        if try await reconcile(stored) { stored = try await threads() }
        let entries = await unreplayed(try await entries("pending"), now: now)
        var received: [String: Date] = [:]
        for e in entries { received[e.event.delivery] = e.receivedAt }
        let events = entries.map(\.event)
        let steps = GitHubLoopPlanner.plan(
            events, threads: stored.map(\.thread), config: config, now: now, received: received,
            permissions: await permissions(events))
        for step in steps {
            let mine = step.deliveries.compactMap { d in entries.first { $0.event.delivery == d } }
            guard let first = mine.first, mine.count == step.deliveries.count else { continue }
            let at = "github: \(first.event.repository)#\(first.event.number)"
            let ids = "(deliver\(mine.count == 1 ? "y" : "ies") \(step.deliveries.joined(separator: ", ")))"
            await run(step, mine, stored, now: now, at: at, ids: ids)
        }
        if pruned.due(now) { await prune(now: now) }
    }

    /// Threads with a task under way whose tasks all ended: saved as not running, with the pull request, branch and
    /// cost their tasks report, and the loop's tasks that ended noted as reported; then, once saved, each of those
    /// gets its outcome comment on the issue, and the review comments it took a reply in their threads. True when a
    /// thread was saved.
    ///
    /// At most once: the ids are saved (a compare-and-swap) before anything is posted, so two loops never both post,
    /// and a loop restarted never posts again; a loop that dies between the save and the post, or a post GitHub
    /// refuses, leaves that outcome unsaid (the line says so; `so deployment --name W tasks` still shows it). A
    /// duplicate comment on every restart was the other choice.
    func reconcile(_ stored: [GitHubLoopStore.Stored]) async throws -> Bool {
        var changed = false
        // A thread with a step under way is its step's to save (a reconcile settles it first when its loop died).
        for s in stored where s.thread.running && !s.thread.removed && s.thread.step == nil {
            let work: GitHubLoopWork
            do { work = try await effects.work(workspace: s.thread.workspace, repository: s.thread.repository) } catch {
                say("github: \(s.thread.workspace): its tasks cannot be read: \(Self.oneLine(error))")
                continue
            }
            guard !work.running else { continue }
            var t = s.thread
            t.running = false
            t.pullRequest = work.pullRequest ?? t.pullRequest
            t.branch = work.branch ?? t.branch
            t.cost = max(t.cost, work.cost)
            let ours = Set(t.taskIDs ?? [])
            let said = Set(t.reported ?? [])
            let ended = work.tasks.filter { $0.ended && ours.contains($0.id) && !said.contains($0.id) }
            let ids = Set(ended.map(\.id))
            let replies = (t.replies ?? []).filter { ids.contains($0.task) }
            if !ended.isEmpty {
                t.reported = (t.reported ?? []) + ended.map(\.id)
                t.replies = t.replies?.filter { !ids.contains($0.task) }
                if t.replies?.isEmpty == true { t.replies = nil }
            }
            guard try await effects.save(t, over: s) != nil else { continue }
            changed = true
            say("github: \(t.repository)#\(t.issue): \(t.workspace) is idle, its task ended")
            for task in ended { await report(task, t, replies: replies.filter { $0.task == task.id }) }
        }
        return changed
    }

    /// The outcome comment of a task that ended, on the thread's issue, and a reply in each review comment's thread
    /// it took; a refusal is one line, not retried.
    func report(_ task: GitHubLoopWork.Task, _ t: GitHubLoopThread, replies: [GitHubLoopReplies]) async {
        let at = "github: \(t.repository)#\(t.issue)"
        var tail = ""
        // Anyone reads a public repository's comments: an agent steered to print a secret in pieces would publish it.
        let withheld = task.state != "succeeded" && !config.postLogs && t.privateRepository != true
        if task.state != "succeeded", !withheld {
            do { tail = try await effects.logTail(workspace: t.workspace, task: task.id) } catch {
                say("\(at): task \(task.id)'s log cannot be read, its outcome goes without: \(Self.oneLine(error))")
            }
        }
        do {
            try await effects.comment(
                try Self.issue(t), GitHubLoopReport.outcome(task, workspace: t.workspace, log: tail, withheld: withheld)
            )
            say("\(at): task \(task.id) \(task.state), its outcome commented")
        } catch {
            say("\(at): task \(task.id)'s outcome was not commented: \(Self.oneLine(error))")
        }
        for r in replies {
            guard let pull = GitHubIssue("\(t.repository)#\(r.pullRequest)") else { continue }
            for c in r.comments {
                do {
                    try await effects.reply(pull, comment: c, GitHubLoopReport.reply(task, workspace: t.workspace))
                } catch {
                    say("\(at): no reply to review comment \(c): \(Self.oneLine(error))")
                }
            }
        }
    }

    /// How a step ended: its entries are marked `done` or `failed`; put back `pending` when nothing was acted on
    /// (its thread changed between the plan and the step); left `taken` when it acted but its thread could not be
    /// saved (the next pass reconciles them from the thread and the workspace's tasks).
    enum Ended {
        case done
        case failed(Error)
        case again
        case left
    }

    func run(
        _ step: GitHubLoopPlanner.Step, _ mine: [GitHubInbox.Entry], _ stored: [GitHubLoopStore.Stored], now: Date,
        at: String, ids: String
    ) async {
        switch step.action {
        case .wait(let why):
            return say("\(at): wait: \(why) \(ids)")
        case .ignore(let why):
            // best effort: an entry left pending is ignored again next pass
            for e in mine { _ = try? await effects.mark(e, state: "done") }
            return say("\(at): ignore: \(why) \(ids)")
        default: break
        }
        guard let taken = await take(mine) else { return say("\(at): skipped, taken by another loop \(ids)") }
        let what = Self.describe(step.action)
        let state: String
        switch await ending(step.action, taken, stored, now: now) {
        case .done:
            state = "done"
            say("\(at): \(what) \(ids)")
        case .failed(let error):
            state = "failed"
            say("\(at): \(what) failed: \(Self.oneLine(error)) \(ids)")
        case .again:
            state = "pending"
            say("\(at): \(what): its thread changed meanwhile; planned again next pass \(ids)")
        case .left:
            return say("\(at): \(what): its thread could not be saved; reconciled next pass \(ids)")
        }
        for e in taken {
            // nil: another loop changed it; said below
            let marked = try? await effects.mark(e, state: state)
            if marked == nil {
                say("\(at): delivery \(e.event.delivery) was changed by another loop; not marked \(state)")
            }
        }
    }

    /// `act`, an error thrown by it (a step that found no thread) as `failed`.
    func ending(
        _ action: GitHubLoopPlanner.Action, _ taken: [GitHubInbox.Entry], _ stored: [GitHubLoopStore.Stored],
        now: Date
    ) async -> Ended {
        do { return try await act(action, taken, stored, now: now) } catch { return .failed(error) }
    }

    /// Marks every entry `taken`; nil (the ones taken put back to pending) when another loop took one first.
    func take(_ entries: [GitHubInbox.Entry]) async -> [GitHubInbox.Entry]? {
        var taken: [GitHubInbox.Entry] = []
        for e in entries {
            // nil: another loop took it (the step is skipped)
            guard let t = try? await effects.mark(e, state: "taken") else {
                // best effort: one left taken is reconciled by a later pass
                for back in taken { _ = try? await effects.mark(back, state: "pending") }
                return nil
            }
            taken.append(t)
        }
        return taken
    }

    static func describe(_ a: GitHubLoopPlanner.Action) -> String {
        switch a {
        case .start(let t, _, _): "start \(t.workspace)"
        case .task(let ws, let texts, _, _, _): "task \(ws)" + (texts.count > 1 ? " (\(texts.count) asks)" : "")
        case .remove(let ws, let merged): "remove \(ws) (pull request \(merged ? "merged" : "closed"))"
        case .reply: "reply"
        case .refuse(let ws, _): "refuse \(ws): its budget is spent"
        case .ignore: "ignore"
        case .wait: "wait"
        }
    }

    /// An error as one line of at most 300 characters: its message, then its hint.
    static func oneLine(_ error: Error) -> String {
        let text: String
        if let e = error as? SoError {
            text = e.message + (e.hint.map { "; hint: \($0)" } ?? "")
        } else {
            text = String(describing: error)
        }
        return String(text.map { $0.isNewline ? " " : $0 }.prefix(300))
    }
}
