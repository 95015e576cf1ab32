import Foundation
import ArgumentParser
import SoActions
import SoDeploy
import SoWorkspace
import SoAuthoring
import SoBasics

// Work leaving a workspace (spec `workspace:`, as agent-workspace has): task, diff, push, fetch.

struct DeploymentTaskCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "task",
        abstract: "Run the agent headless on a task in a workspace, then push its branch (and open a pull request).",
        discussion: """
        Runs the spec's workspace task command (agent-workspace: claude -p "$TASK" …) in the workspace's container with TEXT in $TASK, streaming its \
        output. What the agent leaves uncommitted is committed, the branch is pushed to origin, and with --pr a pull request is opened on GitHub \
        (GITHUB_TOKEN or GH_TOKEN; GITHUB_API_URL for GitHub Enterprise). Exits with the agent's exit code. TEXT '-' reads the task from standard input.

        With -o json the summary is JSON and the agent's own output goes to stderr as it comes.

        Example:
          so deployment --name fix-login task "make the login test pass"
          so deployment --name ci-1234 task --pr --title "Fix the login test" "make the login test pass"
          so deployment --name fix-login task --no-push --command 'codex exec "$TASK"' "explain the build"
        """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Argument(help: ArgumentHelp("What the agent should do ('-': read it from standard input).", valueName: "text")) var text: String
    @Option(name: .long, help: ArgumentHelp("Run this shell command instead of the spec's task (it reads $TASK).", valueName: "command")) var command: String?
    @Flag(name: .long, help: "Leave the branch in the workspace; do not push it.") var noPush = false
    @Flag(name: .long, help: "Open a pull request on GitHub when the agent succeeded and left commits.") var pr = false
    @Option(name: .long, help: ArgumentHelp("Pull request title (default: the task's first line).", valueName: "title")) var title: String?
    @Option(name: .long, help: ArgumentHelp("Pull request base branch (default: the branch the workspace was cloned from).",
        valueName: "branch")) var base: String?
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func validate() throws {
        if noPush && pr { throw ValidationError("--pr needs the branch pushed: drop --no-push") }
    }

    func run(_ ctx: SoContext) async throws {
        var ctx = target.context(ctx)
        if output == .json { ctx.options.quiet = true }
        var task = text
        if text == "-" { task = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) }
        var req = TaskRequest(directory: try target.dir(ctx), text: task)
        req.command = command
        req.push = !noPush
        req.pullRequest = pr
        req.title = title
        req.base = base
        req.cluster = target.options()
        req.agentOutputToStderr = output == .json
        let r = try await TaskAction(ctx).run(req)
        if output == .json { ctx.console.out(JSONOut.encode(r)) }
        if r.exitCode != 0 { throw ExitCode(r.exitCode) }
    }
}

struct DeploymentDiffCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Show a workspace's changes against the commit it started from (commits, uncommitted and new files).",
        discussion: """
        The patch applies with 'git apply' on the commit the workspace was cloned at. The workspace's own index is not touched.

        -o json gives the branch, base, commits, uncommitted changes and the patch.

        Example:
          so deployment --name fix-login diff
          so deployment --name fix-login diff --stat
          so deployment --name fix-login diff --patch fix-login.patch
        """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Flag(name: .long, help: "A summary of changed files instead of the patch.") var stat = false
    @Option(name: .long, help: ArgumentHelp("Write the patch to this file instead of standard output.", valueName: "file")) var patch: String?
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func validate() throws {
        if stat && patch != nil { throw ValidationError("--stat and --patch contradict each other: a patch file holds the whole diff") }
    }

    func run(_ ctx: SoContext) async throws {
        let ctx = target.context(ctx)
        let (state, text) = try await WorkspaceGitAction(ctx).diff(target.dir(ctx), cluster: target.options(), stat: stat)
        if output == .json {
            ctx.console.out(JSONOut.encode(DiffJSON(state: state, patch: text)))
        } else if let patch {
            let path = ctx.absolute(patch)
            try AtomicWrite.text(text, to: path, fs: ctx.fs)
            let size = text.isEmpty ? "no changes" : "\(text.split(separator: "\n").count) lines"
            ctx.say("wrote \(path) (\(size)); apply it on \(state.base.prefix(12)) with: git apply \(patch)")
        } else if !text.isEmpty {
            ctx.console.out(text.hasSuffix("\n") ? String(text.dropLast()) : text)
        }
    }
}

struct DiffJSON: Encodable {
    var state: WorkspaceState
    var patch: String
}

struct DeploymentPushCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Push a workspace's branch to its origin (with the workspace's git token).",
        discussion: """
        Pushes the branch the workspace is on (agent/NAME unless WORKSPACE_BRANCH chose another) to the branch of the same name on origin. With -m, what is \
        not committed is committed first.

        Example:
          so deployment --name fix-login push
          so deployment --name fix-login push -m "work in progress"
        """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Option(name: .shortAndLong, help: ArgumentHelp("Commit what is not committed with this message first.", valueName: "message")) var message: String?
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await WorkspaceGitAction(ctx).push(target.dir(ctx), cluster: target.options(), message: message)
        } text: { r in
            ["pushed \(r.branch) (\(r.commit.prefix(12)), \(r.commits) \(English.plural("commit", r.commits)) since the start) to \(r.origin)"]
        }
    }
}

struct DeploymentFetchCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Bring a workspace's branch into your local clone as a branch (no push needed).",
        discussion: """
        The clone is the git repository the current directory is in (or --into DIR). The branch arrives under the same name (or --branch); merge it as you \
        would any branch. Afterwards 'so down' counts those commits as saved.

        Example:
          so deployment --name fix-login fetch
          git merge agent/fix-login
          so deployment --name fix-login fetch --into ~/src/web --branch review/fix-login
        """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var local: IntoOption
    @Option(name: .long, help: ArgumentHelp("Local branch name (default: the workspace's branch name).", valueName: "branch")) var branch: String?
    @Flag(name: .long, help: "Replace the local branch even when it has commits the workspace does not.") var force = false
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await WorkspaceGitAction(ctx).fetch(target.dir(ctx), cluster: target.options(), into: local.into, localBranch: branch, force: force)
        } text: { r in
            ["fetched \(r.branch) (\(r.commit.prefix(12)), \(r.commits) \(English.plural("commit", r.commits)) since the start) into \(r.repository)",
             "  merge: git -C \(r.repository) merge \(r.branch)"]
        }
    }
}

struct DeploymentLogCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Show a workspace's commits since it started (newest first) and what is not committed.",
        discussion: """
        Example:
          so deployment --name fix-login log
          so deployment --name fix-login log -o json
        """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await WorkspaceReturnAction(ctx).log(target.dir(ctx), cluster: target.options())
        } text: { log in
            let since = log.base.isEmpty ? "the start" : String(log.base.prefix(12))
            var lines = ["\(log.branch): \(log.commits.count) \(English.plural("commit", log.commits.count)) since \(since)"]
            lines += log.commits.map { c in "\(c.commit.prefix(12)) \(c.subject) (\(c.author), \(c.date))" }
            if !log.uncommitted.isEmpty {
                lines.append("\(log.uncommitted.count) uncommitted \(English.plural("change", log.uncommitted.count)): \(shortList(log.uncommitted, at: 5))")
            }
            return lines
        }
    }
}

struct DeploymentApplyCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Write a workspace's changes into your working tree, uncommitted.",
        discussion: """
        Everything the workspace changed since it started — its commits and its uncommitted changes, new files included — is applied with git apply to the \
        repository the current directory is in (or --into DIR), and left uncommitted there. What was carried in from your checkout (--include-uncommitted) \
        is not applied again. All or nothing: a change that does not fit leaves your tree untouched. Afterwards 'so down' counts that work as saved.

        Example:
          so deployment --name fix-login apply
          git diff
        """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var local: IntoOption
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await WorkspaceReturnAction(ctx).apply(target.dir(ctx), cluster: target.options(), into: local.into)
        } text: { r in
            r.files.isEmpty ? []
                : ["applied \(r.files.count) \(English.plural("file", r.files.count)) into \(r.repository), uncommitted: \(shortList(r.files, at: 8))"]
        }
    }
}

struct DeploymentMergeCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge a workspace's branch into your current branch (no push needed).",
        discussion: """
        The branch (agent/NAME) comes into the repository the current directory is in (or --into DIR) through a git bundle, under the same name (or \
        --branch), and is merged into the branch checked out there. Uncommitted changes in the workspace are not on the branch: 'apply' takes them. A \
        conflict stops the merge as git does.

        Example:
          so deployment --name fix-login merge
          so deployment --name fix-login merge --into ~/src/web
        """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var local: IntoOption
    @Option(name: .long, help: ArgumentHelp("Local branch the work arrives on (default: the workspace's branch name).",
        valueName: "branch")) var branch: String?
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await WorkspaceReturnAction(ctx).merge(target.dir(ctx), cluster: target.options(), into: local.into, localBranch: branch)
        } text: { r in
            guard r.merged else { return ["\(r.branch) holds no commits since the start; nothing to merge"] }
            return ["merged \(r.branch) (\(r.commits) \(English.plural("commit", r.commits))) into \(r.into) in \(r.repository) (now \(r.commit.prefix(12)))"]
        }
    }
}

/// `--into DIR`: the local checkout a workspace's work comes into (fetch, apply, merge).
struct IntoOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The local checkout (default: the repository of the current directory).", valueName: "dir")) var into: String?
}

/// The first `most` of `items`, comma-separated, with `, …` when there are more (how log and apply name files).
private func shortList(_ items: [String], at most: Int) -> String {
    items.prefix(most).joined(separator: ", ") + (items.count > most ? ", …" : "")
}
