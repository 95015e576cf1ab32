import Foundation
import SoBasics
import Subprocess

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

public struct StandardConsole: Console {
    /// Erases a transient status line before normal output on a terminal.
    static let clearLine = "\r\u{1B}[2K"
    public init() {}
    public func out(_ line: String) {
        FileHandle.standardOutput.write(Data(((isTerminal ? Self.clearLine : "") + line + "\n").utf8))
    }
    public func err(_ line: String) {
        if isTerminal { FileHandle.standardOutput.write(Data(Self.clearLine.utf8)) }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
    public func status(_ line: String) {
        guard isTerminal else { return }
        let width = 120
        let text = line.count > width ? String(line.prefix(width - 1)) + "…" : line
        FileHandle.standardOutput.write(Data((Self.clearLine + text).utf8))
    }
    public var isTerminal: Bool { isatty(1) == 1 }
    public func ask(_ question: String) -> String? {
        guard isatty(0) == 1 && isTerminal else { return nil }
        FileHandle.standardOutput.write(Data(question.utf8))
        return readLine() ?? ""
    }
}
