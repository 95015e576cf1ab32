import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How long ago this process started, as the kernel says (`/proc/self/stat`'s start time, in clock ticks since
/// boot, against `CLOCK_BOOTTIME`): what a trace's `at=` counts from, so the loading of `so` itself is in it. Zero
/// where /proc does not say.
enum ProcessStart {
    static func age() -> Duration {
        #if os(Linux)
            guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
                let ticks = startTicks(stat)
            else { return .zero }
            var now = timespec()
            guard clock_gettime(CLOCK_BOOTTIME, &now) == 0 else { return .zero }
            let perSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
            let age = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 - Double(ticks) / perSecond
            return age > 0 ? .milliseconds(Int64(age * 1000)) : .zero
        #else
            return .zero
        #endif
    }

    /// Field 22 of `/proc/PID/stat` (the start time): counted after the command's name, which ends at the last `)`.
    static func startTicks(_ stat: String) -> UInt64? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (the state).
        return fields.count > 19 ? UInt64(fields[19]) : nil
    }
}
