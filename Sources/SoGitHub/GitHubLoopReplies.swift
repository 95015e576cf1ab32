import Foundation
import SoWorkspace

/// The review comments a task of the GitHub loop took: when it ends, the loop answers in each one's thread
/// (`comments`: the first comment of each thread, the one GitHub's replies hang from).
public struct GitHubLoopReplies: Sendable, Equatable, Codable {
    public var task: Int
    public var pullRequest: Int
    public var comments: [Int]
    public init(task: Int, pullRequest: Int, comments: [Int]) {
        self.task = task
        self.pullRequest = pullRequest
        self.comments = comments
    }
}
