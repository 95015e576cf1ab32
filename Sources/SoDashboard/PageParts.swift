import Foundation
import SoBasics
import SoDeploy
import SoWorkspace

/// Small pieces the pages share: times, money, states, and the forms of the actions.
enum PageParts {
    static func ago(_ d: Date?, _ now: Date) -> String {
        guard let d else { return "-" }
        return DurationText.short(max(0, Int(now.timeIntervalSince(d)))) + " ago"
    }

    static func took(_ t: TaskRecord, _ now: Date) -> String {
        guard let s = t.startedAt else { return "-" }
        return DurationText.short(max(0, Int((t.endedAt ?? now).timeIntervalSince(s))))
    }

    /// A task's Step cell: the step the agent said last while it runs; once it ended, how many steps it took (its
    /// last step, "thinking" or "→ Bash …", would read as if it still did).
    static func step(_ t: TaskRecord) -> String {
        guard t.ended else { return t.step ?? "-" }
        switch t.progress.count {
        case 0: return "-"
        case 1: return "1 step"
        case let n: return "\(n) steps"
        }
    }

    static func usd(_ v: Double?) -> String { v.map { String(format: "$%.4f", $0) } ?? "-" }

    /// A state as a badge (its class from a fixed list, never from the text).
    static func badge(_ state: String) -> String {
        let kind: String
        switch state {
        case "succeeded", "ready", "warm", "complete": kind = "ok"
        case "running", "queued", "starting", "rolling", "claimed": kind = "busy"
        case "failed", "cancelled", "expired", "terminating", "spent": kind = "bad"
        default: kind = state.hasPrefix("rolling") ? "busy" : "plain"
        }
        return "<span class=\"badge \(kind)\">\(HTML.escape(state))</span>"
    }

    /// The deployment's readiness as `deployment list` says it.
    static func ready(_ l: DeploymentListing, _ now: Date) -> String {
        if l.terminating { return badge("terminating") }
        if l.idleStopped { return badge("idle") }
        if l.deployments == 0 { return badge("stopped") }
        let text = "\(l.readyDeployments)/\(l.deployments)"
        return l.ready ? badge("ready") + " " + text : badge("starting") + " " + text
    }

    static func ttl(_ l: DeploymentListing, _ now: Date) -> String {
        guard let e = l.expiresAt else { return "-" }
        return e <= now ? badge("expired") : "in " + DurationText.short(Int(e.timeIntervalSince(now)))
    }

    static func idle(_ l: DeploymentListing, _ now: Date) -> String {
        if let s = l.idleStoppedAt, l.idleStopped { return "stopped " + ago(s, now) }
        guard let after = l.idleAfter else { return "-" }
        return "after \(DurationText.short(after)) · used \(ago(l.lastUsedAt ?? l.startedAt, now))"
    }

    /// A POST form for one action: a button, the CSRF token, the action's fields (all escaped).
    static func action(_ name: String, _ label: String, csrf: String, fields: [(String, String)], danger: Bool = false)
        -> String
    {
        let hidden = ([("csrf", csrf), ("action", name)] + fields).map {
            "<input type=\"hidden\" name=\"\(HTML.escape($0.0))\" value=\"\(HTML.escape($0.1))\">"
        }.joined()
        return "<form method=\"post\" action=\"/actions\" class=\"action\">\(hidden)"
            + "<button type=\"submit\"\(danger ? " class=\"danger\"" : "")>\(HTML.escape(label))</button></form>"
    }

    static func section(_ title: String, _ body: String, id: String? = nil) -> String {
        "<section\(id.map { " id=\"\($0)\"" } ?? "")><h2>\(HTML.escape(title))</h2>\(body)</section>"
    }

    static func empty(_ text: String) -> String { "<p class=\"empty\">\(HTML.escape(text))</p>" }

    static func problem(_ text: String?) -> String {
        guard let text else { return "" }
        return "<p class=\"problem\" role=\"alert\">\(HTML.escape(text))</p>"
    }
}
