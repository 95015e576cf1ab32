import Foundation
import Logging
import SoBasics

/// `--progress json` lines: through the one JSON writer (SoBasics' `JSONWriter`), keys sorted.
enum YValueJSON {
    static func object(_ pairs: [String: String]) -> String { JSONWriter.encode(pairs, .line) }
}
