import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

/// A workspace's checkout as git sees it in the container (read in one `kubectl exec`).
public struct WorkspaceState: Sendable, Equatable, Encodable {
    public var branch = ""
    public var head = ""
    /// The commit the work started from (`so.base`, recorded by the clone) and the branch it came from (`so.ref`).
    public var base = ""
    public var ref = ""
    public var origin = ""
    /// Commits since `base`.
    public var ahead = 0
    /// Commits that neither origin nor a `so deployment fetch` holds (`abc1234 subject`): lost with the volume.
    public var unsaved: [String] = []
    /// `git status --porcelain` lines: changes not committed (untracked files included), when they are
    /// neither what was carried in from a local checkout nor what `apply` already took out.
    public var uncommitted: [String] = []
    /// The working tree's changes are exactly what was carried in (`so.seed`) or taken out (`apply`): not lost with the volume.
    public var uncommittedSaved = false
    /// The snapshot of uncommitted changes carried in from a local checkout (`so.seed`), if any.
    public var seed = ""
    /// Why there is nothing to read (no checkout at the path), else nil.
    public var problem: String?

    /// What `so down` would lose, in words; nil when nothing.
    public var losses: String? {
        var parts: [String] = []
        if !unsaved.isEmpty {
            let shown = "\(unsaved.prefix(3).joined(separator: "; "))\(unsaved.count > 3 ? "; …" : "")"
            parts.append(
                "\(unsaved.count) \(English.plural("commit", unsaved.count)) on \(branch) not pushed (\(shown))")
        }
        if !uncommitted.isEmpty {
            let shown = "\(uncommitted.prefix(3).joined(separator: ", "))\(uncommitted.count > 3 ? ", …" : "")"
            parts.append("\(uncommitted.count) uncommitted \(English.plural("change", uncommitted.count)) (\(shown))")
        }
        return parts.isEmpty ? nil : parts.joined(separator: " and ")
    }

    /// Reads the `key=value` lines of `WorkspaceContainer.stateScript`.
    static func parse(_ text: String) -> WorkspaceState {
        var s = WorkspaceState()
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq]
            let value = String(line[line.index(after: eq)...])
            switch key {
            case "branch": s.branch = value
            case "head": s.head = value
            case "base": s.base = value
            case "ref": s.ref = value
            case "origin": s.origin = value
            case "ahead": s.ahead = Int(value) ?? 0
            case "unsaved": s.unsaved.append(value)
            case "uncommitted": s.uncommitted.append(value.trimmedSpaces)
            case "saved": s.uncommittedSaved = value == "1"
            case "seed": s.seed = value
            case "problem": s.problem = value
            default: break
            }
        }
        return s
    }
}

extension SoContext {
    /// Whether the deployment in `dir` is a workspace (its spec has `workspace:`): only spec.yml is read.
    func isWorkspace(_ dir: String) -> Bool {
        let path = Path.join(dir, "spec.yml")
        guard fs.exists(path) else { return false }
        do {
            return try Spec.load(
                path, fs: fs, diagnostics: .dropped("the spec's warnings were given when the deployment was loaded")
            )
            .workspace != nil
        } catch {
            diagnostics.warn(
                "cannot read \(path): \(Self.oneLine(error)); taken as no workspace",
                hint: "fix the spec, then run the command again")
            return false
        }
    }

}
