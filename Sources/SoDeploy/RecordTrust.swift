import Foundation
import SoActions
import SoBasics
import SoCompose
import SoRender
import SoStack

/// A directory made from the cluster's record, about to be acted on by a `so` that did not write it (the team's
/// page). The record is anyone's to write who can write Secrets in the deployment's namespace, so it is hostile
/// input: what its files name must not make this `so` read a file outside the directory (a credentials file, a
/// CA file, an env file, a compose config or secret, its service account's token, its kubeconfig) and copy it into
/// a namespace the writer reads, mount a path of the node, or run a command of this machine. A record that would is
/// refused, naming the file and the key; variables it would copy from this process's environment are withheld.
public enum RecordTrust {
    /// What the record may have: the variable names its start would copy from the environment (`secret-env`, a
    /// compose secret's `environment:`, the image-pull token's `token-env`), to be left out of the acting
    /// environment (a start then keeps the values the cluster holds). Throws naming the file and key otherwise.
    public static func check(_ dir: String, ctx: SoContext) throws -> Set<String> {
        let root = ctx.fs.realpath(dir)
        let fs = ConfinedFileSystem(base: ctx.fs, roots: [root] + (ctx.locator.builtInRoot.map { [$0] } ?? []))
        func inside(_ path: String) -> Bool { Path.isWithin(ctx.fs.realpath(path), root) }
        func refuse(_ file: String, _ key: String, _ what: String) -> SoError {
            SoError(
                "the record in \(dir) is refused: \(file)\(key.isEmpty ? "" : " " + key) \(what)",
                hint: "a record acted on from the page names only files of its own directory; act on it with so "
                    + "where its directory is, or start it there again from a directory that does not")
        }
        let home = ctx.fs.homeDirectory
        // Read before the rest: the first thing a load of the directory would read outside it.
        for c in (try? ConfigEnv.loadCredentialsFiles(Path.join(dir, "config.env"), fs: fs)) ?? [] {
            throw refuse("config.env", "(credentials-files)", "names the credentials file \(c.path)")
        }
        let probe = DiagnosticSink.dropped("a record the page acts on (its own start warns)")
        let spec: Spec
        do { spec = try Spec.load(Path.join(dir, "spec.yml"), fs: fs, diagnostics: probe) } catch let e
            as ConfinedFileSystem.Outside
        {
            throw refuse("spec.yml", "", "is outside the directory (\(e.path))")
        }
        if let (key, file) = fileOutside(spec, dir: dir, home: home, inside: inside) {
            throw refuse("spec.yml", key, "names \(file), outside the directory")
        }
        for v in spec.volumes {
            guard let p = v.path else { continue }
            let abs =
                p.hasPrefix("/") || p.hasPrefix("~")
                ? Path.normalize(Path.expandTilde(p, home: home)) : Path.absolute(p, relativeTo: dir)
            guard inside(abs) else { throw refuse("spec.yml", "volumes.\(v.name)", "is the host path \(p)") }
        }
        // The stack's pre/post start commands run on this machine: only a built-in stack's, or none. A stack path
        // that is not here resolves to nothing (start warns and runs none).
        if StackLocator.looksLikePath(spec.stack) {
            let abs = Path.absolute(Path.expandTilde(spec.stack, home: home), relativeTo: dir)
            if ctx.fs.exists(abs) && !inside(abs) {
                throw refuse("spec.yml", "stack", "names \(spec.stack), a directory of this machine outside it")
            }
            var locator = ctx.locator
            locator.fs = fs
            // A stack that does not resolve here runs no start command (its start warns that it cannot be read).
            if let stack = try? locator.resolve(spec.stack, relativeTo: [dir], diagnostics: probe),
                let pod = (stack.pods + stack.optionalPods + stack.jobs).first(where: {
                    $0.preStartCommand != nil || $0.postStartCommand != nil
                })
            {
                throw refuse("stack.yml", "pods.\(pod.name)", "runs a start command on this machine")
            }
        }
        let model: DeploymentModel
        do { model = try DeploymentLoader.load(dir, fs: fs, diagnostics: probe) } catch let e
            as ConfinedFileSystem.Outside
        {
            throw refuse(e.path, "", "is read by its compose files, outside the directory")
        }
        return try withheld(model, spec: spec, dir: dir, home: home, inside: inside, refuse: refuse)
    }

    /// `check` for a directory the CLI made from a record (`--name N` on a machine without it, a claim of another
    /// machine's pool member): what would read a file of this machine into the cluster (credentials files, CA
    /// files, a pull token file, a compose secret's file, outside the directory) or run a command of the record's
    /// on it (the start commands of a stack inside the directory) is refused, naming the file and key. Host paths
    /// and bind mounts are the nodes' (as on the machine that wrote the record), and a stack path outside the
    /// directory is this machine's own files: both are left to the start, as from a directory made here.
    /// `pulling`: the record is checked in a scratch copy before a `pull` writes it into this directory, which it
    /// names (nothing is written when it is refused).
    public static func checkHere(_ dir: String, ctx: SoContext, pulling: (record: String, into: String)? = nil) throws {
        func inside(_ path: String) -> Bool { Path.isWithin(ctx.fs.realpath(path), ctx.fs.realpath(dir)) }
        func refuse(_ file: String, _ key: String, _ what: String) -> SoError {
            if let pulling {
                return SoError(
                    "\(pulling.record) is refused: \(file) \(key) \(what); nothing was written to \(pulling.into)",
                    hint: "whoever may write Secrets in its namespace wrote it (see what changed: so deployment "
                        + "history); if you trust it, take the change from its writer and start this directory "
                        + "with --force")
            }
            return SoError(
                "the cluster's record made \(dir), and it is refused: \(file) \(key) \(what)",
                hint: "whoever may write Secrets in its namespace wrote it (see who: so deployment history); if you "
                    + "trust it, copy the directory from its writer and use --dir")
        }
        let home = ctx.fs.homeDirectory
        func outside(_ path: String) -> Bool {
            !inside(Path.absolute(Path.expandTilde(path, home: home), relativeTo: dir))
        }
        for c in try ConfigEnv.loadCredentialsFiles(Path.join(dir, "config.env"), fs: ctx.fs) {
            throw refuse("config.env", "(credentials-files)", "names the credentials file \(c.path) of this machine")
        }
        let probe = DiagnosticSink.dropped("a record made here (its start warns)")
        let spec = try Spec.load(Path.join(dir, "spec.yml"), fs: ctx.fs, diagnostics: probe)
        if let (key, file) = fileOutside(spec, dir: dir, home: home, inside: inside) {
            throw refuse("spec.yml", key, "names \(file), a file of this machine")
        }
        // A stack that does not resolve runs no start command (its start warns that it cannot be read).
        if let stack = try? ctx.locator.resolve(spec.stack, relativeTo: [dir], diagnostics: probe),
            inside(stack.root) || inside(stack.stackFilePath),
            let pod = (stack.pods + stack.optionalPods + stack.jobs).first(where: {
                $0.preStartCommand != nil || $0.postStartCommand != nil
            })
        {
            throw refuse("stack.yml", "pods.\(pod.name)", "runs a start command of the record on this machine")
        }
        // A directory that does not load starts nothing (the verb says why when it loads it).
        guard let model = try? DeploymentLoader.load(dir, fs: ctx.fs, diagnostics: probe) else { return }
        for s in Renderer.composeSecrets(model) {
            if let file = s.declared.file,
                outside(Path.absolute(file, relativeTo: Path.join(dir, Path.dirname(s.component.relativePath))))
            {
                throw refuse(
                    s.component.relativePath, "secrets.\(s.declared.name).file", "reads \(file) of this machine")
            }
        }
    }

    /// The first file the spec has a start read (a CA file, the pull token's file) that is outside `dir`: its key
    /// and the file as written; nil when every one is inside.
    static func fileOutside(_ spec: Spec, dir: String, home: String, inside: (String) -> Bool) -> (String, String)? {
        let named =
            spec.sections.caCertificates.map { ("ca-certificates", $0) }
            + (spec.sections.imagePullSecret?.tokenFile.map { [("image-pull-secret.token-file", $0)] } ?? [])
        return named.first { !inside(Path.absolute(Path.expandTilde($0.1, home: home), relativeTo: dir)) }
    }

    /// The compose files' part of `check`: bind mounts inside the directory only, no secret read from a file; the
    /// variables their secrets (and the spec's `secret-env` and pull token) would copy from the environment.
    static func withheld(
        _ model: DeploymentModel, spec: Spec, dir: String, home: String, inside: (String) -> Bool,
        refuse: (String, String, String) -> SoError
    ) throws -> Set<String> {
        for c in model.pods + model.jobs {
            for svc in c.compose.services {
                for m in svc.volumes where m.kind == .bind {
                    guard let src = m.source else { continue }
                    let abs =
                        src.hasPrefix("/") || src.hasPrefix("~")
                        ? Path.normalize(Path.expandTilde(src, home: home))
                        : Path.absolute(src, relativeTo: Path.join(dir, Path.dirname(c.relativePath)))
                    guard inside(abs) else {
                        throw refuse(c.relativePath, "services.\(svc.name).volumes", "mounts the host path \(src)")
                    }
                }
            }
        }
        for s in Renderer.composeSecrets(model) where s.declared.file != nil {
            throw refuse(s.component.relativePath, "secrets.\(s.declared.name).file", "reads a file of the stack")
        }
        return copiedNames(model)
    }

    /// The variables a start of `model` copies from the environment into the cluster: the spec's `secret-env`,
    /// the image-pull token's `token-env`, and compose secrets' `environment:`.
    public static func copiedNames(_ model: DeploymentModel) -> Set<String> {
        var names = Set(model.spec.secretEnv)
        if let env = model.spec.sections.imagePullSecret?.tokenEnv { names.insert(env) }
        for s in Renderer.composeSecrets(model) {
            if let env = s.declared.environment { names.insert(env) }
        }
        return names
    }

    /// What this machine's starts of `dir` copy from its environment, to be kept when the directory is written from
    /// the cluster's record (`pull`, `rollback`): what it copied before (all its files named, for a directory made
    /// here), so a teammate's revision that names more variables does not take their values from this machine.
    public static func copies(_ dir: String, fs: FileSystem) -> [String] {
        if let step = RecordFiles.step(in: dir, fs: fs), let copies = step.copies { return copies }
        let probe = DiagnosticSink.dropped("the directory before a pull (its start warns)")
        // A directory that does not load names nothing this machine agreed to copy.
        guard let model = try? DeploymentLoader.load(dir, fs: fs, diagnostics: probe) else { return [] }
        return copiedNames(model).sorted()
    }

    /// The variables a start of `model` (in a directory written from the cluster's record) must not copy from this
    /// machine's environment: those its record names that this machine did not agree to (`RecordFiles.Step.copies`).
    /// Empty for a directory made here.
    public static func notCopied(_ model: DeploymentModel, fs: FileSystem) -> [String] {
        guard let copies = RecordFiles.step(in: model.directory, fs: fs)?.copies else { return [] }
        return copiedNames(model).subtracting(copies).sorted()
    }
}
