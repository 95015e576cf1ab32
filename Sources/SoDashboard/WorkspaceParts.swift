import Foundation
import SoBasics
import SoDeploy
import SoGitHub
import SoWorkspace

/// A workspace's part of its page: the checkout, the tasks, one task's report and output.
enum WorkspaceParts {
    static func all(_ w: WorkspaceView?, _ l: DeploymentListing, task: Int?, _ p: PageContext) -> String {
        guard let w else { return PageParts.section("Tasks", PageParts.empty("not read yet"), id: "tasks") }
        var out = PageParts.problem(w.problem.map { "the workspace could not be read: \($0)" })
        out += PageParts.section("Checkout", checkout(w), id: "checkout")
        out += PageParts.section("Tasks", tasks(w, l, p), id: "tasks")
        if let t = w.tasks.first(where: { $0.id == task }) ?? w.tasks.max(by: { $0.id < $1.id }) {
            out += PageParts.section("Task \(t.id)", report(t, w, p), id: "task")
        }
        return out
    }

    static func checkout(_ w: WorkspaceView) -> String {
        guard let s = w.state else { return PageParts.empty("read while this page is open") }
        if let problem = s.problem { return PageParts.empty(problem) }
        var out =
            "<p>branch <code>\(HTML.escape(s.branch))</code> · \(s.ahead) commit\(s.ahead == 1 ? "" : "s") ahead of "
            + "<code>\(HTML.escape(s.base.isEmpty ? "its start" : s.base))</code>"
            + (s.origin.isEmpty ? "" : " · origin <code>\(HTML.escape(s.origin))</code>") + "</p>"
        if let losses = s.losses { out += "<p class=\"warn\">not saved: \(HTML.escape(losses))</p>" }
        if !w.commits.isEmpty {
            out +=
                "<ul class=\"commits\">"
                + w.commits.map { "<li><code>\(HTML.escape($0.sha))</code> \(HTML.escape($0.subject))</li>" }.joined()
                + "</ul>"
        }
        return out
    }

    static func tasks(_ w: WorkspaceView, _ l: DeploymentListing, _ p: PageContext) -> String {
        guard !w.tasks.isEmpty else { return PageParts.empty("no tasks yet") }
        let ns = HTML.urlComponent(l.namespace)
        let rows = w.tasks.sorted { $0.id > $1.id }.map { t -> [String] in
            var links: [String] = []
            if let pr = t.pullRequest { links.append(HTML.link(pr, "pull request")) }
            if let issue = t.issue, let i = GitHubIssue(issue) {
                links.append(HTML.link("https://github.com/\(i.owner)/\(i.name)/issues/\(i.number)", issue))
            }
            let cancel =
                p.canAct(l) && !t.ended
                ? PageParts.action(
                    "cancel", "Cancel", csrf: p.csrf,
                    fields: [("namespace", l.namespace), ("id", String(t.id)), ("back", "/d/\(ns)?task=\(t.id)")],
                    danger: true) : ""
            return [
                "<a href=\"/d/\(ns)?task=\(t.id)\">#\(t.id)</a>", PageParts.badge(t.state),
                HTML.escape(PageParts.step(t)),
                "<span class=\"text\">\(HTML.escape(t.title))</span>", PageParts.took(t, p.now), "\(t.commits.count)",
                "\(t.files.count)", t.ended ? HTML.escape(t.cost.text) : "-", links.joined(separator: " "), cancel,
            ]
        }
        return HTML.table(
            ["Task", "State", "Step", "Text", "Took", "Commits", "Files", "Cost", "Links", ""], rows, id: "tasks-table",
            rowAttributes: w.tasks.sorted { $0.id > $1.id }.map {
                " data-task=\"\($0.id)\" data-state=\"\(HTML.escape($0.state))\""
            })
    }

    static func report(_ t: TaskRecord, _ w: WorkspaceView, _ p: PageContext) -> String {
        var out = "<pre class=\"tasktext\">\(HTML.escape(t.text))</pre>"
        out +=
            "<p>\(PageParts.badge(t.state))\(t.exitCode.map { " exit \($0)" } ?? "") · took \(PageParts.took(t, p.now))"
            + " · cost \(HTML.escape(t.ended ? t.cost.text : "when it ends"))"
            + (t.branch.map { " · branch <code>\(HTML.escape($0))</code>\(t.pushed != nil ? " (pushed)" : "")" } ?? "")
            + "</p>"
        if !t.progress.isEmpty {
            out +=
                "<ol class=\"timeline\">"
                + t.progress.map { s in
                    "<li><time>\(s.time.map(Timestamps.rfc3339) ?? "")</time> \(HTML.escape(s.text))</li>"
                }.joined() + "</ol>"
        }
        if !t.commits.isEmpty {
            out +=
                "<h3>Commits</h3><ul class=\"commits\">"
                + t.commits.map { "<li><code>\(HTML.escape($0.sha))</code> \(HTML.escape($0.subject))</li>" }.joined()
                + "</ul>"
        }
        if !t.files.isEmpty {
            out +=
                "<h3>Files</h3><ul class=\"files\">"
                + t.files.map { "<li>\(HTML.escape($0.change)) <code>\(HTML.escape($0.path))</code></li>" }.joined()
                + "</ul>"
        }
        if let o = w.output, o.id == t.id {
            out += "<h3>Output</h3><pre class=\"log\" id=\"task-output\">\(HTML.escape(o.text))</pre>"
        }
        return out
    }
}
