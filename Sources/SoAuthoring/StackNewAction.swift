import Foundation
import SoActions
import SoBasics
import SoCompose
import SoStack

/// `so stack new NAME --from FILE…`: a plain compose project as a stack in the laconic layout, so it
/// can be versioned and fetched like any other. The merged compose file goes to
/// compose/docker-compose-NAME.yml; files it mounts, env files, configs and build contexts are copied
/// under config/NAME/ and the paths rewritten. Secret files are not copied (they do not belong in a
/// repository): their paths become absolute and the command says so.
public struct StackNewAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    @discardableResult
    public func run(_ req: StackNewRequest) async throws -> String {
        try NameRules.checkComponent(req.name, what: "stack name", at: nil)
        guard !req.from.isEmpty else {
            throw SoError(
                "stack new needs --from FILE", hint: "name the compose file(s) to start from, e.g. --from compose.yaml")
        }
        let out = ctx.absolute(req.output ?? req.name)
        if ctx.fs.exists(out) { throw SoError("\(out) already exists", hint: "choose another --output, or remove it") }
        let stack = try ctx.locator.resolve(
            composeFiles: req.from.map { ctx.absolute($0) }, diagnostics: ctx.diagnostics)
        guard let pod = stack.pods.first, stack.composeFile != nil else {
            throw SoError(
                "--from takes compose files, not a stack", hint: "point it at compose.yaml (and override files)")
        }
        let (compose, data) = try stack.compose(pod, fs: ctx.fs, environment: nil, diagnostics: ctx.diagnostics)
        let source = compose.directory
        var copies: [(from: String, to: String)] = []
        var secretsLeft: [String] = []
        var missing: [String] = []
        let text = try ComposeFlatten.rewritePaths(String(decoding: data, as: UTF8.self), file: compose.path) {
            kind, path in
            let abs = Path.absolute(path, relativeTo: source)
            if kind == .secretFile {
                secretsLeft.append(abs)
                return abs
            }
            guard let rel = Path.relative(abs, to: source), !rel.hasPrefix("..") else {
                throw SoError(
                    "'\(path)' is outside the compose file's directory (\(source))",
                    hint: "move it inside, so the stack can carry it")
            }
            guard ctx.fs.exists(abs) else {
                // Not there yet (a build context without its code): the path still moves with the stack;
                // create or build time says what is missing.
                missing.append(path)
                return "../config/\(req.name)/\(rel)"
            }
            if !copies.contains(where: { $0.from == abs }) { copies.append((abs, "config/\(req.name)/\(rel)")) }
            return "../config/\(req.name)/\(rel)"
        }
        try write(req, text: text, copies: copies, to: out)
        ctx.say(
            "wrote stack \(req.name) in \(out) (\(copies.count) \(English.plural("file", copies.count)) or directories copied under config/\(req.name)/)"
        )
        if !missing.isEmpty {
            ctx.diagnostics.warn(
                "not found, so not copied: \(missing.joined(separator: ", "))",
                hint: "add them under \(Path.join(out, "config", req.name)) before building or deploying")
        }
        for s in secretsLeft {
            ctx.diagnostics.warn(
                "secret file \(s) was not copied into the stack (secrets do not belong in a repository); "
                    + "the stack refers to it by its absolute path",
                hint: "keep it on the deploying host, or switch the secret to 'environment: VAR'")
        }
        ctx.say("use it: so --stack \(Path.join(out, "stacks", req.name)) deploy init --output \(req.name)-spec.yml")
        return out
    }

    /// Writes the stack beside `out` (stack.yml, the rewritten compose file, the copies under config/) and renames
    /// it into place; a failure leaves nothing behind.
    func write(_ req: StackNewRequest, text: String, copies: [(from: String, to: String)], to out: String) throws {
        // Everything is written beside the target and renamed into place at the end.
        let tmp = try ctx.fs.temporaryDirectory(beside: out, prefix: Path.basename(out) + ".creating")
        do {
            let stackFile = StackFile.forComposeFile(name: req.name)
                .replacingOccurrences(
                    of: "# made by so for a plain compose file",
                    with: "# made by 'so stack new' from \(req.from.joined(separator: ", "))")
            try ctx.fs.writeText(stackFile, to: Path.join(tmp, "stacks/\(req.name)/stack.yml"))
            try ctx.fs.writeText(text, to: Path.join(tmp, "compose/docker-compose-\(req.name).yml"))
            try copy(copies, into: tmp)
            try ctx.fs.move(tmp, to: out)
        } catch {
            // best effort: the error thrown next is what matters; a stray .creating dir is removed by the next stack new
            try? ctx.fs.removeOwnedTree(tmp, owner: .scratch(prefix: Path.basename(out) + ".creating"))
            throw error
        }
    }

    /// Copies each file or directory (without its .git) to its place under `tmp`.
    func copy(_ copies: [(from: String, to: String)], into tmp: String) throws {
        for c in copies {
            if ctx.fs.isDirectory(c.from) {
                for e in try ctx.fs.walk(c.from) where e.kind == .file && !e.relative.hasPrefix(".git/") {
                    try ctx.fs.write(
                        try ctx.fs.readData(Path.join(c.from, e.relative)), to: Path.join(tmp, c.to, e.relative))
                }
            } else {
                try ctx.fs.write(try ctx.fs.readData(c.from), to: Path.join(tmp, c.to))
            }
        }
    }
}
