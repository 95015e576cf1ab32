import Foundation
import FuzzSupport
import SoBasics
import SoStack

/// One YAML text, read as each of the files a deployment directory holds: spec.yml, stack.yml and
/// deployment.yml; and as a YAML document `so` edits and writes back (`deploy init`, `spec set`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStack(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = Fuzz.text(start, count)
    let fs = MemoryFileSystem(currentDirectory: "/work")
    for name in ["spec.yml", "stack.yml", "deployment.yml"] { fs.addFile("/work/d/\(name)", text) }
    // spec.yml and stack.yml: the same value (or error) both times; errors and warnings name lines that exist.
    Fuzz.deterministic(text, file: "/work/d/spec.yml") { try Spec.load("/work/d/spec.yml", fs: fs, diagnostics: $0) }
    Fuzz.deterministic(text, file: "/work/d/stack.yml") {
        try StackFile.load("/work/d/stack.yml", fs: fs, diagnostics: $0)
    }
    deploymentFile(text, fs: fs)
    document(text)
    return 0
}

/// deployment.yml: what `so` writes of a file it read (`yaml()`) reads back to the same identity, and is
/// written the same twice.
func deploymentFile(_ text: String, fs: MemoryFileSystem) {
    let path = "/work/d/deployment.yml"
    Fuzz.deterministic(text, file: path) { try DeploymentFile.load(path, fs: fs, diagnostics: DiagnosticSink()) }
    guard let file = try? DeploymentFile.load(path, fs: fs, diagnostics: DiagnosticSink()) else { return }
    let written = file.yaml()
    Fuzz.check(written == file.yaml(), "deployment.yml written twice differs")
    fs.addFile("/work/e/deployment.yml", written)
    do {
        let back = try DeploymentFile.load("/work/e/deployment.yml", fs: fs, diagnostics: DiagnosticSink())
        Fuzz.check(back == file, "deployment.yml reads back otherwise: \(file) -> \(back)\n\(written)")
    } catch {
        Fuzz.check(false, "written deployment.yml does not read back: \(error)\n\(written)")
    }
}

/// A YAML document as `so` edits it: its text, written by `so`'s writer, reads back to the same tree, and
/// that text is written again byte for byte (render twice, the same bytes).
func document(_ text: String) {
    let file = "/work/d/spec.yml"
    let doc: YAMLDocument
    do {
        doc = try YAMLDocument(text: text, file: file)
    } catch {
        Fuzz.checkLocation(error, in: text, file: file)
        return
    }
    let written = doc.text
    do {
        let back = try YAMLDocument(text: written, file: file)
        Fuzz.check(
            back.root == doc.root, "YAML written by so reads back otherwise:\n\(written)\n\(doc.root)\n\(back.root)")
        Fuzz.check(back.text == written, "YAML written twice differs:\n\(written)\n---\n\(back.text)")
    } catch {
        Fuzz.check(false, "YAML written by so does not read back: \(error)\n\(written)")
    }
}
