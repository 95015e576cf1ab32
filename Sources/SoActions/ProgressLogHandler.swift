import Foundation
import Logging
import SoBasics

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
            console.out(
                (console.isTerminal && mode == .auto ? "▸ " : "") + message + (detail.isEmpty ? "" : " " + detail))
        }
    }
}
