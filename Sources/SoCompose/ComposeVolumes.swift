import Foundation
import SoBasics

/// `volumes:` entries of a service, short (`SRC:DST[:OPTS]`, `DST`) and long syntax.
public enum ComposeVolumes {
    public static func parse(_ n: YNode, diagnostics: DiagnosticSink) throws -> ComposeVolumeMount {
        n.isMapping ? try parseLong(n, diagnostics: diagnostics) : try parseShort(n)
    }

    /// `DST` (anonymous volume) or `SRC:DST[:OPTS]`; a source starting with `/`, `.` or `~` is a bind.
    static func parseShort(_ n: YNode) throws -> ComposeVolumeMount {
        let raw = try n.string("a volume")
        let parts = raw.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 3, parts.allSatisfy({ !$0.isEmpty }) else {
            throw n.error(
                "invalid volume '\(raw)'",
                hint: "write TARGET, SOURCE:TARGET or SOURCE:TARGET:ro (Windows drive letters are not supported)")
        }
        if parts.count == 1 {
            return ComposeVolumeMount(kind: .volume, source: nil, target: raw, raw: raw, line: n.line)
        }
        let source = parts[0]
        let options = parts.count == 3 ? parts[2] : nil
        let readOnly = options?.split(separator: ",").contains("ro") ?? false
        let isPath = source.hasPrefix("/") || source.hasPrefix(".") || source.hasPrefix("~")
        return ComposeVolumeMount(
            kind: isPath ? .bind : .volume, source: source, target: parts[1], readOnly: readOnly,
            options: options, raw: raw, line: n.line)
    }

    static let typeOptions: [(key: String, known: [String])] = [
        ("bind", ["propagation", "create_host_path", "selinux", "recursive"]),
        ("volume", ["nocopy", "subpath", "labels"]),
        ("tmpfs", ["size", "mode"]),
        ("image", ["subpath"]),
    ]

    static func parseLong(_ n: YNode, diagnostics: DiagnosticSink) throws -> ComposeVolumeMount {
        let m = try n.mapping("a volume")
        let typeText = try m.string("type") ?? "volume"
        guard let kind = ComposeVolumeMount.Kind(rawValue: typeText) else {
            throw (m.value("type") ?? n).error(
                "unsupported volume type '\(typeText)'", hint: "use volume, bind or tmpfs")
        }
        let target = try m.required("target", hint: "add 'target:' with the path in the container").string("'target'")
        let source = try m.string("source")
        if kind == .bind, source == nil {
            throw n.error("bind mount of '\(target)' has no source", hint: "add 'source:' with the host path")
        }
        let readOnly = try m.bool("read_only") ?? false
        for (key, known) in typeOptions {
            guard let sub = m.nonNull(key) else { continue }
            let sm = try sub.mapping("'\(key)' options of volume '\(target)'")
            sm.accept(known)
            sm.finish(into: diagnostics)
        }
        m.accept(["consistency"])
        m.finish(into: diagnostics)
        var raw = source.map { "\($0):\(target)" } ?? target
        if readOnly { raw += ":ro" }
        return ComposeVolumeMount(
            kind: kind, source: source, target: target, readOnly: readOnly, options: readOnly ? "ro" : nil, raw: raw,
            line: n.line)
    }
}
