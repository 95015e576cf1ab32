import Foundation
import SoBasics
import SoDeploy
import SoGitHub
import SoWorkspace

/// The GitHub loop's page: each issue the loop works on (its pull request, its workspace, what it has spent and
/// what its budget leaves), the inbox's deliveries by state and what this server's receiver answered since it
/// started. Names and numbers only: no title, body, comment, token or signature is ever on it, and every name read
/// from the cluster is text (a thread is anyone's to write who can write ConfigMaps in `so-github`).
public enum GitHubPage {
    public static func page(_ s: DashboardSnapshot, _ p: PageContext) -> String {
        let body = """
            <main>
            <h1>GitHub loop</h1>
            <p class="meta">Issues and pull requests the loop works on, from its threads in the namespace \
            \(GitHubInbox.namespace); names and numbers only, never an issue's or a comment's text.</p>
            <div id="live" aria-live="polite">\(live(s, p))</div>
            </main>
            """
        return HTML.page(title: "GitHub loop", live: "/events?github=1", body: body, nav: .github, github: true)
    }

    /// The part drawn again on each change.
    public static func live(_ s: DashboardSnapshot, _ p: PageContext) -> String {
        let g = s.github
        let read = g.readAt == nil && g.problem == nil ? PageParts.empty("not read yet") : ""
        return PageParts.problem(g.problem.map { "the loop's state could not be read: \($0)" }) + read
            + PageParts.section("Issues and pull requests", threads(s, p), id: "threads")
            + PageParts.section("Deliveries", deliveries(g, p), id: "deliveries")
    }

    static func threads(_ s: DashboardSnapshot, _ p: PageContext) -> String {
        let threads = s.github.threads
        guard !threads.isEmpty else { return PageParts.empty("no issue in the loop") }
        let budget = p.github?.budget
        let rows = threads.map { t -> [String] in
            [
                issue(t), pullRequest(t), workspace(t, s), state(t), tasks(t, budget), cost(t, budget),
                wallClock(t, budget, p.now),
            ]
        }
        let header = ["Issue", "Pull request", "Workspace", "State", "Tasks", "Cost", "Wall-clock"]
        return HTML.table(header, rows, id: "threads-table")
            + (budget == nil
                ? "<p class=\"meta\">No loop config given (--github-loop-config): what is spent, not what is left.</p>"
                : "")
    }

    /// `OWNER/NAME#N` linked to the issue on github.com; a repository that is not a name GitHub allows is text.
    static func issue(_ t: GitHubLoopThread) -> String {
        let text = "\(t.repository)#\(t.issue)"
        guard GitHubEvent.isRepositoryName(t.repository), t.issue > 0 else { return HTML.escape(text) }
        return HTML.link("https://github.com/\(t.repository)/issues/\(t.issue)", text)
    }

    static func pullRequest(_ t: GitHubLoopThread) -> String {
        guard let n = t.pullRequest else { return "-" }
        guard GitHubEvent.isRepositoryName(t.repository), n > 0 else { return HTML.escape("#\(n)") }
        return HTML.link("https://github.com/\(t.repository)/pull/\(n)", "#\(n)")
    }

    /// The workspace linked to its deployment's page when the cluster has it.
    static func workspace(_ t: GitHubLoopThread, _ s: DashboardSnapshot) -> String {
        guard let l = s.listings.first(where: { $0.name == t.workspace && $0.pool == nil }) else {
            return HTML.escape(t.workspace) + (t.removed ? "" : " <span class=\"tag\">not on the cluster</span>")
        }
        return "<a href=\"/d/\(HTML.urlComponent(l.namespace))\">\(HTML.escape(t.workspace))</a>"
    }

    static func state(_ t: GitHubLoopThread) -> String {
        t.removed ? PageParts.badge("removed") : t.running ? PageParts.badge("running") : PageParts.badge("idle")
    }

    static func tasks(_ t: GitHubLoopThread, _ b: GitHubLoopConfig.Budget?) -> String {
        guard let n = b?.tasks else { return "\(t.tasks)" }
        return "\(t.tasks) / \(n)" + (t.tasks >= n ? " " + PageParts.badge("spent") : "")
    }

    static func cost(_ t: GitHubLoopThread, _ b: GitHubLoopConfig.Budget?) -> String {
        guard let c = b?.cost else { return dollars(t.cost) }
        return "\(dollars(t.cost)) / \(dollars(c))" + (t.cost >= c ? " " + PageParts.badge("spent") : "")
    }

    static func dollars(_ v: Double) -> String { v.isFinite ? String(format: "$%.2f", v) : "-" }

    /// What is left of the wall-clock budget since the first task, or how long it has been without one.
    static func wallClock(_ t: GitHubLoopThread, _ b: GitHubLoopConfig.Budget?, _ now: Date) -> String {
        guard let started = t.startedAt, !t.removed else { return "-" }
        // Bounded: a thread's time is anyone's to write, and a duration past 300 years is not shown as one.
        let elapsed = min(max(0, now.timeIntervalSince(started)), 1e10)
        guard let w = b?.wallClock else {
            return HTML.escape(DurationText.short(Int(elapsed)) + " since the first task")
        }
        guard elapsed < w else {
            return PageParts.badge("spent") + " " + HTML.escape("(\(DurationText.short(Int(w))))")
        }
        return HTML.escape("\(DurationText.short(Int(w - elapsed))) left of \(DurationText.short(Int(w)))")
    }

    /// The inbox's entries by state (read from the cluster) and the receiver's answers since this server started
    /// (from its memory).
    static func deliveries(_ g: GitHubView, _ p: PageContext) -> String {
        let inbox = GitHubInbox.states.map { ($0, "\(g.inbox[$0] ?? 0)") }
        var out =
            "<h3>In the inbox</h3>"
            + cards(inbox, id: "inbox")
            + "<p class=\"meta\">Every delivery kept in the cluster (a Secret each in \(GitHubInbox.namespace)), by "
            + "state: pending until a loop takes it, then done or failed.</p>"
        guard let setup = p.github, !setup.receiving.isEmpty else {
            return out
                + "<p class=\"meta\">This dashboard receives no deliveries (no --github-repo): the inbox is filled "
                + "by another receiver.</p>"
        }
        let r = g.receiver
        let answered: [(String, String)] = [
            ("accepted", "\(r[.accepted])"), ("duplicate", "\(r[.duplicate])"),
            ("refused 401", "\(r[.refused(401)])"), ("refused 403", "\(r[.refused(403)])"),
            ("refused 400", "\(r[.refused(400)])"), ("refused 204", "\(r[.refused(204)])"),
            ("failed 503", "\(r[.unstored])"), ("ping", "\(r[.ping])"),
        ]
        let since = r.since.map { " (" + Timestamps.rfc3339($0) + ")" } ?? ""
        out +=
            "<h3>Received by this server since it started</h3>" + cards(answered, id: "received", small: true)
            + "<p class=\"meta\">What POST /github/webhook answered for "
            + HTML.escape(setup.receiving.sorted().joined(separator: ", ") + " since this server started" + since)
            + ", kept in its memory only: a restart counts from 0. Accepted: stored; duplicate: a "
            + "redelivery, already stored; 401: no valid signature; 403: another repository; 400: malformed or over "
            + "25 MB; 204: an event the loop does not handle; 503: the inbox could not be written.</p>"
        return out
    }

    static func cards(_ cells: [(String, String)], id: String, small: Bool = false) -> String {
        "<div class=\"cards\(small ? " small" : "")\" id=\"\(id)\">"
            + cells.map {
                "<div class=\"card\"><div class=\"label\">\(HTML.escape($0.0))</div>"
                    + "<div class=\"value\">\(HTML.escape($0.1))</div></div>"
            }.joined() + "</div>"
    }
}
