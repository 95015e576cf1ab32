import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoWorkspace

enum TaskText {
    static func when(_ d: Date?, _ ctx: SoContext) -> String {
        guard let d else { return "-" }
        return DurationText.short(max(0, Int(ctx.clock.now().timeIntervalSince(d)))) + " ago"
    }

    static func took(_ t: TaskRecord, _ ctx: SoContext) -> String {
        guard let s = t.startedAt else { return "-" }
        return DurationText.short(max(0, Int((t.endedAt ?? ctx.clock.now()).timeIntervalSince(s))))
    }

    static func state(_ t: TaskRecord) -> String {
        guard t.ended, let code = t.exitCode, t.state != "succeeded" else { return t.state }
        return "\(t.state) (\(code))"
    }

    /// `tasks show`: the whole report.
    static func report(_ t: TaskRecord, workspace: String, _ ctx: SoContext) -> [String] {
        var lines = ["task \(t.id) in \(workspace): \(state(t))"]
        lines.append(
            "text:     "
                + t.text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n          "))
        lines.append("command:  \(t.command)")
        lines.append("queued:   \(t.queuedAt.map(Timestamps.rfc3339) ?? "-")")
        if let s = t.startedAt { lines.append("started:  \(Timestamps.rfc3339(s))") }
        if let e = t.endedAt { lines.append("ended:    \(Timestamps.rfc3339(e)) (took \(took(t, ctx)))") }
        if let code = t.exitCode { lines.append("exit:     \(code)") }
        if let step = t.step { lines.append("step:     \(TerminalText.safe(step))") }
        if let b = t.branch { lines.append("branch:   \(b)\(t.pushed != nil ? " (pushed)" : "")") }
        if let pr = t.pullRequest { lines.append("pull request: \(pr)") }
        lines.append("cost:     \(t.ended ? t.cost.text : "when it ends")")
        if !t.commits.isEmpty {
            lines.append("commits:")
            lines += t.commits.map { "  \($0.sha.prefix(12)) \($0.subject)" }
        }
        if !t.files.isEmpty {
            lines.append("files:")
            lines += t.files.map { "  \($0.change.padding(toLength: 8, withPad: " ", startingAt: 0)) \($0.path)" }
        }
        if !t.progress.isEmpty {
            lines.append("progress:")
            lines += t.progress.map { "  \($0.time.map(Timestamps.rfc3339) ?? "?") \(TerminalText.safe($0.text))" }
        }
        return lines
    }
}

extension TaskText {
    static func print(_ t: TaskRecord, workspace: String, json: Bool, _ ctx: SoContext) {
        if json {
            ctx.console.out(JSONOut.encode(TaskJSON(t, workspace: workspace)))
        } else {
            for line in report(t, workspace: workspace, ctx) { ctx.console.out(line) }
        }
    }
}
