import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

/// `-o json` output: through the one JSON writer (SoBasics' `JSONWriter`, report layout).
enum JSONOut {
    static func encode<T: Encodable>(_ value: T) -> String { JSONWriter.encode(value, .report) }
}
