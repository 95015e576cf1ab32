import Foundation
import ArgumentParser
import SoActions
import SoDeploy
import SoWorkspace
import SoAuthoring
import SoBasics

/// `-o json` output: through the one JSON writer (SoBasics' `JSONWriter`, report layout).
enum JSONOut {
    static func encode<T: Encodable>(_ value: T) -> String { JSONWriter.encode(value, .report) }
}
