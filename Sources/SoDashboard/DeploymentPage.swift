import Foundation
import SoBasics
import SoDeploy
import SoWorkspace

/// A deployment's page: its workloads, pods, failing containers' last lines, ingress hosts, recent events,
/// config keys and a live log per service; a workspace's also has its checkout, its tasks and a task's
/// report and output, and the box that queues a task.
public enum DeploymentPage {
    public static func page(
        _ s: DashboardSnapshot, _ l: DeploymentListing, _ d: DeploymentDetail?, task: Int?, _ p: PageContext
    ) -> String {
        let ns = HTML.urlComponent(l.namespace)
        let workspace = l.workspaceAt != nil
        var controls = ""
        if p.canAct(l) {
            let fields = [("namespace", l.namespace), ("back", "/d/\(ns)")]
            controls += PageParts.action("start", "Start", csrf: p.csrf, fields: fields)
            controls += PageParts.action("stop", "Stop", csrf: p.csrf, fields: fields)
            if workspace { controls += PageParts.action("down", "Down", csrf: p.csrf, fields: fields, danger: true) }
        }
        let queue =
            workspace && p.canAct(l)
            ? """
            <form method="post" action="/actions" class="queue">\
            <input type="hidden" name="csrf" value="\(HTML.escape(p.csrf))">\
            <input type="hidden" name="action" value="task">\
            <input type="hidden" name="namespace" value="\(HTML.escape(l.namespace))">\
            <input type="hidden" name="back" value="/d/\(ns)">\
            <label>Queue a task <textarea name="text" rows="2" required placeholder="what the agent should do"></textarea></label>\
            <button type="submit">Queue</button></form>
            """ : ""
        let body = """
            <main>
            <h1>\(HTML.escape(l.name))\(workspace ? " <span class=\"tag\">workspace</span>" : "")</h1>
            <p class="meta">stack \(HTML.escape(l.stack)) · namespace \(HTML.escape(l.namespace)) · \
            \(HTML.escape(l.host.isEmpty || l.host == p.hostName ? l.directory : "\(l.host):\(l.directory)"))</p>
            <div class="controls">\(controls)</div>
            <p id="said" class="said" role="status"></p>
            \(queue)
            <div id="live" aria-live="polite">\(live(s, l, d, task: task, p))</div>
            \(logs(s, l))
            </main>
            """
        let query = task.map { "&task=\($0)" } ?? ""
        return HTML.page(
            title: l.name, live: "/events?ns=\(ns)\(query)", body: body, nav: .other, github: p.github != nil)
    }

    public static func live(
        _ s: DashboardSnapshot, _ l: DeploymentListing, _ d: DeploymentDetail?, task: Int?, _ p: PageContext
    ) -> String {
        var out = PageParts.problem(s.problem.map { "the cluster could not be read: \($0)" })
        out +=
            "<p class=\"meta\">\(PageParts.ready(l, p.now)) · age \(PageParts.ago(l.createdAt, p.now)) · "
            + "TTL \(PageParts.ttl(l, p.now)) · idle \(HTML.escape(PageParts.idle(l, p.now)))</p>"
        if l.workspaceAt != nil { out += WorkspaceParts.all(s.workspaces[l.namespace], l, task: task, p) }
        guard let d else { return out + PageParts.empty("reading…") }
        // A pod that cannot run for now (its volume's node cordoned or gone), one line each.
        out += d.status.problems.map(PageParts.problem).joined()
        out += PageParts.section("Workloads", workloads(d), id: "workloads")
        out += PageParts.section("Pods", pods(s.pods[l.namespace] ?? [], d), id: "pods")
        if !d.status.ingressHosts.isEmpty { out += PageParts.section("Ingress", ingress(d), id: "ingress") }
        out += PageParts.section("Events", events(d), id: "events")
        out += PageParts.section("Config", config(d), id: "config")
        return out
    }

    static func workloads(_ d: DeploymentDetail) -> String {
        guard !d.status.workloads.isEmpty else { return PageParts.empty("none: the deployment is stopped") }
        return HTML.table(
            ["Kind", "Name", "State"],
            d.status.workloads.map {
                [
                    HTML.escape($0.kind), HTML.escape($0.name),
                    $0.ready ? PageParts.badge($0.state) : PageParts.badge("rolling") + " " + HTML.escape($0.state),
                ]
            })
    }

    static func pods(_ pods: [PodSummary], _ d: DeploymentDetail) -> String {
        guard !pods.isEmpty else { return PageParts.empty("no pods") }
        var out = HTML.table(
            ["Pod", "Service", "Phase", "Ready", "Restarts", "Not running"],
            pods.map { p in
                [
                    HTML.escape(p.name), HTML.escape(p.component), HTML.escape(p.phase), HTML.escape(p.ready),
                    "\(p.restarts)",
                    p.notRunning.isEmpty
                        ? "-"
                        : HTML.escape(p.notRunning.map { "\($0.container): \($0.reason)" }.joined(separator: ", ")),
                ]
            }, id: "pods-table")
        for f in d.failing {
            out +=
                "<h3>\(HTML.escape(f.container)): \(HTML.escape(f.reason))</h3><pre class=\"log\">\(HTML.escape(f.lines))</pre>"
        }
        return out
    }

    static func ingress(_ d: DeploymentDetail) -> String {
        let tls = Set(d.status.certificates.map(\.host))
        return "<ul>"
            + d.status.ingressHosts.map { h in
                "<li>" + HTML.link("\(tls.contains(h) ? "https" : "http")://\(h)/", h) + "</li>"
            }.joined() + "</ul>"
            + (d.status.certificates.isEmpty
                ? ""
                : HTML.table(
                    ["Host", "Certificate Secret", "Present"],
                    d.status.certificates.map {
                        [HTML.escape($0.host), HTML.escape($0.secret), $0.present ? "yes" : "missing"]
                    }))
    }

    static func events(_ d: DeploymentDetail) -> String {
        guard !d.events.isEmpty else { return PageParts.empty("no recent events") }
        return HTML.table(
            ["Time", "Type", "Reason", "Object", "Message"],
            d.events.map {
                [
                    HTML.escape($0.time), HTML.escape($0.type), HTML.escape($0.reason), HTML.escape($0.object),
                    HTML.escape($0.message),
                ]
            }, id: "events-table")
    }

    static func config(_ d: DeploymentDetail) -> String {
        guard !d.config.isEmpty else { return PageParts.empty("no ConfigMaps or Secrets") }
        return HTML.table(
            ["Kind", "Name", "Keys (a Secret's values are never shown)"],
            d.config.map {
                [HTML.escape($0.kind), HTML.escape($0.name), HTML.escape($0.keys.joined(separator: ", "))]
            },
            id: "config-table")
    }

    /// A live log per service, followed while its box is open (outside the part drawn again).
    static func logs(_ s: DashboardSnapshot, _ l: DeploymentListing) -> String {
        let containers = Set((s.pods[l.namespace] ?? []).flatMap(\.containers)).sorted()
        guard !containers.isEmpty else { return "" }
        let ns = HTML.urlComponent(l.namespace)
        return PageParts.section(
            "Logs",
            containers.map { c in
                "<details class=\"logbox\"><summary>\(HTML.escape(c))</summary>"
                    + "<pre class=\"log\" data-follow=\"/logs?ns=\(ns)&amp;container=\(HTML.urlComponent(c))\"></pre></details>"
            }.joined(), id: "logs")
    }
}
