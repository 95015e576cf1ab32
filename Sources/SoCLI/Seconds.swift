import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

/// `--ttl 2h` and friends.
func parseTTL(_ text: String) throws -> Double {
    guard let s = DurationText.seconds(text), s > 0 else {
        throw SoError.usage("'\(text)' is not a duration", hint: "write e.g. 90m, 4h or 2d")
    }
    return s
}

/// `--timeout SECONDS`: a positive number (read even when it starts with '-', so '-5' is named as invalid).
enum Seconds {
    static func parse(_ text: String) throws -> Double {
        guard let s = Double(text), s.isFinite, s > 0 else { throw ValidationError("not a positive number of seconds") }
        return s
    }
}
