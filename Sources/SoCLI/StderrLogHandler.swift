import Foundation
import Logging
import SoActions
import SoAuthoring
import SoDeploy
import SoWorkspace

/// One line per message on stderr: `api: MESSAGE` for the API client (the format the benchmarks read),
/// `LABEL: MESSAGE` otherwise, with metadata appended as `key=value`.
struct StderrLogHandler: MetadataLogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    func log(event: LogEvent) {
        let prefix = label == "so.api" ? "api" : label
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let extra =
            all.isEmpty
            ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        FileHandle.standardError.write(Data("\(prefix): \(event.message)\(extra)\n".utf8))
    }
}
