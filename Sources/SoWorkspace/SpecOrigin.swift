import Foundation
import SoBasics
import Yams

/// Where a value of the spec `so up` writes (and removes once the deployment directory is made) came from, so an
/// error in it names a file the user has: the stack's `spec-defaults`, found by the key path of the value on the
/// error's line, or else the spec made for the workspace (from the stack and the command's flags).
enum SpecOrigin {
    enum Step: Equatable {
        case key(String)
        case index(Int)
    }

    /// The key path to the deepest value (or key) that starts on `line`; nil when none does.
    static func path(to line: Int, in node: Node) -> [Step]? {
        switch node {
        case .mapping(let m):
            for (k, v) in m {
                guard case .scalar(let key) = k else { continue }
                if let deeper = path(to: line, in: v) { return [.key(key.string)] + deeper }
                if k.mark?.line == line { return [.key(key.string)] }
            }
        case .sequence(let s):
            for (i, v) in s.enumerated() {
                if let deeper = path(to: line, in: v) { return [.index(i)] + deeper }
            }
        case .scalar:
            if node.mark?.line == line { return [] }
        default:
            break
        }
        return nil
    }

    /// The node at `path` under `node`.
    static func node(at path: [Step], in node: Node) -> Node? {
        guard let step = path.first else { return node }
        switch (step, node) {
        case (.key(let key), .mapping(let m)):
            guard let value = m.first(where: { $0.key.scalar?.string == key })?.value else { return nil }
            return self.node(at: Array(path.dropFirst()), in: value)
        case (.index(let i), .sequence(let s)) where i < s.count:
            return self.node(at: Array(path.dropFirst()), in: s[s.index(s.startIndex, offsetBy: i)])
        default:
            return nil
        }
    }

    /// `e`, located on a line of `specText` (the spec made for `workspace`), located where that value came from:
    /// the same value at the same key path of `defaults` (the stack's `spec-defaults`), else the spec made.
    static func relocate(_ e: SoError, specText: String, defaults: YNode?, workspace: String) -> SoError {
        var out = e
        out.location = nil
        let made = "the spec made for workspace \(workspace) (from the stack's spec-defaults and the command's flags)"
        // A spec that cannot be read again (it was written a moment ago) is named as the spec made.
        guard let line = e.location?.line, let spec = try? YAMLFile.parse(specText, file: "spec"),
            let path = path(to: line, in: spec.node), let defaults,
            let found = node(at: path, in: defaults.node),
            let written = node(at: path, in: spec.node), found.scalar?.string == written.scalar?.string
        else {
            out.message = "in \(made): \(e.message)"
            return out
        }
        out.location = SourceLocation(file: defaults.file, line: found.mark?.line)
        out.message = "spec-defaults: \(e.message)"
        return out
    }
}
