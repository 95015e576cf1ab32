import Foundation
import SoBasics

extension GitHubLoopConfig {
    /// The loop's own tokens (comments, reactions, pull requests): never handed to a workspace.
    static let loopsTokens: Set<String> = ["GITHUB_TOKEN", "GH_TOKEN", "GIT_TOKEN"]

    static func isVariableName(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, s.utf8.count <= 128, !("0"..."9").contains(first) else {
            return false
        }
        return s.unicodeScalars.allSatisfy { $0.isASCII && ($0 == "_" || CharacterSet.alphanumerics.contains($0)) }
    }

    /// With a token (no GitHub App), what workspaces push with: the variable `workspace-token-env` names, set, and not
    /// one of the loop's own tokens. An agent steered by an issue's text can read whatever its workspace holds: it
    /// must hold a token that can do no more than push to the repository (a fine-grained token with contents: write
    /// on it alone), never the one that comments and opens pull requests on every repository of the config.
    public func workspaceToken(_ environment: [String: String]) throws -> String {
        guard let name = workspaceTokenEnv else {
            throw SoError(
                "the loop's config names no workspace-token-env: so github loop will not hand its own token to the "
                    + "workspaces, and acts with a token (GITHUB_TOKEN or GH_TOKEN), not a GitHub App",
                hint: "make a token for the workspaces (fine-grained: contents: write on the config's repositories), "
                    + "put it in a variable such as WORKSPACE_GITHUB_TOKEN, and write workspace-token-env: "
                    + "WORKSPACE_GITHUB_TOKEN in the config (or act as a GitHub App)")
        }
        guard let token = environment[name], !token.isEmpty else {
            throw SoError(
                "\(name) (the config's workspace-token-env) is not set: the workspaces would have no token",
                hint: "set \(name) to the workspaces' token")
        }
        let own = Self.loopsTokens.compactMap { environment[$0] }.filter { !$0.isEmpty }
        guard !own.contains(token) else {
            throw SoError(
                "\(name) holds the loop's own token (the same as GITHUB_TOKEN, GH_TOKEN or GIT_TOKEN)",
                hint: "give the workspaces a token of their own, that can push to the repositories and no more")
        }
        return token
    }
}

extension GitHubLoopLive {
    /// The environment a workspace is made with: its own token as GITHUB_TOKEN (with an App, the App's token, which
    /// `acting` put there), and none of the loop's other tokens.
    static func workspaceEnvironment(_ environment: [String: String], token: String?, app: Bool) -> [String: String] {
        var env = environment
        env["GH_TOKEN"] = nil
        env["GIT_TOKEN"] = nil
        if !app { env["GITHUB_TOKEN"] = token }
        return env
    }
}
