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
        Self.write(1, (isTerminal ? Self.clearLine : "") + line + "\n")
    }
    public func err(_ line: String) {
        if isTerminal { Self.write(1, Self.clearLine) }
        Self.write(2, line + "\n")
    }
    public func status(_ line: String) {
        guard isTerminal else { return }
        let width = 120
        let text = line.count > width ? String(line.prefix(width - 1)) + "…" : line
        Self.write(1, Self.clearLine + text)
    }

    /// Writes all of `text` to `fd`. A reader that went away (`so deployment list | head -1`) ends `so` as
    /// SIGPIPE ends a C program, silently with 141 — after the cleanups an interrupt runs (a held Lease is
    /// given up) — instead of a crash with a stack trace (the runtime ignores SIGPIPE, so writes fail with
    /// EPIPE). Standard error gone: nothing is left to say it on, and the work goes on.
    public func write(_ bytes: Data, toStdout: Bool) { Self.write(toStdout ? 1 : 2, Array(bytes)) }

    static func write(_ fd: Int32, _ text: String) { write(fd, Array(text.utf8)) }

    static func write(_ fd: Int32, _ all: [UInt8]) {
        var bytes = all[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                bytes = bytes.dropFirst(n)
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                if n < 0 && errno == EPIPE && fd == 1 { Interrupts.shared.interrupt(signal: SIGPIPE) }
                return
            }
        }
    }

    public var isTerminal: Bool { isatty(1) == 1 }
    public func ask(_ question: String) -> String? {
        guard isatty(0) == 1 && isTerminal else { return nil }
        Self.write(1, question)
        return readLine() ?? ""
    }
}
