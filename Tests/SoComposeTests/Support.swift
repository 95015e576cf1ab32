import Foundation
import SoBasics
import SoCompose
import SoSystem
import Testing

/// Locations in these tests are SoBasics ones (file:line of compose text), not Testing's.
typealias SourceLocation = SoBasics.SourceLocation

/// Decodes compose text as if read from `c.yml` (errors and warnings name that file).
func compose(_ text: String, env: [String: String]? = nil, sink: DiagnosticSink = DiagnosticSink()) throws
    -> ComposeFile
{
    let root = try #require(try YAMLFile.parse(text, file: "c.yml"))
    return try ComposeLoader.decode(root, path: "c.yml", environment: env, diagnostics: sink)
}

/// The one service of a compose text whose `services:` has a single service `s` with the given body.
func service(_ body: String, env: [String: String]? = nil, sink: DiagnosticSink = DiagnosticSink()) throws
    -> ComposeService
{
    let indented = body.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(
        separator: "\n")
    return try compose("services:\n  s:\n" + indented + "\n", env: env, sink: sink).services[0]
}

/// The SoError a call throws (fails the test when it throws nothing or something else).
func soError(_ sourceLocation: Testing.SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> SoError? {
    do {
        try body()
        Issue.record("expected an error", sourceLocation: sourceLocation)
    } catch let e as SoError {
        return e
    } catch {
        Issue.record("expected a SoError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// Shared fixtures: the repository is `…/main`, the fixtures live in its sibling `…/shared`.
enum Fixtures {
    static let shared = Path.normalize(Path.join(Path.dirname(#filePath), "..", "..", "..", "shared", "fixtures"))
    static let composeReal = Path.join(shared, "compose-real")
    static let laconic = Path.join(shared, "laconic-stacks")
    static var present: Bool { LocalFileSystem().isDirectory(composeReal) && LocalFileSystem().isDirectory(laconic) }
}
