import Foundation
import SoBasics
import SoWorkspace

/// The console the loop's actions write to: their lines on stderr (the loop's stdout is its steps), no transient
/// status, and never a question (a loop has no one to ask).
struct GitHubLoopConsole: Console {
    let base: Console
    func out(_ line: String) { base.err(line) }
    func err(_ line: String) { base.err(line) }
    func ask(_ question: String) -> String? { nil }
    var isTerminal: Bool { false }
    func write(_ bytes: Data, toStdout: Bool) { base.write(bytes, toStdout: false) }
}
