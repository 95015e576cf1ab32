import Foundation
import Logging
import SoActions
import SoAuthoring
import SoDeploy
import SoWorkspace

/// Tracing through swift-log: `SO_TRACE_API=1` shows one line per API request on stderr (`api: GET
/// /api/v1/... 200 12ms`, what the benchmarks count); `SO_TRACE_API=2` also lets through what the HTTP
/// client logs at trace level (the same logger is handed to it). Otherwise quiet. Log lines never carry headers or bodies (tokens, Secrets).
enum Tracing {
    static func logger(_ label: String, environment: [String: String]) -> Logger {
        var logger = Logger(label: label) { label in StderrLogHandler(label: label) }
        switch environment["SO_TRACE_API"] {
        case "1": logger.logLevel = .debug
        case "2": logger.logLevel = .trace
        default: logger.logLevel = .critical
        }
        return logger
    }
}
