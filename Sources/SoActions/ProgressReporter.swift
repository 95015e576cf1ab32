import Foundation
import Logging
import SoBasics

/// One line per phase: plain text (with a marker on a terminal) or JSON lines for CI. Phases and the
/// final line go through swift-log (`so.progress`); `ProgressLogHandler` writes them to the console in
/// the chosen mode. The live status line of a terminal is not a log line: it is redrawn in place.
package struct ProgressReporter: Sendable {
    let ctx: SoContext
    let mode: ProgressMode
    let logger: Logger

    package init(ctx: SoContext, mode: ProgressMode) {
        self.ctx = ctx
        self.mode = mode
        let console = ctx.console
        var logger = Logger(label: "so.progress") { _ in ProgressLogHandler(console: console, mode: mode) }
        logger.logLevel = ctx.options.quiet ? .critical : .info
        self.logger = logger
    }

    var json: Bool { mode == .json }
    /// A terminal in auto mode: waits redraw one status line in place instead of printing lines.
    package var isLive: Bool { mode == .auto && ctx.console.isTerminal && !ctx.options.quiet }

    /// A transient status line on a terminal (spinner, elapsed time); nothing elsewhere.
    package func live(_ text: String, elapsed: Double) {
        guard isLive else { return }
        let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
        ctx.console.status("\(frames[Int(elapsed) % frames.count]) \(text) (\(Int(elapsed))s)")
    }

    package func phase(_ name: String, _ detail: String = "") {
        logger.info("\(name)", metadata: ["event": "phase", "detail": .string(detail)])
    }

    package func done(_ message: String) {
        logger.info("\(message)", metadata: ["event": "done"])
    }
}
