import Foundation
import SoBasics
import SoWorkspace

/// What a pass does first and last: the entries a loop left `taken` (it died mid-step, or its thread could not be
/// saved) are reconciled with the threads' steps and the workspaces' tasks, so each is marked once for what
/// happened and none runs twice; and old entries are pruned.
extension GitHubLoopExecutor {
    /// At most this many entries are deleted by a pass.
    static let pruneLimit = 100

    /// Whether a step or entry of `by` marked at `at` may be reconciled at `now`: this loop's (none of its steps is
    /// under way between passes), or older than the config's lease.
    func due(by: String?, at: Date?, now: Date) -> Bool {
        guard by != effects.identity, let at else { return true }
        return now.timeIntervalSince(at) >= config.lease
    }

    /// Reconciles the entries left `taken`: a thread's step that is due is settled (`settle`), with its entries;
    /// an entry that no step holds is marked as its thread's `last` says, or put back to `pending` (the planner
    /// then ignores what its thread shows taken: a comment's id, a label of an issue with a workspace). True when
    /// a thread changed.
    func reconcileTaken(_ stored: [GitHubLoopStore.Stored], now: Date) async throws -> Bool {
        let taken = try await entries("taken")
        var changed = false
        var held: Set<String> = []
        for s in stored {
            guard let step = s.thread.step else { continue }
            held.formUnion(step.deliveries)
            guard due(by: step.by, at: step.at, now: now) else { continue }
            let mine = taken.filter { step.deliveries.contains($0.event.delivery) }
            if await settle(s, step, mine, now: now) { changed = true }
        }
        for e in taken where !held.contains(e.event.delivery) && due(by: e.takenBy, at: e.markedAt, now: now) {
            let d = e.event.delivery
            let last = stored.compactMap(\.thread.last).first { $0.deliveries.contains(d) }
            let state = last?.state ?? "pending"
            // nil: another loop reconciled it first
            guard (try? await effects.mark(e, state: state)) != nil else { continue }
            let ran = last == nil ? "no step of it is recorded" : "its step ended \(state)"
            say("github: \(e.event.repository)#\(e.event.number): reconciled: \(ran); marked \(state) (delivery \(d))")
        }
        return changed
    }

    /// A step that did not end: whether it acted is read from the world (a task above `after` naming the issue in
    /// the workspace; the workspace's record gone after a remove). Done: the thread saved as the step would have,
    /// its entries `done`. Not: the step dropped (a start's thread left removed, so the label starts it again) and
    /// its entries back to `pending`. A world that cannot be read leaves both for the next pass.
    func settle(
        _ s: GitHubLoopStore.Stored, _ step: GitHubLoopStep, _ entries: [GitHubInbox.Entry], now: Date
    ) async -> Bool {
        var t = s.thread
        t.step = nil
        let at = "github: \(t.repository)#\(t.issue)"
        let ids = "(deliver\(step.deliveries.count == 1 ? "y" : "ies") \(step.deliveries.joined(separator: ", ")))"
        let ran: Bool
        do { ran = try await acted(step, entries, &t, now: now) } catch {
            say("\(at): the \(step.kind) of \(t.workspace) cannot be reconciled yet: \(Self.oneLine(error)) \(ids)")
            return false
        }
        if ran {
            t.last = step
            t.last?.state = "done"
        }
        guard await put(t, over: s) != nil else { return false }
        let state = ran ? "done" : "pending"
        for e in entries {
            // nil: another loop changed it meanwhile
            _ = try? await effects.mark(e, state: state)
        }
        let what = ran ? "it ran; done" : "it did not run; planned again"
        say("\(at): reconciled the \(step.kind) of \(t.workspace) left by \(step.by): \(what) \(ids)")
        return true
    }

    /// Whether `step` (its entries `mine`) acted, `t` changed as it would have been saved: a task found is the
    /// loop's, its outcome commented when it ends (`reconcile`), its review comments answered.
    func acted(
        _ step: GitHubLoopStep, _ mine: [GitHubInbox.Entry], _ t: inout GitHubLoopThread, now: Date
    ) async throws -> Bool {
        if step.kind == "remove" {
            guard try await !effects.exists(workspace: t.workspace) else { return false }
            t.removed = true
            t.running = false
            return true
        }
        if step.kind == "start", step.phase != "task" {
            t.removed = true
            return false
        }
        let issue = "\(t.repository)#\(t.issue)".lowercased()
        let work = try await effects.work(workspace: t.workspace, repository: t.repository)
        guard let id = work.tasks.filter({ $0.id > step.after && $0.issue == issue }).map(\.id).min() else {
            if step.kind == "start" { t.removed = true }
            return false
        }
        t.running = true
        t.tasks += 1
        t.startedAt = t.startedAt ?? now
        Self.queued(id, mine, &t)
        t.lastComment = max(t.lastComment, step.lastComment ?? 0)
        t.lastReview = max(t.lastReview, step.lastReview ?? 0)
        if let c = step.lastReviewComment { t.lastReviewComment = max(t.lastReviewComment ?? 0, c) }
        return true
    }

    /// Deletes up to `pruneLimit` entries `done` or `failed` longer ago than the config's `keep-days`, oldest first.
    func prune(now: Date) async {
        let cutoff = now.addingTimeInterval(-Double(config.keepDays) * 86_400)
        let old: [GitHubInbox.Entry]
        do {
            let ended = try await entries("done") + entries("failed")
            old = ended.filter { ($0.markedAt ?? $0.receivedAt ?? now) < cutoff }
                .sorted { ($0.markedAt ?? $0.receivedAt ?? now) < ($1.markedAt ?? $1.receivedAt ?? now) }
        } catch {
            return say("github: old deliveries cannot be listed to prune: \(Self.oneLine(error))")
        }
        // Their bodies' digests are kept first: the same body sent again after its entry went is still refused.
        let going = Array(old.prefix(Self.pruneLimit))
        do {
            try await effects.remember(
                going.compactMap { e in e.digest.map { ($0, e.receivedAt ?? e.markedAt ?? now) } })
        } catch {
            return say("github: old deliveries are not pruned: their digests cannot be kept: \(Self.oneLine(error))")
        }
        var deleted = 0
        for e in going {
            // false or an error: changed or gone meanwhile, or not allowed (said below when none went)
            if (try? await effects.delete(e)) == true { deleted += 1 }
        }
        if deleted > 0 || !old.isEmpty {
            say("github: pruned \(deleted) of \(old.count) deliveries ended over \(config.keepDays) days ago")
        }
    }
}
