import Foundation
import SoActions
import SoBasics
import SoDeploy

/// Where a claim's branch is on its remote (`so up --config GIT_REPO=URL [GIT_REF=BRANCH]` from a warm pool),
/// asked by `so` itself as the claim begins: the member, whose warm-up fetched the same repository, then checks out a
/// commit it has without asking the remote (its own ask came only after the hand-over's exec had started: one
/// round trip to the remote, through the workspace's egress proxy, on the claim's path).
///
/// Asked only of what cannot reach this machine's files or run its programs: `git://`, `http://` and `https://`
/// URLs (the user's own `--config`, never a pool's record), with no prompt and no credential helper (a private
/// repository is asked by the member, with the claimer's handed credentials, as before), and within `seconds`.
/// Whatever fails, times out or answers nothing is said to the member as nothing: it asks the remote itself.
struct RemoteTip: Equatable, Sendable {
    /// The branch's commit, and the branch (the remote's default branch when none was given).
    let commit: String
    let branch: String

    static let seconds = 2.0

    /// The line the hand-over's exec reads first on its stdin: `COMMIT BRANCH`, or empty.
    static func line(_ tip: RemoteTip?) -> String { tip.map { "\($0.commit) \($0.branch)\n" } ?? "\n" }

    /// Asked at once for a claim from a remote; nil for a checkout carried in.
    static func asking(_ ctx: SoContext, _ checkout: ClaimedCheckout) -> Task<RemoteTip?, Never>? {
        guard case .remote(let repo, let ref) = checkout else { return nil }
        return Task { await ask(ctx, repo: repo, ref: ref) }
    }

    /// `asked`, kept where `pool`'s members fetch the claim's repository while they wait (the only tip they use);
    /// else cancelled, and nil: the hand-over does not wait for it.
    static func kept(_ asked: Task<RemoteTip?, Never>?, by pool: PoolRecord, _ checkout: ClaimedCheckout)
        -> Task<RemoteTip?, Never>?
    {
        guard case .remote(let repo, _) = checkout, warmURL(pool.config) == repo else {
            asked?.cancel()
            return nil
        }
        return asked
    }

    /// The repository a pool's members fetch while they wait (clone.sh's warm-up: GIT_ORIGIN, else GIT_REPO, of the
    /// pool's `--config`): the only one whose tip they use.
    static func warmURL(_ config: [String]) -> String? {
        // As init reads --config (a pair it cannot read is no value here).
        let values = Dictionary(
            config.flatMap { (try? InitAction.parseConfigArgument($0)) ?? [] }, uniquingKeysWith: { $1 })
        return [values["GIT_ORIGIN"], values["GIT_REPO"]].compactMap { $0 }.first { !$0.isEmpty }
    }

    /// Asks the remote with `git ls-remote`; nil when the URL is not one asked here or the remote did not answer.
    static func ask(_ ctx: SoContext, repo: String, ref: String) async -> RemoteTip? {
        guard ["git://", "http://", "https://"].contains(where: { repo.lowercased().hasPrefix($0) }),
            !ref.hasPrefix("-"), !ref.contains(where: { $0.isWhitespace })
        else { return nil }
        let protocols =
            ["-c", "protocol.allow=never"]
            + ["git", "http", "https"].flatMap {
                ["-c", "protocol.\($0).allow=always"]
            }
        let quiet = ["-c", "credential.helper=", "-c", "core.askPass=true"]
        let asked = ref.isEmpty ? ["--symref", repo, "HEAD"] : [repo, "refs/heads/\(ref)"]
        var env = ctx.environment
        env["GIT_TERMINAL_PROMPT"] = "0"
        env["GIT_ASKPASS"] = "true"
        // best effort: a remote this machine cannot ask is asked by the member, as before
        guard
            let r = try? await ctx.processes.run(
                ["git"] + protocols + quiet + ["ls-remote"] + asked, workingDirectory: nil, environment: env,
                timeout: seconds),
            r.exitCode == 0
        else { return nil }
        return parse(r.stdout, ref: ref)
    }

    /// `git ls-remote`'s answer: the commit of `refs/heads/REF`, or with no ref the commit of HEAD and the branch its
    /// `ref:` line names (a HEAD that names no branch: nil).
    static func parse(_ text: String, ref: String) -> RemoteTip? {
        var branch = ref
        var commit: String?
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " }).map(String.init)
            if ref.isEmpty, fields.count == 3, fields[0] == "ref:", fields[2] == "HEAD",
                fields[1].hasPrefix("refs/heads/")
            {
                branch = String(fields[1].dropFirst("refs/heads/".count))
            } else if fields.count == 2, fields[1] == (ref.isEmpty ? "HEAD" : "refs/heads/\(ref)"),
                fields[0].count >= 40, fields[0].allSatisfy(\.isHexDigit)
            {
                commit = fields[0].lowercased()
            }
        }
        guard let commit, !branch.isEmpty else { return nil }
        return RemoteTip(commit: commit, branch: branch)
    }
}
