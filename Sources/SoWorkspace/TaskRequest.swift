import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

public struct TaskRequest: Sendable {
    public var directory: String
    public var text: String
    /// Instead of the spec's `workspace.task`.
    public var command: String?
    public var push = true
    /// Open a pull request (GitHub) when the task succeeded and left commits.
    public var pullRequest = false
    public var title: String?
    /// The pull request's base branch; default: the branch the workspace was cloned from.
    public var base: String?
    /// `--issue OWNER/REPO#N`: comment there when the task starts and when it ends (through the `TaskForge`).
    public var issue: String?
    public var cluster = ClusterOptions(performClusterManagement: false)
    /// The agent's output goes to stderr (stdout carries a JSON summary).
    public var agentOutputToStderr = false
    /// The text's first line, at most 72 characters: a commit's subject, a pull request's default title.
    var subject: String { String(text.split(separator: "\n").first.map(String.init)?.trimmedSpaces.prefix(72) ?? "") }

    public init(directory: String, text: String) {
        self.directory = directory
        self.text = text
    }
}

extension String {
    package func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
