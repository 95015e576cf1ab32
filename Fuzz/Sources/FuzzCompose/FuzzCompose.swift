import Foundation
import FuzzSupport
import SoBasics
import SoCompose

/// A compose file, then (after a NUL) the `.env` whose entries interpolate it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCompose(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let (compose, env) = Fuzz.split(Fuzz.text(start, count))
    let environment = dotEnv(env)
    composeFile(compose, environment: environment)
    interpolation(compose, environment: environment)
    return 0
}

/// `.env`: each entry written back (`DotEnv.encode`, as `config.env` is written) reads back to the same key and
/// value, in the same order; an error names a line of the file.
func dotEnv(_ text: String) -> [String: String] {
    let entries: [(key: String, value: String)]
    do {
        entries = try DotEnv.parse(text, file: ".env")
    } catch {
        Fuzz.checkLocation(error, in: text, file: ".env")
        return [:]
    }
    let written = entries.map { DotEnv.encode(key: $0.key, value: $0.value) }.joined(separator: "\n") + "\n"
    do {
        let back = try DotEnv.parse(written, file: "written.env")
        Fuzz.check(
            back.map(\.key) == entries.map(\.key) && back.map(\.value) == entries.map(\.value),
            "written .env reads back otherwise: \(entries) -> \(back)")
    } catch {
        Fuzz.check(false, "written .env does not read back: \(error)\n\(written)")
    }
    return Dictionary(entries.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
}

/// The compose file read twice the same (value, or error and warnings), with interpolation from the `.env`
/// and without; its errors and warnings name lines that exist.
func composeFile(_ text: String, environment: [String: String]) {
    let path = "/stack/compose/docker-compose-app.yml"
    for env in [environment, nil] {
        Fuzz.deterministic(text, file: path) { (sink: DiagnosticSink) throws -> Any in
            guard let root = try YAMLFile.parse(text, file: path) else { return "empty" }
            return try ComposeLoader.decode(
                root, path: path, environment: env, diagnostics: sink, warnUnset: env != nil)
        }
    }
}

/// `$$` is a literal `$`: any text with each `$` doubled reads back as itself. Every name interpolation looks
/// up is one `variables(in:)` lists (the names `so` reports as used by a file).
func interpolation(_ text: String, environment: [String: String]) {
    do {
        let back = try Interpolation.interpolate(Fuzz.dollarsDoubled(text), lookup: { _ in nil })
        Fuzz.check(back == text, "doubled dollars read back otherwise: \(back.debugDescription)")
    } catch {
        Fuzz.check(false, "doubled dollars do not read back: \(error)")
    }
    let listed = Set(Interpolation.variables(in: text))
    for lookup: (String) -> String? in [{ _ in nil }, { environment[$0] }, { _ in "" }, { _ in "x" }] {
        var asked: [String] = []
        _ = try? Interpolation.interpolate(
            text,
            lookup: {
                asked.append($0)
                return lookup($0)
            })
        Fuzz.check(asked.allSatisfy(listed.contains), "looked up \(asked), listed \(listed.sorted())")
    }
}
