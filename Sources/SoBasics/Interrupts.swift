import Foundation

/// What SIGINT and SIGTERM must undo before `so` exits, and the steps they must not cut in half.
///
/// `install()` routes both signals here: the running step finishes, every registered cleanup runs
/// (newest first), and the process exits with 130 (SIGINT) or 143 (SIGTERM). Tests make their own
/// instance with a `terminate` that records the code, and call `interrupt(signal:)` directly.
public final class Interrupts: @unchecked Sendable {
    public static let shared = Interrupts()

    private let lock = NSRecursiveLock()
    private var cleanups: [(id: Int, run: @Sendable () -> Void)] = []
    private var nextID = 0
    private var interruptedBy: Int32?
    private let terminate: @Sendable (Int32) -> Void

    public init(terminate: @escaping @Sendable (Int32) -> Void = { exit($0) }) {
        self.terminate = terminate
    }

    /// Runs `body` whole (an interrupt arriving meanwhile waits for it). After an interrupt no step
    /// runs: a live process has exited by then; under test, the step throws.
    public func step<T>(_ body: () throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if let s = interruptedBy {
            throw SoError(
                "interrupted by \(s == SIGTERM ? "SIGTERM" : "SIGINT")",
                hint: "run the command again; it removes what the interrupted run left")
        }
        return try body()
    }

    /// Registers `cleanup` to run on an interrupt, inside the current step; returns its id for `done`.
    public func onInterrupt(_ cleanup: @escaping @Sendable () -> Void) -> Int {
        lock.lock()
        defer { lock.unlock() }
        nextID += 1
        cleanups.append((nextID, cleanup))
        return nextID
    }

    /// The work a cleanup guarded is finished (or undone): the cleanup is dropped.
    public func done(_ id: Int) {
        lock.lock()
        defer { lock.unlock() }
        cleanups.removeAll { $0.id == id }
    }

    /// What a signal does: waits for the running step, runs the cleanups, terminates with 128 + signal.
    /// The lock stays held while terminating, so no further step starts in a process about to exit.
    public func interrupt(signal: Int32) {
        lock.lock()
        interruptedBy = signal
        let pending = cleanups.reversed()
        cleanups = []
        for c in pending { c.run() }
        terminate(128 + signal)
        lock.unlock()
    }

    /// Routes SIGINT and SIGTERM to `interrupt(signal:)`, and makes SIGPIPE a failed write. The C handler only writes the signal number to
    /// a pipe (async-signal-safe); a thread reads it and does the work. Handled signals go back to their
    /// default in child processes (exec resets them), unlike ignored ones.
    public func install() {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return }
        signalPipe = fds[1]
        let readEnd = fds[0]
        let thread = Thread { [self] in
            var byte: UInt8 = 0
            while read(readEnd, &byte, 1) != 1 {}
            interrupt(signal: Int32(byte))
        }
        thread.start()
        for s in [SIGINT, SIGTERM] {
            signal(s) { sig in
                var b = UInt8(truncatingIfNeeded: sig)
                _ = write(signalPipe, &b, 1)
            }
        }
        // A reader that went away makes a write fail with EPIPE rather than kill `so` outright: the console
        // then ends it as an interrupt does (its cleanups run, 141). Handled, not ignored, so that the child
        // processes `so` runs get the default back.
        signal(SIGPIPE) { _ in }
    }
}

/// The write end of the pipe `Interrupts.install()` reads; set once, before the handlers.
nonisolated(unsafe) private var signalPipe: Int32 = -1
