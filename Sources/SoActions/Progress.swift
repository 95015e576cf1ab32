import Foundation
import Logging
import SoBasics

public enum ProgressMode: String, Sendable, CaseIterable { case auto, plain, json }

/// One line per phase: plain text (with a marker on a terminal) or JSON lines for CI. Phases and the
/// final line go through swift-log (`so.progress`); `ProgressLogHandler` writes them to the console in
/// the chosen mode. The live status line of a terminal is not a log line: it is redrawn in place.
struct ProgressReporter: Sendable {
    let ctx: SoContext
    let mode: ProgressMode
    let logger: Logger

    init(ctx: SoContext, mode: ProgressMode) {
        self.ctx = ctx
        self.mode = mode
        let console = ctx.console
        var logger = Logger(label: "so.progress") { _ in ProgressLogHandler(console: console, mode: mode) }
        logger.logLevel = ctx.options.quiet ? .critical : .info
        self.logger = logger
    }

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
        logger.info("\(name)", metadata: ["event": "phase", "detail": .string(detail)])
    }

    func done(_ message: String) {
        logger.info("\(message)", metadata: ["event": "done"])
    }
}

/// A log handler whose metadata is its `metadata` dictionary: the subscript swift-log asks of every handler, written once.
public protocol MetadataLogHandler: LogHandler {}

extension MetadataLogHandler {
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
}

/// Writes `so.progress` log events as the progress mode asks: `phase detail` lines (`▸ ` first on a
/// terminal in auto mode), or one JSON object per line (`--progress json`).
struct ProgressLogHandler: MetadataLogHandler {
    let console: Console
    let mode: ProgressMode
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    func log(event: LogEvent) {
        let message = "\(event.message)"
        let fields = event.metadata ?? [:]
        if fields["event"] == "done" {
            console.out(mode == .json ? YValueJSON.object(["event": "done", "message": message]) : message)
            return
        }
        let detail = fields["detail"].map { "\($0)" } ?? ""
        if mode == .json {
            console.out(YValueJSON.object(["event": "phase", "phase": message, "detail": detail]))
        } else {
            console.out((console.isTerminal && mode == .auto ? "▸ " : "") + message + (detail.isEmpty ? "" : " " + detail))
        }
    }
}

/// `--progress json` lines: through the one JSON writer (SoBasics' `JSONWriter`), keys sorted.
enum YValueJSON {
    static func object(_ pairs: [String: String]) -> String { JSONWriter.encode(pairs, .line) }
}
