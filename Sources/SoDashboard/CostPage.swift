import Foundation
import SoBasics
import SoDeploy
import SoWorkspace

/// Cost and time: what tasks cost per day and per workspace, and how long they took, drawn by `so` as inline
/// SVG from the tasks' own reports.
public enum CostPage {
    public static func page(_ s: DashboardSnapshot, _ p: PageContext) -> String {
        let body = """
            <main>
            <h1>Cost and time</h1>
            <p class="meta">From the reports of the tasks read so far; a cost is what the agent reported, never an estimate.</p>
            <div id="live" aria-live="polite">\(live(s, p))</div>
            </main>
            """
        return HTML.page(title: "Cost and time", live: "/events", body: body, nav: .cost, github: p.github != nil)
    }

    public static func live(_ s: DashboardSnapshot, _ p: PageContext) -> String {
        let ended = s.allTasks.filter { $0.task.ended }
        guard !ended.isEmpty else { return PageParts.empty("no task has ended yet") }
        var perDay: [String: Double] = [:]
        let day = DateFormatter()
        day.locale = Locale(identifier: "en_US_POSIX")
        day.timeZone = TimeZone(identifier: "UTC")
        day.dateFormat = "yyyy-MM-dd"
        for (_, t) in ended { perDay[day.string(from: t.endedAt ?? p.now), default: 0] += t.cost.usd ?? 0 }
        let days = (0..<14).reversed().map { day.string(from: p.now.addingTimeInterval(Double(-$0) * 86_400)) }
        var perWorkspace: [String: Double] = [:]
        for (ns, t) in ended { perWorkspace[s.listing(ns)?.name ?? ns, default: 0] += t.cost.usd ?? 0 }
        let top = perWorkspace.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(15)
        let recent = ended.sorted { ($0.task.endedAt ?? .distantPast) > ($1.task.endedAt ?? .distantPast) }.prefix(30)
        let durations = recent.reversed().map { ns, t in
            (
                "\(s.listing(ns)?.name ?? ns) #\(t.id)",
                (t.endedAt ?? p.now).timeIntervalSince(t.startedAt ?? t.endedAt ?? p.now)
            )
        }
        let unreported = ended.filter { !$0.task.cost.reported }.count
        return PageParts.section(
            "Cost per day (UTC, last 14 days)",
            Chart.columns(days.map { (String($0.suffix(5)), perDay[$0] ?? 0) }, format: PageParts.usd), id: "per-day")
            + PageParts.section(
                "Cost per workspace", Chart.bars(top.map { ($0.key, $0.value) }, format: PageParts.usd),
                id: "per-workspace")
            + PageParts.section(
                "Task durations (last \(durations.count))",
                Chart.columns(durations, format: { DurationText.short(Int($0)) }), id: "durations")
            + "<p class=\"meta\">\(ended.count) tasks ended; \(unreported) did not report a cost.</p>"
    }
}
