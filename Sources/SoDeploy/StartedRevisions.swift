import Foundation
import SoActions
import SoBasics

/// The revisions this machine started, by their files' digest (`DeploymentRecord.digest`): a revision whose files
/// are byte for byte one of them is the reader's own, whoever the record says wrote it. One line per digest in
/// `$SO_HOME/record-trust`, the newest last, the last `kept` kept.
public struct StartedRevisions {
    let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    static let kept = 500
    var path: String { Path.join(ctx.soHome, "record-trust") }

    func all() -> [String] {
        // Unreadable: nothing is trusted by content (every revision is checked).
        guard let text = try? ctx.fs.readText(path, what: "the revisions this machine started") else { return [] }
        return text.split(separator: "\n").map(String.init).filter { $0.count == 64 }
    }

    public func contains(_ digest: String) -> Bool { all().contains(digest) }

    /// Remembers `digest` as started here, under a host lock (starts of one home at once each add theirs, none
    /// lost) through a temporary file of its own. Best effort: a digest not remembered only means a later revision
    /// of the same files is checked as a teammate's would be.
    public func add(_ digest: String) async {
        do {
            try await ctx.hostLocks.holding("record-trust") { _ in
                var digests = all().filter { $0 != digest }
                digests.append(digest)
                try ctx.fs.createDirectory(ctx.soHome)
                let tmp = path + ".\(ProcessInfo.processInfo.processIdentifier).tmp"
                try ctx.fs.write(Data((digests.suffix(Self.kept).joined(separator: "\n") + "\n").utf8), to: tmp)
                if ctx.fs.exists(path) { try ctx.fs.replace(path, with: tmp) } else { try ctx.fs.move(tmp, to: path) }
            }
        } catch {
            ctx.verbose("the revision started is not remembered as this machine's: \(error)")
        }
    }
}
