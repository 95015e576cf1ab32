import Foundation

/// Durations as people write them: `90`, `30s`, `10m`, `1h30m`, `2d`, `500ms`.
public enum DurationText {
    /// Seconds (fractional), or nil when unreadable. A bare number is seconds.
    public static func seconds(_ text: String) -> Double? {
        var rest = Substring(text.trimmedSpaces)
        if let plain = Double(rest) { return plain }
        var total = 0.0
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let num = rest.prefix { $0.isNumber || $0 == "." }
            guard let v = Double(num) else { return nil }
            rest = rest.dropFirst(num.count)
            let unit = rest.prefix { $0.isLetter || $0 == "µ" }
            rest = rest.dropFirst(unit.count)
            switch unit {
            case "d": total += v * 86400
            case "h": total += v * 3600
            case "m": total += v * 60
            case "s": total += v
            case "ms": total += v / 1000
            case "us", "µs": total += v / 1_000_000
            default: return nil
            }
        }
        return total
    }

    /// `45s`, `12m`, `5h`, `3d`: the largest unit that keeps the number small.
    public static func short(_ seconds: Int) -> String {
        seconds < 120
            ? "\(seconds)s"
            : seconds < 7200 ? "\(seconds / 60)m" : seconds < 172_800 ? "\(seconds / 3600)h" : "\(seconds / 86400)d"
    }
}
