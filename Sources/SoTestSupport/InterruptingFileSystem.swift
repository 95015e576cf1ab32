import Foundation
import SoBasics

/// A file system that interrupts the run (as SIGINT/SIGTERM would) after the Nth file written into a
/// temporary `.creating` directory, and remembers what the run had left at the moment it would exit.
public final class InterruptingFileSystem: ForwardingFileSystem, @unchecked Sendable {
    public let interrupts: Interrupts
    public let after: Int
    public let signal: Int32
    public private(set) var writes = 0

    public init(base: FileSystem, interrupts: Interrupts, after: Int, signal: Int32) {
        self.interrupts = interrupts
        self.after = after
        self.signal = signal
        super.init(base: base)
    }

    public override func write(_ data: Data, to path: String) throws {
        try base.write(data, to: path)
        guard path.contains(".creating.") else { return }
        writes += 1
        if writes == after { interrupts.interrupt(signal: signal) }
    }
}
