import Foundation
import SoGitHub
import SoWorkspace

/// How this dashboard is part of the GitHub loop: the repositories its webhook takes deliveries for (none: it
/// receives nothing, the inbox is another's), and the loop's budgets when `--github-loop-config` names its file
/// (nil: the page shows what is spent, not what is left).
public struct GitHubSetup: Sendable, Equatable {
    public var receiving: [String]
    public var budget: GitHubLoopConfig.Budget?

    public init(receiving: [String], budget: GitHubLoopConfig.Budget?) {
        self.receiving = receiving
        self.budget = budget
    }
}
