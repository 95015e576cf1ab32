import Foundation
import SoBasics

/// `ports:` entries in short (`[IP:][HOST:]CONTAINER[/PROTO]`, ranges) and long syntax.
public enum ComposePorts {
    public static func parse(_ n: YNode) throws -> [ComposePort] {
        if n.isMapping {
            let m = try n.mapping("a port")
            let target = try m.required("target").int("'target'")
            let published = try m.nonNull("published").map { try $0.string("'published'") }
            let proto = try m.string("protocol") ?? "tcp"
            let ip = try m.string("host_ip")
            m.accept(["mode", "name", "app_protocol"])
            m.finish(into: DiagnosticSink())
            var raw = "\(target)"
            if let published { raw = "\(published):\(raw)" }
            if let ip { raw = "\(ip):\(published == nil ? ":" : "")\(raw)" }
            if proto != "tcp" { raw += "/\(proto)" }
            return [ComposePort(hostIP: ip, hostPort: published, containerPort: target, proto: proto, raw: raw)]
        }
        let raw = try n.string("a port")
        return try parseShort(raw, node: n)
    }

    static func parseShort(_ raw: String, node: YNode) throws -> [ComposePort] {
        func bad(_ why: String) -> SoError {
            node.error("invalid port '\(raw)': \(why)", hint: "write CONTAINER, HOST:CONTAINER or IP:HOST:CONTAINER, optionally /udp")
        }
        var text = raw.trimmingCharacters(in: .whitespaces)
        var proto = "tcp"
        if let slash = text.lastIndex(of: "/") {
            proto = String(text[text.index(after: slash)...]).lowercased()
            text = String(text[..<slash])
            guard ["tcp", "udp", "sctp"].contains(proto) else { throw bad("unknown protocol '\(proto)'") }
        }
        var ip: String?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw bad("unclosed '['") }
            ip = String(text[text.index(after: text.startIndex)..<close])
            text = String(text[text.index(after: close)...])
            if text.hasPrefix(":") { text.removeFirst() }
        }
        var parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        if ip == nil, parts.count == 3 { ip = parts.removeFirst() }
        guard parts.count == 1 || parts.count == 2, !parts.last!.isEmpty else { throw bad("expected at most IP:HOST:CONTAINER") }
        let container = try range(parts.last!, bad)
        let host: (Int, Int)? = parts.count == 2 && !parts[0].isEmpty ? try range(parts[0], bad) : nil
        if let h = host, h.1 - h.0 != container.1 - container.0, h.0 != h.1 {
            throw bad("host and container ranges differ in length")
        }
        return (0...(container.1 - container.0)).map { i in
            let c = container.0 + i
            let hostPort: String? = host.map { h in h.0 == h.1 ? String(h.0) : String(h.0 + i) }
            return ComposePort(hostIP: ip.flatMap { $0.isEmpty ? nil : $0 }, hostPort: hostPort, containerPort: c, proto: proto, raw: raw)
        }
    }

    static func range(_ s: String, _ bad: (String) -> SoError) throws -> (Int, Int) {
        let bounds = s.split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count <= 2, let lo = Int(bounds[0]), let hi = Int(bounds.last!), lo >= 0, hi <= 65535, lo <= hi else {
            throw bad("'\(s)' is not a port or port range")
        }
        return (lo, hi)
    }
}

/// `volumes:` entries of a service, short (`SRC:DST[:OPTS]`, `DST`) and long syntax.
public enum ComposeVolumes {
    public static func parse(_ n: YNode, diagnostics: DiagnosticSink) throws -> ComposeVolumeMount {
        if n.isMapping {
            let m = try n.mapping("a volume")
            let typeText = try m.string("type") ?? "volume"
            guard let kind = ComposeVolumeMount.Kind(rawValue: typeText) else {
                throw m.value("type")!.error("unknown volume type '\(typeText)'", hint: "use volume, bind or tmpfs")
            }
            let target = try m.required("target").string("'target'")
            let source = try m.string("source")
            let ro = try m.bool("read_only") ?? false
            m.accept(["bind", "volume", "tmpfs", "consistency", "image"])
            m.finish(into: diagnostics)
            var raw = source.map { "\($0):\(target)" } ?? target
            if ro { raw += ":ro" }
            return ComposeVolumeMount(kind: kind, source: source, target: target, readOnly: ro, options: ro ? "ro" : nil, raw: raw, line: n.line)
        }
        let raw = try n.string("a volume")
        let parts = raw.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        switch parts.count {
        case 1:
            return ComposeVolumeMount(kind: .volume, source: nil, target: parts[0], raw: raw, line: n.line)
        case 2, 3:
            let src = parts[0], dst = parts[1]
            guard !src.isEmpty, !dst.isEmpty else {
                throw n.error("invalid volume '\(raw)'", hint: "write SOURCE:TARGET[:ro]")
            }
            let opts = parts.count == 3 ? parts[2] : nil
            let ro = opts?.split(separator: ",").contains("ro") ?? false
            let isPath = src.hasPrefix("/") || src.hasPrefix(".") || src.hasPrefix("~")
            return ComposeVolumeMount(kind: isPath ? .bind : .volume, source: src, target: dst, readOnly: ro, options: opts, raw: raw, line: n.line)
        default:
            throw n.error("invalid volume '\(raw)'", hint: "write SOURCE:TARGET[:ro] (Windows drive letters are not supported)")
        }
    }
}
