import Foundation
import SoBasics
import SoDeploy
import SoWorkspace

/// The page of every `so` deployment on the cluster: deployments, pools, the tasks running and queued in every
/// workspace, and what tasks cost today and in all.
public enum EverythingPage {
    public static func page(_ s: DashboardSnapshot, _ p: PageContext) -> String {
        let body = """
            <main>
            <h1>Everything on the cluster</h1>
            <p class="controls"><label>Filter <input id="filter" type="search" placeholder="name, stack, namespace, task" \
            autocomplete="off"></label></p>
            <div id="live" aria-live="polite">\(live(s, p))</div>
            </main>
            """
        return HTML.page(title: "Everything", live: "/events", body: body, nav: .everything, github: p.github != nil)
    }

    /// The part drawn again on each change.
    public static func live(_ s: DashboardSnapshot, _ p: PageContext) -> String {
        PageParts.problem(s.problem.map { "the cluster could not be read: \($0)" }) + summary(s, p)
            + PageParts.section("Deployments", deployments(s, p), id: "deployments")
            + PageParts.section("Pools", pools(s), id: "pools")
            + PageParts.section("Running and queued tasks", tasks(s, p), id: "tasks")
    }

    static func summary(_ s: DashboardSnapshot, _ p: PageContext) -> String {
        let workspaces = s.listings.filter { $0.workspaceAt != nil && $0.pool == nil }.count
        let tasks = s.allTasks.map(\.task)
        let running = tasks.filter { $0.state == "running" }.count
        let queued = tasks.filter { $0.state == "queued" }.count
        let today = Calendar(identifier: .gregorian).startOfDay(for: p.now)
        let costToday = tasks.filter { ($0.endedAt ?? .distantPast) >= today }.compactMap(\.cost.usd).reduce(0, +)
        let costAll = tasks.compactMap(\.cost.usd).reduce(0, +)
        let cells = [
            ("deployments", "\(s.listings.count)", "\(s.listings.filter(\.ready).count) ready"),
            ("workspaces", "\(workspaces)", "\(s.listings.filter { $0.pool != nil }.count) warm in pools"),
            ("tasks", "\(running) running", "\(queued) queued"),
            ("cost today", PageParts.usd(costToday), "\(PageParts.usd(costAll)) in all"),
        ]
        return "<div class=\"cards\" id=\"summary\">"
            + cells.map {
                "<div class=\"card\"><div class=\"label\">\($0.0)</div><div class=\"value\">\(HTML.escape($0.1))</div>"
                    + "<div class=\"sub\">\(HTML.escape($0.2))</div></div>"
            }.joined() + "</div>"
    }

    static func deployments(_ s: DashboardSnapshot, _ p: PageContext) -> String {
        let shown = s.listings.filter { $0.pool == nil }
        guard !shown.isEmpty else { return PageParts.empty("no so deployments on this cluster") }
        let rows = shown.map { l -> [String] in
            let tasks = s.workspaces[l.namespace]?.tasks ?? []
            let active = tasks.filter { $0.state == "running" || $0.state == "queued" }.count
            return [
                "<a href=\"/d/\(HTML.urlComponent(l.namespace))\">\(HTML.escape(l.name))</a>"
                    + (l.workspaceAt != nil ? " <span class=\"tag\">workspace</span>" : ""),
                HTML.escape(l.stack), HTML.escape(l.namespace), PageParts.ago(l.createdAt, p.now),
                PageParts.ready(l, p.now), PageParts.ttl(l, p.now), HTML.escape(PageParts.idle(l, p.now)),
                l.workspaceAt == nil ? "-" : "\(tasks.count) (\(active) active)",
            ]
        }
        let filters = shown.map { l in
            " data-filter=\"\(HTML.escape([l.name, l.stack, l.namespace].joined(separator: " ").lowercased()))\""
        }
        return HTML.table(
            ["Name", "Stack", "Namespace", "Age", "Ready", "TTL", "Idle", "Tasks"], rows, id: "deployments-table",
            rowAttributes: filters)
    }

    static func pools(_ s: DashboardSnapshot) -> String {
        let names = Set(s.listings.compactMap { $0.pool ?? $0.claimedFrom }).sorted()
        guard !names.isEmpty else { return PageParts.empty("no warm pools") }
        let rows = names.map { name -> [String] in
            let members = s.listings.filter { $0.pool == name && !$0.terminating }
            let warm = members.filter { $0.ready }.count
            let claimed = s.listings.filter { $0.claimedFrom == name }
            return [
                HTML.escape(name), "\(warm)", "\(members.count - warm)",
                claimed.isEmpty
                    ? "0"
                    : "\(claimed.count): "
                        + claimed.map {
                            "<a href=\"/d/\(HTML.urlComponent($0.namespace))\">\(HTML.escape($0.name))</a>"
                        }
                        .joined(separator: ", "),
            ]
        }
        return HTML.table(["Pool", "Warm", "Starting", "Claimed"], rows, id: "pools-table")
    }

    static func tasks(_ s: DashboardSnapshot, _ p: PageContext) -> String {
        let active = s.allTasks.filter { $0.task.state == "running" || $0.task.state == "queued" }
        guard !active.isEmpty else { return PageParts.empty("no task is running or queued") }
        let rows = active.map { ns, t -> [String] in
            let name = s.listing(ns)?.name ?? ns
            return [
                "<a href=\"/d/\(HTML.urlComponent(ns))?task=\(t.id)\">\(HTML.escape(name)) #\(t.id)</a>",
                PageParts.badge(t.state), HTML.escape(t.step ?? "-"),
                "<span class=\"text\">\(HTML.escape(t.title))</span>",
                t.state == "running" ? PageParts.took(t, p.now) : PageParts.ago(t.queuedAt, p.now),
            ]
        }
        let filters = active.map { ns, t in
            " data-filter=\"\(HTML.escape(((s.listing(ns)?.name ?? ns) + " " + t.title).lowercased()))\""
        }
        return HTML.table(["Task", "State", "Step", "Text", "Time"], rows, id: "tasks-table", rowAttributes: filters)
    }
}
