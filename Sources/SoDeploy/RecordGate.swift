import Foundation
import SoActions
import SoBasics
import SoStack

/// The one way a revision of the cluster's record becomes files on this disk (`pull`, `rollback`, `--name N VERB`
/// without a directory, `so down N`, a claim of another machine's pool member, the GitHub loop, the page): written
/// into a scratch directory, read there by `RecordReview`, and renamed into place only when nothing in it is
/// refused. A refusal leaves nothing behind, and says the revision, who it says wrote it, each file and key, and
/// the ways out.
public struct RecordGate {
    let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    /// The exit code of a refusal (EX_NOPERM), which `down` tells from the rest.
    public static let refused: Int32 = 77

    /// Writes `record` (found as `origin`) into `dir`: made when absent (renamed into place from the scratch), else
    /// its files replaced (`keepOld`: old copies kept as `.bak`; `copies`: what this machine's starts copy from its
    /// environment, as `RecordFiles.write`). `strict`: the page's rule (no host path). `address`: how the refusal's
    /// hint names the deployment. Returns the paths written or removed.
    @discardableResult
    public func admit(
        _ record: DeploymentRecord, origin: RecordOrigin, into dir: String, keepOld: Bool = false,
        copies: [String] = [], strict: Bool = false, address: String? = nil
    ) throws -> [String] {
        let prefix = Path.basename(dir) + ".pulling"
        let (folder, scratch) = try scratchDirectory(for: dir, prefix: prefix)
        defer { try? ctx.fs.removeOwnedTree(folder, owner: .scratch(prefix: prefix)) }  // best effort
        let existing = ctx.fs.isDirectory(dir)
        let (own, findings) = try review(
            record, origin: origin, in: scratch, before: existing ? dir : nil, strict: strict)
        try decide(
            findings, revision: Self.describe(record, origin: origin), into: dir,
            address: address ?? "--name \(origin.namespace)")
        // Accepted or not, what is the record's is checked again at the start (which --accept-privilege then takes).
        let mark = own ? nil : RecordMark(record, origin: origin)
        if !existing {
            try markStep(in: scratch, mark, fromRecord: true)
            try ctx.fs.move(scratch, to: dir)
            return record.files.map(\.path)
        }
        let fromRecord = RecordFiles.step(in: dir, fs: ctx.fs)?.fromRecord
        let changed = try RecordFiles.write(record, to: dir, fs: ctx.fs, keepOld: keepOld, copies: copies)
        try markStep(in: dir, mark, fromRecord: fromRecord)
        return changed
    }

    /// What `admit` would refuse in `record` (found as `origin`) in place of `dir`, without writing `dir`: the revision
    /// is written into a scratch directory beside it, read there, and removed (`so deployment diff` shows it before a
    /// `--accept-privilege`). Empty: it would be admitted.
    public func review(_ record: DeploymentRecord, origin: RecordOrigin, into dir: String, strict: Bool = false)
        throws -> [RecordFinding]
    {
        let prefix = Path.basename(dir) + ".pulling"
        let (folder, scratch) = try scratchDirectory(for: dir, prefix: prefix)
        defer { try? ctx.fs.removeOwnedTree(folder, owner: .scratch(prefix: prefix)) }  // best effort
        let before = ctx.fs.isDirectory(dir) ? dir : nil
        return try review(record, origin: origin, in: scratch, before: before, strict: strict).findings
    }

    /// A scratch directory with `dir`'s own name, in a folder of its own beside it (the folder is what is removed): a
    /// path of the revision reads there as it will in place (`../N/…` included), so what is reviewed is what a start
    /// will load.
    func scratchDirectory(for dir: String, prefix: String) throws -> (folder: String, scratch: String) {
        let folder = try ctx.fs.temporaryDirectory(beside: dir, prefix: prefix)
        return (folder, Path.join(folder, Path.basename(dir)))
    }

    /// `record` written into `scratch` and read there (`before`: the directory it replaces). `own`: its files are
    /// ones this machine started (content, not names: only the place still counts then).
    func review(_ record: DeploymentRecord, origin: RecordOrigin, in scratch: String, before: String?, strict: Bool)
        throws -> (own: Bool, findings: [RecordFinding])
    {
        try RecordFiles.write(record, to: scratch, fs: ctx.fs)
        let findings = RecordReview(ctx: ctx, dir: scratch, origin: origin, strict: strict).findings(before: before)
        let own = StartedRevisions(ctx).contains(record.digest)
        return (own, own ? findings.filter { $0.kind == .place } : findings)
    }

    /// A start of a directory made from a record (`RecordMark`): what is still the record's is checked again, as
    /// when it was written (a file edited by hand since, or added, is the reader's own). Nothing for a directory
    /// made here or started here since.
    public func recheck(_ dir: String) throws {
        guard let step = RecordFiles.step(in: dir, fs: ctx.fs), let mark = step.made else { return }
        let origin = RecordOrigin(namespace: mark.namespace, deployment: step.deployment, podSecurity: mark.podSecurity)
        let findings = RecordReview(ctx: ctx, dir: dir, origin: origin).findings().filter { f in
            // A finding in a file the reader changed is the reader's; one that names no file of the record stays.
            guard let written = mark.files[f.file] else {
                return f.kind == .place || f.file == RecordFinding.wholeDirectory
            }
            // An unreadable file is not the record's as written: the reader's (its start says why it cannot read it).
            return (try? ctx.fs.readData(Path.join(dir, f.file))).map(SHA256.hex) == written
        }
        try decide(
            findings, revision: "revision \(mark.revision) of \(step.deployment) (by \(mark.writer), as it says)",
            into: nil, address: "--dir \(dir)")
    }

    /// Throws the refusal of `findings` (none: nothing); with `--accept-privilege`, what may be accepted is said and
    /// accepted. A revision of another place is never accepted.
    func decide(_ findings: [RecordFinding], revision: String, into dir: String?, address: String) throws {
        guard !findings.isEmpty else { return }
        let place = findings.filter { $0.kind == .place }
        // The revision's writer and the values it names are the record's text: no escape of theirs reaches a terminal.
        let revision = TerminalText.safe(revision)
        let said = TerminalText.safe((place.isEmpty ? findings : place).map(\.description).joined(separator: "; "))
        let nothing = dir.map { "; nothing was written to \($0)" } ?? ""
        if let file = place.first(where: \.isUnloadable)?.file {
            throw SoError(
                "\(revision) is refused: \(said)\(nothing)",
                hint:
                    "this so cannot read its \(file) (written by a newer so, or edited by hand): from a directory that "
                    + "ran an earlier revision, roll back to it (so deployment \(address) history, then rollback REV), "
                    + "or correct \(file) in your own directory and start it with --force", exitCode: Self.refused)
        }
        if !place.isEmpty {
            throw SoError(
                "\(revision) is refused: \(said)\(nothing)",
                hint: "whoever may write Secrets in its namespace made it name another place; roll back to a revision "
                    + "this machine ran (so deployment \(address) history, then rollback REV), or start your own "
                    + "directory with --force", exitCode: Self.refused)
        }
        if ctx.options.acceptPrivilege {
            ctx.diagnostics.warn("--accept-privilege: \(revision) is accepted as it is: \(said)")
            return
        }
        throw SoError(
            "\(revision) is refused: \(said)\(nothing)",
            hint: "roll back to a revision this machine ran (so deployment \(address) history, then rollback REV), "
                + "or read it (so deployment \(address) diff) and pass --accept-privilege", exitCode: Self.refused)
    }

    static func describe(_ record: DeploymentRecord, origin: RecordOrigin) -> String {
        "revision \(record.revision) of \(origin.deployment) (\(record.verb) by \(record.writer.description), as it "
            + "says)"
    }

    func markStep(in dir: String, _ mark: RecordMark?, fromRecord: Bool? = nil) throws {
        guard var step = RecordFiles.step(in: dir, fs: ctx.fs) else { return }
        step.made = mark
        if let fromRecord { step.fromRecord = fromRecord }
        try RecordFiles.writeStep(step, in: dir, fs: ctx.fs)
    }
}
