import Foundation

/// The age of a container's first process, from `cat /proc/uptime /proc/1/stat` run in the container: the
/// machine's seconds since boot, then PID 1's start in clock ticks since boot (field 22 of its stat line; the
/// kernel's user-visible tick is 100 a second). Both are read by the container's own kernel at once, so no clock
/// of the node's or of this host's is compared.
enum ProcessAge {
    /// Clock ticks a second (`USER_HZ`, fixed at 100 for user space on Linux).
    static let ticksPerSecond = 100.0

    /// Seconds PID 1 had run when the files were read; nil when the output is not those two files.
    static func seconds(_ output: String) -> Double? {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: true)
        guard lines.count >= 2, let uptimeField = lines[0].split(separator: " ").first,
            let uptime = Double(uptimeField), let close = lines[1].lastIndex(of: ")")
        else { return nil }
        // The command name (field 2) is in parentheses and may hold spaces or parentheses of its own.
        let fields = lines[1][lines[1].index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (the state): field 22 is fields[19].
        guard lines[1].hasPrefix("1 "), fields.count > 19, let ticks = Double(fields[19]) else { return nil }
        let age = uptime - ticks / ticksPerSecond
        return age >= 0 ? age : nil
    }
}
