import Foundation
import SoBasics

/// Reads compose files strictly: wrong types are errors with file:line, unknown keys are warnings with
/// a "did you mean", `x-` extensions pass silently.
public enum ComposeLoader {
    /// Reads and decodes `path`. With an `environment`, every scalar value is interpolated from that
    /// dictionary alone (never the process environment); with nil, values stay as written.
    public static func load(_ path: String, fs: FileSystem, environment: [String: String]?, diagnostics: DiagnosticSink,
                            warnUnset: Bool = false) throws -> ComposeFile {
        guard let root = try YAMLFile.load(path, fs: fs, what: "compose file") else {
            throw SoError("compose file is empty", hint: "a compose file has a services: section", at: SourceLocation(file: path))
        }
        return try decode(root, path: path, environment: environment, diagnostics: diagnostics, warnUnset: warnUnset)
    }

    /// `warnUnset`: a variable used bare without a value warns once (as docker compose does).
    public static func decode(_ root: YNode, path: String, environment: [String: String]?, diagnostics: DiagnosticSink,
                              warnUnset: Bool = false) throws -> ComposeFile {
        let doc = try environment.map { try interpolate(root, path: path, environment: $0, diagnostics: warnUnset ? diagnostics : nil) } ?? root
        let m = try doc.mapping("compose file")
        var file = ComposeFile(path: path)
        file.name = try m.string("name")
        guard let services = m.nonNull("services") else {
            throw doc.error("compose file has no services", hint: "add a services: section with at least one service")
        }
        for e in try services.entries("'services'") {
            try checkName(e.key, what: "service name", at: e.keyNode.location)
            let decoder = ServiceDecoder(node: e.value, name: e.key, line: e.keyNode.line, diagnostics: diagnostics, interpolated: environment != nil)
            file.services.append(try decoder.decode())
        }
        file.volumes = try topLevelVolumes(m.nonNull("volumes"), diagnostics: diagnostics)
        file.networks = try topLevelNetworks(m.nonNull("networks"), diagnostics: diagnostics)
        file.secrets = try topLevelResources(m.nonNull("secrets"), what: "secrets", diagnostics: diagnostics)
        file.configs = try topLevelResources(m.nonNull("configs"), what: "configs", diagnostics: diagnostics)
        m.accept(["version", "include", "models"])
        m.finish(into: diagnostics)
        return file
    }

    /// Interpolates every scalar value (not keys); errors name the scalar's file:line.
    /// An unset variable used bare becomes an empty string, with one warning per name (as docker compose).
    static func interpolate(_ root: YNode, path: String, environment: [String: String], diagnostics: DiagnosticSink? = nil) throws -> YNode {
        var warned: Set<String> = []
        return try root.mapScalarValues { text, line in
            do {
                return try Interpolation.interpolate(text, lookup: { environment[$0] }, unset: { name in
                    guard let diagnostics, warned.insert(name).inserted else { return }
                    diagnostics.warn("variable '\(name)' is not set; it defaults to a blank string",
                                     hint: "set \(name) in the spec's config: ('so deploy init --config \(name)=…', "
                                         + "or edit the spec and 'so deploy create --update'), or write ${\(name):-default}",
                                     at: SourceLocation(file: path, line: line))
                })
            } catch var e as SoError {
                e.location = SourceLocation(file: path, line: line)
                throw e
            }
        }
    }

    static func checkName(_ name: String, what: String, at location: SourceLocation) throws {
        guard NameRules.isComponent(name) else {
            throw SoError("invalid \(what) '\(name)'", hint: "use letters, digits, '-', '_' and '.'", at: location)
        }
    }

    /// `external: true` (or the legacy `external: {name: …}`).
    static func externalFlag(_ m: MapReader) throws -> Bool {
        guard let e = m.nonNull("external") else { return false }
        return e.isMapping ? true : try e.bool("'external'")
    }

    /// The entries of an optional top-level section whose values are null or a mapping of known keys.
    static func sectionEntries(_ node: YNode?, what: String, known: [String], diagnostics: DiagnosticSink,
                               _ read: (String, MapReader) throws -> Void = { _, _ in }) throws -> [(key: String, line: Int?, external: Bool)] {
        guard let node else { return [] }
        return try node.entries("'\(what)'").map { e in
            guard !e.value.isNull else { return (e.key, e.keyNode.line, false) }
            let m = try e.value.mapping("\(what) '\(e.key)'")
            let external = try externalFlag(m)
            try read(e.key, m)
            m.accept(known)
            m.finish(into: diagnostics)
            return (e.key, e.keyNode.line, external)
        }
    }

    static func topLevelVolumes(_ node: YNode?, diagnostics: DiagnosticSink) throws -> [ComposeNamedVolume] {
        try sectionEntries(node, what: "volumes", known: ["driver", "driver_opts", "labels", "name"], diagnostics: diagnostics)
            .map { ComposeNamedVolume(name: $0.key, external: $0.external, line: $0.line) }
    }

    static func topLevelNetworks(_ node: YNode?, diagnostics: DiagnosticSink) throws -> [String] {
        let known = ["attachable", "driver", "driver_opts", "enable_ipv4", "enable_ipv6", "internal", "ipam", "labels", "name"]
        return try sectionEntries(node, what: "networks", known: known, diagnostics: diagnostics).map(\.key)
    }

    static func topLevelResources(_ node: YNode?, what: String, diagnostics: DiagnosticSink) throws -> [ComposeTopLevelResource] {
        var found: [String: ComposeTopLevelResource] = [:]
        let known = ["name", "labels", "driver", "driver_opts", "template_driver"]
        let entries = try sectionEntries(node, what: what, known: known, diagnostics: diagnostics) { name, m in
            found[name] = ComposeTopLevelResource(name: name, file: try m.string("file"), environment: try m.string("environment"),
                                                  content: try m.string("content"))
        }
        return entries.map { e in
            var r = found[e.key] ?? ComposeTopLevelResource(name: e.key)
            r.external = e.external
            r.line = e.line
            return r
        }
    }
}
