import Foundation
import SoBasics

extension GitHubLoopConfig {
    /// The loop's own tokens (comments, reactions, pull requests): never handed to a workspace.
    static let loopsTokens: Set<String> = ["GITHUB_TOKEN", "GH_TOKEN", "GIT_TOKEN"]
}

extension GitHubLoopLive {
    /// The environment a workspace is made with: none of the loop's tokens (GITHUB_TOKEN, GH_TOKEN, GIT_TOKEN), with
    /// a token or as an App: the workspace's work leaves as a git bundle, and the loop pushes it.
    static func workspaceEnvironment(_ environment: [String: String]) -> [String: String] {
        environment.filter { !GitHubLoopConfig.loopsTokens.contains($0.key) }
    }
}
