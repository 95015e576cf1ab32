import Foundation
import SoActions
import SoBasics
import SoRender
import SoStack

/// What a directory written from the cluster's record may take from this machine's environment. The record is
/// anyone's to write who can write Secrets in the deployment's namespace, so it is hostile input: every revision
/// becomes files here through `RecordGate` alone, which refuses what would read this machine's files, run its
/// commands, reach another namespace or cluster, or ask for privilege the namespace did not have.
public enum RecordTrust {
    /// The variables the page's start of `dir` (made from the record by the gate) would copy from this process's
    /// environment (`secret-env`, a compose secret's `environment:`, the pull token's `token-env`): to be left out of
    /// the acting environment, so the start keeps the values the cluster holds.
    public static func withheld(_ dir: String, ctx: SoContext) throws -> Set<String> {
        let probe = DiagnosticSink.dropped("a record the page acts on (its own start warns)")
        return copiedNames(try DeploymentLoader.load(dir, fs: ctx.fs, diagnostics: probe))
    }

    /// A directory the CLI made from a record, checked again before a verb acts on it (`RecordGate.recheck`): what
    /// is still the record's and would read this machine's files, run commands here, or ask for privilege, is
    /// refused naming the file and key. Nothing for a directory made or started here.
    public static func checkHere(_ dir: String, ctx: SoContext) throws {
        try RecordGate(ctx).recheck(dir)
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
