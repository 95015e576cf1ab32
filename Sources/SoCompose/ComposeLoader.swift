import Foundation
import SoBasics

/// Reads compose files strictly: wrong types are errors with file:line, unknown keys are warnings with
/// a "did you mean", `x-` extensions pass silently.
public enum ComposeLoader {
    /// Reads and decodes `path`. With an `environment`, every scalar value is interpolated from that
    /// dictionary alone (never the process environment); with nil, values stay as written.
    public static func load(
        _ path: String, fs: FileSystem, environment: [String: String]?, diagnostics: DiagnosticSink,
        warnUnset: Bool = false
    ) throws -> ComposeFile {
        guard let root = try YAMLFile.load(path, fs: fs, what: "compose file") else {
            throw SoError(
                "compose file is empty", hint: "a compose file has a services: section", at: SourceLocation(file: path))
        }
        return try decode(root, path: path, environment: environment, diagnostics: diagnostics, warnUnset: warnUnset)
    }

    /// `warnUnset`: a variable used bare without a value warns once (as docker compose does).
    public static func decode(
        _ root: YNode, path: String, environment: [String: String]?, diagnostics: DiagnosticSink,
        warnUnset: Bool = false
    ) throws -> ComposeFile {
        var substitutions = Substitutions()
        let (root, version1) = ComposeLayout.normalize(root)
        let doc =
            try environment.map {
                try interpolate(
                    root, path: path, environment: $0, diagnostics: warnUnset ? diagnostics : nil,
                    substitutions: &substitutions)
            } ?? root
        do {
            var file = try decodeInterpolated(
                doc, path: path, interpolated: environment != nil, diagnostics: diagnostics)
            file.version1 = version1
            return file
        } catch let error as SoError {
            // A value that is invalid once its variables are put in says which variable made it so.
            throw substitutions.explain(error, file: path)
        }
    }

    static func decodeInterpolated(_ doc: YNode, path: String, interpolated: Bool, diagnostics: DiagnosticSink) throws
        -> ComposeFile
    {
        let m = try doc.mapping("compose file")
        var file = ComposeFile(path: path)
        file.name = try m.string("name")
        guard let services = m.nonNull("services") else {
            throw doc.error("compose file has no services", hint: "add a services: section with at least one service")
        }
        for e in try services.entries("'services'") {
            try NameRules.checkComposeName(e.key, what: "service name", at: e.keyNode.location)
            let decoder = ServiceDecoder(
                node: e.value, name: e.key, line: e.keyNode.line, diagnostics: diagnostics, interpolated: interpolated)
            file.services.append(try decoder.decode())
        }
        inheritVolumes(&file.services)
        file.volumes = try topLevelVolumes(m.nonNull("volumes"), diagnostics: diagnostics)
        file.networks = try topLevelNetworks(m.nonNull("networks"), diagnostics: diagnostics)
        file.secrets = try topLevelResources(m.nonNull("secrets"), what: "secrets", diagnostics: diagnostics)
        file.configs = try topLevelResources(m.nonNull("configs"), what: "configs", diagnostics: diagnostics)
        m.accept(["version", "include", "models"])
        m.finish(into: diagnostics)
        return file
    }

    /// What interpolation put into the values of a file, by line: the text as written and the variables it
    /// read, so an error about a value can name the variable that made it empty or invalid.
    struct Substitutions {
        struct Entry {
            var written: String
            var variables: [String]
            var unset: [String]
            var empty: [String]
        }
        var byLine: [Int: [Entry]] = [:]

        mutating func note(_ written: String, line: Int?, environment: [String: String]) {
            guard let line else { return }
            let names = Interpolation.variables(in: written)
            guard !names.isEmpty else { return }
            byLine[line, default: []].append(
                Entry(
                    written: written, variables: names, unset: names.filter { environment[$0] == nil },
                    empty: names.filter { environment[$0]?.isEmpty == true }))
        }

        /// `error` with the variables behind the value at its line named, and where to set them.
        func explain(_ error: SoError, file: String) -> SoError {
            guard error.location?.file == file, let line = error.location?.line, let entries = byLine[line] else {
                return error
            }
            // Prefer the value whose variables were blank; else name every variable the line read.
            let blank = entries.filter { !$0.unset.isEmpty || !$0.empty.isEmpty }
            guard let entry = blank.first ?? entries.first else { return error }
            let blanks = entry.unset.map { "\($0) is not set" } + entry.empty.map { "\($0) is empty" }
            let name = (entry.unset + entry.empty).first ?? entry.variables[0]
            let set =
                "'so deploy init --config \(name)=…', or edit the spec's config: and run 'so deploy create --update'"
            var e = error
            if blanks.isEmpty {
                e.message +=
                    " (written '\(entry.written)'; \(entry.variables.joined(separator: ", ")) from the deployment's config)"
                e.hint = "fix \(name) in the spec's config: (\(set))"
            } else {
                e.message += " (written '\(entry.written)'; \(blanks.joined(separator: ", ")))"
                e.hint = "set \(name) in the spec's config: (\(set)), or write ${\(name):-default} where it is used"
            }
            return e
        }
    }

    /// Interpolates every scalar value (not keys); errors name the scalar's file:line.
    /// An unset variable used bare becomes an empty string, with one warning per name (as docker compose).
    static func interpolate(
        _ root: YNode, path: String, environment: [String: String], diagnostics: DiagnosticSink? = nil
    ) throws -> YNode {
        var substitutions = Substitutions()
        return try interpolate(
            root, path: path, environment: environment, diagnostics: diagnostics, substitutions: &substitutions)
    }

    static func interpolate(
        _ root: YNode, path: String, environment: [String: String], diagnostics: DiagnosticSink?,
        substitutions: inout Substitutions
    ) throws -> YNode {
        var warned: Set<String> = []
        var noted = Substitutions()
        let out = try root.mapScalarValues { text, line in
            do {
                let result = try Interpolation.interpolate(
                    text, lookup: { environment[$0] },
                    unset: { name in
                        guard let diagnostics, warned.insert(name).inserted else { return }
                        diagnostics.warn(
                            "variable '\(name)' is not set; it defaults to a blank string",
                            hint: "set \(name) in the spec's config: ('so deploy init --config \(name)=…', "
                                + "or edit the spec and 'so deploy create --update'), or write ${\(name):-default}",
                            at: SourceLocation(file: path, line: line))
                    })
                if result != text { noted.note(text, line: line, environment: environment) }
                return result
            } catch var e as SoError {
                e.location = SourceLocation(file: path, line: line)
                throw e
            }
        }
        substitutions.byLine.merge(noted.byLine) { $0 + $1 }
        return out
    }

    /// `volumes_from: [web, 'db:ro']`: the named services' named volumes and binds, mounted at the same paths
    /// (read-only with `:ro`), unless the service mounts something there itself. Anonymous volumes and tmpfs
    /// belong to one container and are not shared; `container:NAME` names no service of the file.
    static func inheritVolumes(_ services: inout [ComposeService]) {
        let own = services
        for i in services.indices where !services[i].volumesFrom.isEmpty {
            for entry in services[i].volumesFrom {
                let parts = entry.split(separator: ":").map(String.init)
                guard let name = parts.first, name != "container", let source = own.first(where: { $0.name == name })
                else { continue }
                let readOnly = parts.count > 1 && parts[1] == "ro"
                for var mount in source.volumes
                where (mount.kind == .volume && mount.source != nil) || mount.kind == .bind {
                    guard !services[i].volumes.contains(where: { $0.target == mount.target }) else { continue }
                    mount.inheritedFrom = name
                    if readOnly { mount.readOnly = true }
                    services[i].volumes.append(mount)
                }
            }
        }
    }

    /// `external: true` (or the legacy `external: {name: …}`).
    static func externalFlag(_ m: MapReader) throws -> Bool {
        guard let e = m.nonNull("external") else { return false }
        return e.isMapping ? true : try e.bool("'external'")
    }

    /// The entries of an optional top-level section whose values are null or a mapping of known keys.
    static func sectionEntries(
        _ node: YNode?, what: String, known: [String], diagnostics: DiagnosticSink,
        _ read: (String, MapReader) throws -> Void = { _, _ in }
    ) throws -> [(key: String, line: Int?, external: Bool)] {
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
        try sectionEntries(
            node, what: "volumes", known: ["driver", "driver_opts", "labels", "name"], diagnostics: diagnostics
        )
        .map { ComposeNamedVolume(name: $0.key, external: $0.external, line: $0.line) }
    }

    static func topLevelNetworks(_ node: YNode?, diagnostics: DiagnosticSink) throws -> [String] {
        let known = [
            "attachable", "driver", "driver_opts", "enable_ipv4", "enable_ipv6", "internal", "ipam", "labels", "name",
        ]
        return try sectionEntries(node, what: "networks", known: known, diagnostics: diagnostics).map(\.key)
    }

    static func topLevelResources(_ node: YNode?, what: String, diagnostics: DiagnosticSink) throws
        -> [ComposeTopLevelResource]
    {
        var found: [String: ComposeTopLevelResource] = [:]
        let known = ["name", "labels", "driver", "driver_opts", "template_driver"]
        let entries = try sectionEntries(node, what: what, known: known, diagnostics: diagnostics) { name, m in
            found[name] = ComposeTopLevelResource(
                name: name, file: try m.string("file"), environment: try m.string("environment"),
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
