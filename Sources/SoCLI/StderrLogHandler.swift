import Foundation
import Logging
import SoActions
import SoAuthoring
import SoDeploy
import SoWorkspace

/// One line per message on stderr: `api: MESSAGE` for the API client (the format the benchmarks read), `proc:
/// MESSAGE` for programs run, `LABEL: MESSAGE` otherwise, with metadata appended as `key=value`, and last
/// `at=+Nms`, when, from the start of `so`'s process (a timeline of one run).
struct StderrLogHandler: MetadataLogHandler {
    /// The start of `so`'s process (the kernel's start time of it, in its ticks of 10 ms; the context's making
    /// where /proc does not say).
    static let origin = ContinuousClock.now - ProcessStart.age()

    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    func log(event: LogEvent) {
        let prefix = ["so.api": "api", "so.proc": "proc", "so.dns": "dns", "so.phase": "phase"][label] ?? label
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let extra =
            all.isEmpty
            ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let since = (ContinuousClock.now - Self.origin).components
        let at = since.seconds * 1000 + since.attoseconds / 1_000_000_000_000_000
        FileHandle.standardError.write(Data("\(prefix): \(event.message)\(extra) at=+\(at)ms\n".utf8))
    }
}
