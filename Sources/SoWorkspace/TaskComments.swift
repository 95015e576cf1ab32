import Foundation
import SoBasics

/// What `so` says on the GitHub issue a task came from (`--issue`): when it starts, when it ends (with the
/// pull request), when it fails (with the agent's last lines).
enum TaskComments {
    static func quoted(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "> " + $0 }.joined(separator: "\n")
    }

    /// The pull request's body: the task, and the issue it refers to.
    static func pullRequestBody(_ text: String, _ workspace: String, issue: String?) -> String {
        "Task given to the agent in workspace `\(workspace)`:\n\n" + quoted(text)
            + (issue.map { "\n\nRefers to \($0)." } ?? "") + "\n\nMade by `so deployment task`."
    }

    static func started(_ id: Int, _ workspace: String, _ text: String) -> String {
        "Task \(id) started in workspace `\(workspace)`:\n\n\(quoted(text))\n\n"
            + "Follow it: `so deployment --name \(workspace) tasks logs \(id) -f`"
    }

    static func ended(_ t: TaskRecord, _ workspace: String, result: TaskResult?, lastLines: String) -> String {
        let branch = result?.branch ?? t.branch ?? "its branch"
        let commits = result?.commits ?? t.commits.count
        var body: String
        if t.state == "succeeded" {
            body =
                "Task \(t.id) in `\(workspace)` succeeded: \(commits) \(English.plural("commit", commits)) on `\(branch)`"
            body += (result?.pushed ?? (t.pushed != nil)) ? " (pushed)." : "."
            if let pr = result?.pullRequest { body += "\n\nPull request: \(pr)" }
        } else {
            body = "Task \(t.id) in `\(workspace)` \(t.state)"
            body += t.exitCode.map { " (exit \($0))" } ?? ""
            body += commits > 0 ? "; \(commits) \(English.plural("commit", commits)) kept on `\(branch)`." : "."
            let tail = lastLines.trimmingCharacters(in: .newlines)
            if !tail.isEmpty {
                body += "\n\nIts last lines:\n\n```\n\(tail.replacingOccurrences(of: "```", with: "'''"))\n```"
            }
        }
        if t.cost.reported { body += "\n\nCost: \(t.cost.text)" }
        return body
    }

    static func failedAfter(_ t: TaskRecord, _ workspace: String, _ error: Error) -> String {
        let why = (error as? SoError)?.message ?? "\(error)"
        return "Task \(t.id) in `\(workspace)` ended (\(t.state)), but its work did not leave the workspace: \(why)"
    }
}
