import Foundation

/// What the GitHub loop says when a task of its own ends: the outcome comment on the issue (state, commits, cost,
/// and on a failure the log's last lines) and the reply in each review comment's thread. Pure: the task's report and
/// log in, the text out. The log is the agent's output: besides the values the live side replaced (the workspace's
/// Secret, the loop's token), anything shaped like a well-known token is replaced here, lines are cut, and the fence
/// cannot be closed from inside.
public enum GitHubLoopReport {
    public static let logLines = 20
    public static let lineCharacters = 200
    public static let commitsShown = 10

    /// `withheld`: the log is not posted (a public repository): the comment says where to read it.
    public static func outcome(_ t: GitHubLoopWork.Task, workspace: String, log: String, withheld: Bool = false)
        -> String
    {
        var body = "Task \(t.id) in `\(workspace)` \(t.state)"
        if t.state != "succeeded", let code = t.exitCode { body += " (exit \(code))" }
        body += "."
        if t.commits.isEmpty {
            body += "\n\nNo commit."
        } else {
            body += "\n\nCommits (\(t.commits.count)):\n"
            body += t.commits.prefix(commitsShown).map { "\n- " + commit($0) }.joined()
            if t.commits.count > commitsShown { body += "\n- … and \(t.commits.count - commitsShown) more" }
        }
        if let pr = t.pullRequest { body += "\n\nPull request: \(pr)" }
        body += "\n\nCost: " + (t.cost ?? "not reported by the agent") + "."
        let lines = tail(log)
        if t.state != "succeeded", !lines.isEmpty {
            body += "\n\nIts log's last lines:\n\n```\n\(lines)\n```"
        }
        if withheld {
            body +=
                "\n\nIts log is not posted on a public repository (`post-logs: true` in the loop's config posts it): "
                + "`so deployment --name \(workspace) tasks` shows it to those with access to the cluster."
        }
        return body
    }

    /// The reply in a review comment's thread.
    public static func reply(_ t: GitHubLoopWork.Task, workspace: String) -> String {
        var body = "so's task \(t.id) in `\(workspace)` took this comment and \(t.state)"
        if t.state != "succeeded", let code = t.exitCode { body += " (exit \(code))" }
        if !t.commits.isEmpty {
            let shas = t.commits.prefix(3).map { "`\(short($0.sha))`" }.joined(separator: ", ")
            let n = t.commits.count
            body += ": \(n) commit\(n == 1 ? "" : "s") (\(shas)\(n > 3 ? ", …" : ""))"
        }
        return body + "; its outcome is on the issue."
    }

    /// A commit as one line: its short sha, and its subject cut to 100 characters.
    static func commit(_ c: TaskRecord.Commit) -> String {
        let subject = c.subject.map { $0.isNewline ? " " : $0 }
        return "`\(short(c.sha))` " + String(subject.prefix(100)) + (subject.count > 100 ? "…" : "")
    }

    static func short(_ sha: String) -> String { String(sha.filter(\.isHexDigit).prefix(7)) }

    /// The last `logLines` lines, each cut to `lineCharacters`, token-shaped words replaced, no fence inside.
    public static func tail(_ log: String) -> String {
        var lines = log.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeLast() }
        return lines.suffix(logLines).map { line in
            let clean = String(line.unicodeScalars.filter { $0 == "\t" || $0.value >= 0x20 && $0.value != 0x7f })
            let cut = clean.count > lineCharacters ? String(clean.prefix(lineCharacters)) + "…" : clean
            return scrub(cut).replacingOccurrences(of: "```", with: "'''")
        }.joined(separator: "\n")
    }

    /// Well-known token shapes (GitHub's, Anthropic's and OpenAI's keys, AWS access keys, Slack's tokens, a bearer
    /// header) and the value of `NAME=value` or `NAME: value` when NAME says token, secret, password or key.
    /// (Fixed patterns: one that did not compile is left out, and the tests, which expect each to match, fail.)
    static let tokenShapes: [NSRegularExpression] = [
        #"\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,})"#,
        #"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"#,
        #"(?i)\b([A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY)[A-Z0-9_]*\s*[=:]\s*)\S+"#,
    ].compactMap {
        // fixed patterns, not input: see above
        try? NSRegularExpression(pattern: $0)
    }

    static func scrub(_ line: String) -> String {
        var s = line
        for (i, re) in tokenShapes.enumerated() {
            let range = NSRange(s.startIndex..., in: s)
            s = re.stringByReplacingMatches(in: s, range: range, withTemplate: i == 0 ? "<secret>" : "$1<secret>")
        }
        return s
    }
}
