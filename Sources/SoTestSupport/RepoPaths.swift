import Foundation
import SoBasics
import SoSystem

/// Paths to the repository, its own fixtures and the shared fixtures, from this file's location.
public enum RepoPaths {
    public static var root: String { Path.normalize(Path.join(Path.dirname(#filePath), "..", "..")) }
    /// The repository's own fixtures (Tests/Fixtures): always present.
    public static var fixtures: String { Path.join(root, "Tests", "Fixtures") }
    /// A stack repository in laconic's layout: `stacks/<name>/stack.yml`, `compose/`, `compose-jobs/`, `config/`.
    public static var laconicFixtures: String { Path.join(fixtures, "laconic-repo", "stack-orchestrator") }
    public static func laconicFixture(_ name: String) -> String { Path.join(laconicFixtures, "stacks", name) }
    /// Plain compose projects, one directory each.
    public static var composeFixtures: String { Path.join(fixtures, "compose") }

    /// laconic's compatibility corpus beside the checkout (`../shared/fixtures`): absent in a fresh clone.
    public static var shared: String { Path.normalize(Path.join(root, "..", "shared")) }
    public static var laconicStacks: String { Path.join(shared, "fixtures", "laconic-stacks") }
    public static var composeReal: String { Path.join(shared, "fixtures", "compose-real") }
    /// Whether the shared corpus is there; suites over it are skipped (and say so) when it is not.
    public static var hasShared: Bool {
        LocalFileSystem().isDirectory(laconicStacks) && LocalFileSystem().isDirectory(composeReal)
    }
    /// The agent workspace's entrypoint (config/agent-workspace/clone.sh), as the stack ships it.
    public static func cloneScript() throws -> String {
        try String(contentsOfFile: Path.join(root, "config/agent-workspace/clone.sh"), encoding: .utf8)
    }

    /// The shell text of a compose file's `healthcheck: test: ["CMD-SHELL", …]` (of its first service that has
    /// one), with compose's `$$` as the shell's `$`.
    public static func healthcheck(_ composeFile: String) throws -> String {
        let compose = try String(contentsOfFile: Path.join(root, composeFile), encoding: .utf8)
        guard let line = compose.split(separator: "\n").first(where: { $0.contains("test: [\"CMD-SHELL\"") }),
            let open = line.firstIndex(of: "["),
            let test = try JSONSerialization.jsonObject(with: Data(line[open...].utf8)) as? [String], test.count == 2
        else { throw SoError("\(composeFile): no healthcheck test of the form [\"CMD-SHELL\", …]") }
        return test[1].replacingOccurrences(of: "$$", with: "$")
    }

    public static let sharedAbsent =
        "../shared/fixtures is absent (a fresh clone): the suites over laconic's corpus are skipped"
}
