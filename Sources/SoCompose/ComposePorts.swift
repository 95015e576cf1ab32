import Foundation
import SoBasics

/// `ports:` entries in short syntax (`[IP:][HOST:]CONTAINER[/PROTO]`, ranges, `[v6]:` host IPs, bare
/// ints) and long syntax (target/published/host_ip/protocol/mode/name/app_protocol).
public enum ComposePorts {
    static let hint =
        "write CONTAINER, HOST:CONTAINER or IP:HOST:CONTAINER, optionally with /udp (ranges like 8000-8010:8000-8010)"

    /// The one parse of a `ports:` entry (short or long syntax), from text already interpolated.
    public static func parse(_ n: YNode, diagnostics: DiagnosticSink = DiagnosticSink()) throws -> [ComposePort] {
        if n.isMapping { return [try parseLong(n, diagnostics: diagnostics)] }
        let raw = try n.string("a port")
        do { return try parseShort(raw) } catch var e as SoError {
            e.location = n.location
            throw e
        }
    }

    /// A `ports:` entry kept unparsed (a file read as written, a spec's `network.ports`): only its shape is checked.
    public static func entry(_ n: YNode) throws -> ComposePortEntry {
        guard n.isMapping else { return ComposePortEntry(node: n, written: try n.string("a port")) }
        let m = try n.mapping("a port")
        let target = try m.required("target", hint: "add 'target:' with the container port").string("'target'")
        let proto = try m.string("protocol")?.lowercased() ?? PortProtocol.tcp.rawValue
        let written = shortForm(
            published: try m.string("published"), target: target, ip: try m.string("host_ip"), proto: proto)
        return ComposePortEntry(node: n, written: written)
    }

    /// Entries read as written, parsed after interpolating each with `environment` (the deployment's
    /// values, as its containers get them); errors name the entry's file:line.
    public static func parse(
        _ entries: [ComposePortEntry], environment: [String: String],
        diagnostics: DiagnosticSink = DiagnosticSink()
    ) throws -> [ComposePort] {
        try entries.flatMap { e in
            var substitutions = ComposeLoader.Substitutions()
            let node = try ComposeLoader.interpolate(
                e.node, path: e.node.file, environment: environment, diagnostics: nil, substitutions: &substitutions)
            do { return try parse(node, diagnostics: diagnostics) } catch let error as SoError {
                throw substitutions.explain(error, file: e.node.file)
            }
        }
    }

    /// A long-syntax entry as the short syntax writes it: `[IP:][PUBLISHED:]TARGET[/PROTO]`.
    static func shortForm(published: String?, target: String, ip: String?, proto: String) -> String {
        var raw = published.map { "\($0):\(target)" } ?? target
        if let ip { raw = (ip.contains(":") ? "[\(ip)]" : ip) + ":" + (published == nil ? ":" : "") + raw }
        if proto != PortProtocol.tcp.rawValue { raw += "/\(proto)" }
        return raw
    }

    /// The short syntax; one entry per port of a container range.
    public static func parseShort(_ raw: String) throws -> [ComposePort] {
        func bad(_ why: String) -> SoError { SoError("invalid port '\(raw)': \(why)", hint: hint) }
        let (written, proto) = try splitProtocol(raw, bad)
        var text = written
        var ip: String?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw bad("unclosed '['") }
            ip = String(text[text.index(after: text.startIndex)..<close])
            text = String(text[text.index(after: close)...])
            guard text.hasPrefix(":") else { throw bad("expected ':' after the IPv6 address") }
            text.removeFirst()
        }
        var parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        if ip == nil, parts.count == 3 { ip = parts.removeFirst() }
        guard parts.count <= 2, let last = parts.last, !last.isEmpty else {
            throw bad("expected at most IP:HOST:CONTAINER")
        }
        if ip?.isEmpty == true { throw bad("empty host IP") }
        let container = try range(last, bad)
        let host = parts.count == 2 && !parts[0].isEmpty ? try range(parts[0], bad) : nil
        return try expand(host: host, container: container, bad).map { hostPorts, containerPort in
            ComposePort(
                hostIP: ip, hostPort: hostPorts.flatMap { $0.count == 1 ? $0.lowerBound : nil },
                hostRange: hostPorts.flatMap { $0.count > 1 ? $0 : nil }, containerPort: containerPort, proto: proto,
                raw: raw)
        }
    }

    /// An `expose:` entry: `PORT`, `PORT/PROTO` or a range `8000-8005[/PROTO]` (one entry per port).
    public static func parseExpose(_ n: YNode) throws -> [ComposePort] {
        let raw = try n.string("an exposed port")
        func bad(_ why: String) -> SoError {
            SoError(
                "invalid exposed port '\(raw)': \(why)", hint: "write PORT or PORT/udp (ranges like 8000-8005)",
                at: n.location)
        }
        let (text, proto) = try splitProtocol(raw, bad)
        if text.contains(":") { throw bad("expose takes container ports only") }
        return try range(text, bad).map { ComposePort(containerPort: $0, proto: proto, raw: raw) }
    }

    /// `TEXT[/PROTO]` → the text and its protocol (tcp when none is written).
    static func splitProtocol(_ raw: String, _ bad: (String) -> SoError) throws -> (String, PortProtocol) {
        let text = raw.trimmedSpaces
        guard let slash = text.lastIndex(of: "/") else { return (text, .tcp) }
        let name = text[text.index(after: slash)...].lowercased()
        guard let p = PortProtocol(rawValue: name) else { throw bad("unknown protocol '\(name)'") }
        return (String(text[..<slash]), p)
    }

    /// Pairs host and container ports: equal-length ranges pair up, a host range with one container
    /// port stays a range (the runtime picks one), a container range without a host part expands.
    static func expand(host: ClosedRange<Int>?, container: ClosedRange<Int>, _ bad: (String) -> SoError) throws -> [(
        ClosedRange<Int>?, Int
    )] {
        guard let host else { return container.map { (nil, $0) } }
        if container.count == 1 { return [(host, container.lowerBound)] }
        guard host.count == container.count else { throw bad("host and container ranges differ in length") }
        return zip(host, container).map { ($0...$0, $1) }
    }

    /// Decimal digits only (no sign, no spaces): a port number as written.
    static func number(_ t: Substring) -> Int? {
        !t.isEmpty && t.allSatisfy { $0.isASCII && $0.isNumber } ? Int(t) : nil
    }

    static func range(_ s: String, _ bad: (String) -> SoError) throws -> ClosedRange<Int> {
        let bounds = s.split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count <= 2, let lo = number(bounds[0]), let hi = number(bounds[bounds.count - 1]), hi <= 65535,
            lo <= hi
        else {
            throw bad("'\(s)' is not a port or port range (0-65535)")
        }
        return lo...hi
    }

    static func parseLong(_ n: YNode, diagnostics: DiagnosticSink) throws -> ComposePort {
        let m = try n.mapping("a port")
        let target = try m.required("target", hint: "add 'target:' with the container port").int("'target'")
        let published = try m.string("published")
        let protoName = try m.string("protocol")?.lowercased() ?? "tcp"
        let ip = try m.string("host_ip")
        guard let proto = PortProtocol(rawValue: protoName) else {
            throw m.error(at: "protocol", "unknown port protocol '\(protoName)'", hint: "use tcp, udp or sctp")
        }
        let hostPorts = try published.map {
            try range($0) { m.error(at: "published", "invalid published port: \($0)", hint: hint) }
        }
        guard (0...65535).contains(target) else {
            throw m.error(at: "target", "port \(target) is out of range", hint: "use 1-65535")
        }
        m.accept(["mode", "name", "app_protocol"])
        m.finish(into: diagnostics)
        let raw = shortForm(published: published, target: "\(target)", ip: ip, proto: proto.rawValue)
        return ComposePort(
            hostIP: ip, hostPort: hostPorts.flatMap { $0.count == 1 ? $0.lowerBound : nil },
            hostRange: hostPorts.flatMap { $0.count > 1 ? $0 : nil }, containerPort: target, proto: proto, raw: raw)
    }
}
