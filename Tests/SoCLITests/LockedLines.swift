import Foundation
import Logging
import SoActions

/// A log handler that keeps each message.
final class LockedLines: MetadataLogHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    var all: [String] { lock.withLock { lines } }
    var logLevel: Logger.Level = .debug
    var metadata: Logger.Metadata = [:]
    func log(event: LogEvent) { lock.withLock { lines.append(event.message.description) } }
}
