import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoGitHub
import SoWorkspace

// Work leaving a workspace (spec `workspace:`, as agent-workspace has): task, diff, push, fetch.

struct DeploymentTaskCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "task",
        abstract: "Run the agent headless on a task in a workspace, then push its branch (and open a pull request).",
        discussion: """
            Runs the spec's workspace task command (agent-workspace: claude -p "$TASK" …) in the workspace's container with TEXT in $TASK, streaming its \
            output. What the agent leaves uncommitted is committed, the branch is pushed to origin, and with --pr a pull request is opened on GitHub \
            (GITHUB_TOKEN or GH_TOKEN; GITHUB_API_URL for GitHub Enterprise). With --issue OWNER/REPO#N, so comments on that issue when \
            the task starts and when it ends (the pull request's link, or the agent's last lines when it failed), and the pull request \
            refers to it. Exits with the agent's exit code. TEXT '-' reads the task from standard input.

            With -o json the summary is JSON and the agent's own output goes to stderr as it comes.

            With --detach the task is queued in the workspace's container and its id printed at once: it runs there, one task \
            at a time in order, whatever becomes of this so (a closed terminal, a lost connection, a CI step that ends). Its \
            branch is pushed when it leaves commits (not with --no-push); with --pr, the first 'tasks wait' or 'tasks logs -f' \
            that sees it succeed opens the pull request. Follow it with 'so deployment tasks' (list, show, logs -f, wait, cancel).

            Example:
              so deployment --name fix-login task "make the login test pass"
              so deployment --name ci-1234 task --pr --title "Fix the login test" "make the login test pass"
              so deployment --name fix-login task --no-push --command 'codex exec "$TASK"' "explain the build"
              so deployment --name fix-login task --detach "make the login test pass"
            """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Argument(help: ArgumentHelp("What the agent should do ('-': read it from standard input).", valueName: "text"))
    var text: String
    @Option(
        name: .long,
        help: ArgumentHelp("Run this shell command instead of the spec's task (it reads $TASK).", valueName: "command"))
    var command: String?
    @Flag(name: .long, help: "Leave the branch in the workspace; do not push it.") var noPush = false
    @Flag(
        name: [.customShort("d"), .long],
        help: "Queue the task in the workspace and print its id at once; it runs without this so.") var detach = false
    @Flag(name: .long, help: "Open a pull request on GitHub when the agent succeeded and left commits.") var pr = false
    @Option(name: .long, help: ArgumentHelp("Pull request title (default: the task's first line).", valueName: "title"))
    var title: String?
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Pull request base branch (default: the branch the workspace was cloned from).",
            valueName: "branch")) var base: String?
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Comment on this GitHub issue when the task starts and when it ends (the pull request refers to it).",
            valueName: "owner/repo#n")) var issue: String?
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func validate() throws {
        if noPush && pr { throw ValidationError("--pr needs the branch pushed: drop --no-push") }
        if !pr && (title != nil || base != nil) {
            throw ValidationError("--title and --base are the pull request's: add --pr")
        }
    }

    func run(_ ctx: SoContext) async throws {
        var ctx = target.context(ctx)
        if output == .json { ctx.options.quiet = true }
        var task = text
        if text == "-" { task = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) }
        var gitHubIssue: GitHubIssue?
        if let issue {
            // Checked here, not at parse time: a documented line holds a shell variable in its place.
            guard let parsed = GitHubIssue(issue) else {
                throw SoError.usage(
                    "--issue takes OWNER/REPO#N: '\(issue)' is not that", hint: "for example --issue acme/web#42")
            }
            gitHubIssue = parsed
        }
        var req = TaskRequest(directory: try await target.dir(ctx), text: task)
        req.command = command
        req.push = !noPush
        req.pullRequest = pr
        req.title = title
        req.base = base
        req.issue = gitHubIssue?.description
        req.cluster = target.options()
        req.agentOutputToStderr = output == .json
        if detach {
            let queue = TaskQueueAction(ctx, forge: GitHubTaskForge())
            let (name, id) = try await queue.submit(req)
            await queue.commentStarted(req, workspace: name, id: id)
            if output == .json {
                ctx.console.out(JSONOut.encode(DetachedJSON(workspace: name, id: id, state: "queued")))
            } else {
                ctx.console.out(String(id))
                ctx.console.err(
                    "task \(id) queued in \(name); follow it: so deployment \(target.address) tasks logs \(id) -f")
            }
            return
        }
        let r = try await TaskAction(ctx, forge: GitHubTaskForge()).run(req)
        if output == .json { ctx.console.out(JSONOut.encode(r)) }
        if r.exitCode != 0 { throw ExitCode(r.exitCode) }
    }
}
