import Foundation
import SoBasics

public enum ProgressMode: String, Sendable, CaseIterable { case auto, plain, json }

/// One line per phase: plain text (with a marker on a terminal) or JSON lines for CI.
struct ProgressReporter: Sendable {
    let ctx: SoContext
    let mode: ProgressMode

    var json: Bool { mode == .json }
    /// A terminal in auto mode: waits redraw one status line in place instead of printing lines.
    var isLive: Bool { mode == .auto && ctx.console.isTerminal && !ctx.options.quiet }

    /// A transient status line on a terminal (spinner, elapsed time); nothing elsewhere.
    func live(_ text: String, elapsed: Double) {
        guard isLive else { return }
        let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
        ctx.console.status("\(frames[Int(elapsed) % frames.count]) \(text) (\(Int(elapsed))s)")
    }

    func phase(_ name: String, _ detail: String = "") {
        if ctx.options.quiet { return }
        if json {
            ctx.console.out(YValueJSON.object(["event": "phase", "phase": name, "detail": detail]))
        } else {
            ctx.console.out((ctx.console.isTerminal && mode == .auto ? "▸ " : "") + name + (detail.isEmpty ? "" : " " + detail))
        }
    }

    func done(_ message: String) {
        if ctx.options.quiet { return }
        if json { ctx.console.out(YValueJSON.object(["event": "done", "message": message])) } else { ctx.console.out(message) }
    }
}

/// `--progress json` lines: through the one JSON writer (SoBasics' `JSONWriter`), keys sorted.
enum YValueJSON {
    static func object(_ pairs: [String: String]) -> String { JSONWriter.encode(pairs, .line) }
}
