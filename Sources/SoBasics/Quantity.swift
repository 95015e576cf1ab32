import Foundation

/// Compose and spec sizes and CPU counts as Kubernetes quantities.
public enum Quantity {
    /// A Kubernetes quantity as a number: CPUs (`250m` → 0.25), or bytes (`1Gi`, `10G`); 0 when not one.
    public static func value(_ q: String, cpu: Bool) -> Double {
        if cpu { return q.hasSuffix("m") ? (Double(q.dropLast()) ?? 0) / 1000 : Double(q) ?? 0 }
        let units: [(String, Double)] = [
            ("Ki", 1024.0), ("Mi", 1048576.0), ("Gi", 1073741824.0), ("Ti", 1099511627776.0),
            ("Pi", 1125899906842624.0),
            ("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12), ("P", 1e15),
        ]
        for (u, f) in units where q.hasSuffix(u) { return (Double(q.dropLast(u.count)) ?? 0) * f }
        return Double(q) ?? 0
    }

    /// CPU: `0.5` → `500m`, `2` → `2`, `250m` stays. nil when not a CPU amount.
    public static func cpu(_ text: String) -> String? {
        let t = text.trimmedSpaces
        if t.range(of: #"^[0-9]+m$"#, options: .regularExpression) != nil { return t }
        guard let v = Double(t), v > 0 else { return nil }
        let milli = Int((v * 1000).rounded())
        return milli % 1000 == 0 ? String(milli / 1000) : "\(milli)m"
    }

    /// Memory and storage. Kubernetes forms (`512Mi`, `1Gi`, `10G`) are kept for storage; docker/compose
    /// units (`512m`, `512M`, `1g`, `1gb`) mean binary sizes and become `512Mi`, `1Gi` (a bare Kubernetes
    /// `m` would mean milli-bytes). `binaryLetters` says whether `M`/`G` alone mean MiB/GiB (compose memory).
    public static func bytes(_ text: String, binaryLetters: Bool) -> String? {
        let t = text.trimmedSpaces
        guard let m = t.range(of: #"^([0-9]+(\.[0-9]+)?)\s*([A-Za-z]*)$"#, options: .regularExpression) else {
            return nil
        }
        _ = m
        let number = String(t.prefix { $0.isNumber || $0 == "." })
        let unit = t.dropFirst(number.count).trimmedSpaces
        switch unit {
        case "": return number.contains(".") ? nil : number
        case "Ki", "Mi", "Gi", "Ti", "Pi": return number + unit
        case "k", "K", "kb", "KB", "Kb", "kB":
            return binaryLetters || unit.lowercased() != "k" ? scaled(number, "Ki") : number + "k"
        case "m", "mb", "MB", "Mb", "mB": return scaled(number, "Mi")
        case "M": return binaryLetters ? scaled(number, "Mi") : number + "M"
        case "g", "gb", "GB", "Gb", "gB": return scaled(number, "Gi")
        case "G": return binaryLetters ? scaled(number, "Gi") : number + "G"
        case "t", "tb", "TB": return scaled(number, "Ti")
        case "T": return binaryLetters ? scaled(number, "Ti") : number + "T"
        case "b", "B": return number.contains(".") ? nil : number
        default: return nil
        }
    }

    /// `1.5Gi` is not a valid quantity: fractional binary sizes go one unit down.
    static func scaled(_ number: String, _ unit: String) -> String {
        guard number.contains("."), let v = Double(number) else { return number + unit }
        let lower = ["Ki": "", "Mi": "Ki", "Gi": "Mi", "Ti": "Gi"][unit] ?? ""
        let n = Int((v * 1024).rounded())
        return lower.isEmpty ? String(n) : "\(n)\(lower)"
    }

    /// Seconds in a compose duration (`1m30s`, `500ms`, `10s`, `2h`); nil when unreadable.
    public static func seconds(_ text: String) -> Int? {
        guard let v = DurationText.seconds(text) else { return nil }
        return Double(text.trimmedSpaces) != nil ? Int(v.rounded(.up)) : max(1, Int(v.rounded(.up)))
    }
}
