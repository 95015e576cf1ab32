import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender

/// A workspace as the cluster alone tells where it runs (its namespace's `so.dev/workspace` annotation and a
/// running pod): what a reader without its deployment directory (`so dashboard`, in a cluster too) reads of it,
/// through the same runner and scripts as the verbs. It only reads: it records no use (a page left open does not
/// keep a workspace from going idle) and wakes nothing.
public struct WorkspaceProbe: Sendable {
    public var namespace: String
    public var pod: String
    public var container: String
    public var path: String
    /// The cluster's `kubectl` flags (`--kubeconfig`, `--context`).
    public var kubectlFlags: [String]

    public init(namespace: String, pod: String, container: String, path: String, kubectlFlags: [String]) {
        self.namespace = namespace
        self.pod = pod
        self.container = container
        self.path = path
        self.kubectlFlags = kubectlFlags
    }

    /// The annotation's "CONTAINER PATH" (what `so up` records); nil when it does not read so.
    public static func location(_ annotation: String) -> (container: String, path: String)? {
        let parts = annotation.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2, NameRules.isDNSLabel(parts[0]), parts[1].hasPrefix("/") else { return nil }
        return (parts[0], parts[1])
    }

    /// Whether `pod` runs `container`, so a probe can exec into it.
    public static func runs(_ pod: JSON, _ container: String) -> Bool { WorkspaceContainer.runs(pod, container) }

    func command(_ script: String, _ args: [String]) -> [String] {
        ContainerExec.kubectl(
            kubectlFlags, namespace: namespace, pod: pod, container: container,
            ["sh", "-c", HandedCredentials.readingPrelude + "\n" + script, "so", path] + args)
    }

    private func run(_ processes: ProcessRunner, _ what: String, _ script: String, _ args: [String]) async throws
        -> String
    {
        let r = try await processes.run(command(script, args), workingDirectory: nil, environment: nil, timeout: 20)
        guard r.exitCode == 0 else {
            throw SoError(
                "\(what) in \(namespace)/\(pod) failed: \(r.lastErrorLine)",
                hint: "see it for yourself: kubectl -n \(namespace) exec -it \(pod) -c \(container) -- sh")
        }
        return r.stdout
    }

    /// Every task's report, as `so deployment tasks` reads them (the runner's `report`).
    public func tasks(_ processes: ProcessRunner) async throws -> [TaskRecord] {
        TaskRecord.parse(try await run(processes, "reading the tasks", TaskRunner.boot, [TaskRunner.script, "report"]))
    }

    /// The last `lines` lines of task `id`'s output (unredacted: the caller replaces secret values).
    public func output(_ processes: ProcessRunner, id: Int, lines: Int) async throws -> String {
        try await run(
            processes, "reading task \(id)'s output",
            #"tail -n "$3" "$(git -C "$1" rev-parse --absolute-git-dir)/so/tasks/$2/log" 2>/dev/null || true"#,
            [String(id), String(lines)])
    }

    /// The checkout's branch and state, and the subjects of its commits since its base (at most `commits`).
    public func checkout(_ processes: ProcessRunner, commits: Int = 20) async throws -> (
        state: WorkspaceState, commits: [TaskRecord.Commit]
    ) {
        // $1 is the checkout, $2 the count; the state script that follows reads $1 as the verbs' does.
        let script = """
            ( cd "$1" 2>/dev/null && b=$(git config so.base || true) && \
            git log --format='commit=%h %s' -n "$2" ${b:+"$b..HEAD"} 2>/dev/null ) || true
            """ + "\n" + WorkspaceContainer.stateScript
        let out = try await run(processes, "reading the checkout", script, [String(commits)])
        let list = out.split(separator: "\n").compactMap { line -> TaskRecord.Commit? in
            guard line.hasPrefix("commit=") else { return nil }
            let rest = line.dropFirst("commit=".count)
            let sha = rest.prefix { $0 != " " }
            return TaskRecord.Commit(sha: String(sha), subject: String(rest.dropFirst(sha.count).drop { $0 == " " }))
        }
        return (WorkspaceState.parse(out), list)
    }
}
