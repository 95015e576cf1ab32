import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How deep a thread's stack went while a body ran, without risking the process: the free part of the thread's
/// stack is painted with a pattern before, and the lowest word that no longer holds it is the deepest any frame
/// wrote. A body that goes deeper than a budget fails a test with the figure, where a thread that small would have
/// died with SIGSEGV and taken the whole test binary with it.
enum StackProbe {
    static let pattern: UInt64 = 0x5A3C_C35A_A5C3_3CA5

    /// A sanitizer's build (`.ci/sanitizers` sets its manifest's variable for the tests too; its runtime, where the
    /// process exports it): its frames are larger, and its shadow memory guards the stack this probe paints.
    static var sanitized: Bool {
        let env = ProcessInfo.processInfo.environment
        return env["SO_SANITIZE_OURS"] != nil || env["SO_SANITIZE_CORE"] != nil
            || ["__asan_init", "__tsan_init"].contains { (name: String) in
                dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) != nil
            }
    }

    /// `body`'s result, and the bytes of this thread's stack in use at its deepest (from the stack's top, so the
    /// thread's own first frames count, as they do against a thread's stack size).
    @inline(never) static func deepest<T>(_ body: () throws -> T) throws -> (T, Int) {
        let (low, top) = try bounds()
        let painted = paint(down: low)
        let result = try body()
        return (result, Int(top - firstTouched(low, painted)))
    }

    /// The usable part of this thread's stack: its lowest address above the guard page, and its top.
    static func bounds() throws -> (low: UInt, top: UInt) {
        // glibc's pthread_getattr_np, which Swift's Glibc module leaves out (a GNU extension).
        typealias GetAttr = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_getattr_np") else {
            throw ProbeError.noStack
        }
        var attr = pthread_attr_t()
        guard unsafeBitCast(symbol, to: GetAttr.self)(pthread_self(), &attr) == 0 else { throw ProbeError.noStack }
        defer { pthread_attr_destroy(&attr) }
        var base: UnsafeMutableRawPointer?
        var size = 0
        guard pthread_attr_getstack(&attr, &base, &size) == 0, let base else { throw ProbeError.noStack }
        let low = UInt(bitPattern: base)
        return (low, low + UInt(size))
    }

    /// Paints the stack from `low` up to 16 KiB below this frame (the frames of the painting itself stay above
    /// it); returns the painted part's top.
    @inline(never) static func paint(down low: UInt) -> UInt {
        var here = 0
        let top = withUnsafeMutablePointer(to: &here) { UInt(bitPattern: $0) } - 16 * 1024
        if let start = UnsafeMutableRawPointer(bitPattern: low), top > low {
            start.initializeMemory(as: UInt64.self, repeating: pattern, count: Int(top - low) / 8)
        }
        return top
    }

    /// The lowest address in `low..<top` whose word no longer holds the pattern (`top` if none).
    static func firstTouched(_ low: UInt, _ top: UInt) -> UInt {
        var p = low
        while p < top, UnsafeRawPointer(bitPattern: p)?.load(as: UInt64.self) == pattern { p += 8 }
        return p
    }

    enum ProbeError: Error { case noStack }
}
