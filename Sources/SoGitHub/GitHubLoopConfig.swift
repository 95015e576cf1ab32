import Foundation
import SoBasics
import SoWorkspace

/// What a team's loop over the GitHub inbox does (`so github loop --config FILE`), from one YAML file:
///
/// ```yaml
/// repositories: [acme/web]      # the events of other repositories are left alone
/// label: so                     # an issue labeled so gets a workspace and a task
/// prefix: /so                   # a comment starting with it is the next task (default /so)
/// stack: agent-workspace        # what 'so up' makes each workspace of
/// config: [GIT_REF=main]        # more --config KEY=VALUE for it (GIT_REPO is the repository's)
/// agent: claude                 # the stack's agent (default: the stack's own)
/// forks: false                  # events of pull requests from forks are ignored unless true
/// trust: write                  # the least permission on the repository a sender needs to give a task
/// bots: ["renovate[bot]"]       # Apps' bots that may give tasks (no other [bot] login does)
/// post-logs: false              # a failed task's log tail in its comment on a public repository (private: always)
/// lease: 30m                    # a delivery taken longer ago by a loop that is not this one is reconciled
/// keep-days: 14                 # done and failed deliveries older than this are deleted
/// budget:
///   tasks: 10                   # tasks per workspace
///   wall-clock: 8h              # from the workspace's first task
///   cost: 5                     # dollars, as the agent reports them
///   workspaces: 3               # at once; a label past it waits in the inbox, in order
/// ```
///
/// Strict: an unknown key, a value of the wrong kind or a name GitHub would refuse is an error naming file:line.
public struct GitHubLoopConfig: Sendable, Equatable {
    public var repositories: [String]
    public var label: String
    public var prefix: String = "/so"
    public var stack: String
    public var config: [String] = []
    public var agent: String?
    public var forks = false
    /// The least permission on the repository (GitHub's, asked per sender) a label, command or review needs.
    public var trust = GitHubPermission.write
    /// The `[bot]` logins that may give tasks (lowercased); every other bot's events are ignored.
    public var bots: [String] = []
    /// A failed task's log tail goes in its outcome comment on a public repository too (on a private one it does).
    public var postLogs = false
    public var budget = Budget()
    /// Seconds a step of another loop may hold its deliveries `taken` before a pass reconciles them: longer than
    /// any step (an `up` included).
    public var lease: Double = 1800
    /// Days a `done` or `failed` delivery is kept.
    public var keepDays = 14

    public struct Budget: Sendable, Equatable {
        public var tasks: Int?
        /// Seconds.
        public var wallClock: Double?
        /// Dollars.
        public var cost: Double?
        public var workspaces: Int?
        public init(tasks: Int? = nil, wallClock: Double? = nil, cost: Double? = nil, workspaces: Int? = nil) {
            self.tasks = tasks
            self.wallClock = wallClock
            self.cost = cost
            self.workspaces = workspaces
        }
    }

    public init(repositories: [String], label: String, stack: String) {
        self.repositories = repositories
        self.label = label
        self.stack = stack
    }

    /// Whether `repository` (OWNER/NAME as GitHub spells it) is one of the loop's; not case-sensitive, as GitHub.
    public func watches(_ repository: String) -> Bool {
        repositories.contains { $0.lowercased() == repository.lowercased() }
    }

    static let keys = [
        "repositories", "label", "prefix", "stack", "config", "agent", "forks", "budget", "lease", "keep-days", "trust",
        "bots", "post-logs", "workspace-token-env",
    ]
    static let budgetKeys = ["tasks", "wall-clock", "cost", "workspaces"]

    public static func load(_ path: String, fs: FileSystem) throws -> GitHubLoopConfig {
        guard let node = try YAMLFile.load(path, fs: fs, what: "the loop's config") else {
            throw SoError(
                "\(path): the loop's config is empty", hint: "write at least repositories:, label: and stack:")
        }
        return try read(node)
    }

    public static func parse(_ text: String, file: String) throws -> GitHubLoopConfig {
        guard let node = try YAMLFile.parse(text, file: file) else {
            throw SoError(
                "\(file): the loop's config is empty", hint: "write at least repositories:, label: and stack:")
        }
        return try read(node)
    }

    static func read(_ node: YNode) throws -> GitHubLoopConfig {
        let m = try node.mapping("the loop's config")
        try refuseUnknown(m, keys)
        let repos = try m.required("repositories", hint: "name the repositories: repositories: [OWNER/NAME]")
            .stringList("'repositories'", allowSingle: true)
        for (i, r) in repos.enumerated() where !GitHubEvent.isRepositoryName(r) {
            throw try m.required("repositories").sequence("'repositories'")[i].error(
                "'repositories' holds '\(printable(r))', not a repository's OWNER/NAME", hint: "write OWNER/NAME")
        }
        guard !repos.isEmpty else {
            throw m.error(at: "repositories", "'repositories' is empty", hint: "name at least one OWNER/NAME")
        }
        let label = try m.required("label").string("'label'")
        try check(label, m, "label", max: GitHubEvent.labelBytes)
        var c = GitHubLoopConfig(repositories: repos, label: label, stack: try m.required("stack").string("'stack'"))
        try check(c.stack, m, "stack", max: 4096)
        if let p = try m.string("prefix") {
            try check(p, m, "prefix", max: 64)
            guard !p.contains(where: \.isWhitespace) else {
                throw m.error(at: "prefix", "'prefix' holds a space", hint: "write one word such as /so")
            }
            c.prefix = p
        }
        let configNode = m.nonNull("config")
        c.config = try configNode?.stringList("'config'", allowSingle: true) ?? []
        for (i, kv) in c.config.enumerated() where !kv.contains("=") || kv.hasPrefix("=") {
            // the entry's own line when it has one, else the list's
            let at = configNode.flatMap { $0.isSequence ? try? $0.sequence("'config'")[i] : $0 } ?? m.node
            throw at.error(
                "'config' holds '\(printable(kv))', not KEY=VALUE", hint: "write KEY=VALUE, as so up --config takes")
        }
        c.agent = try m.string("agent")
        if let a = c.agent { try check(a, m, "agent", max: 64) }
        c.forks = try m.bool("forks") ?? false
        try readTrust(m, into: &c)
        c.postLogs = try m.bool("post-logs") ?? false
        if let b = m.nonNull("budget") { c.budget = try readBudget(b) }
        try readKeeping(m, into: &c)
        return c
    }

    /// `lease` (a duration of at least a minute) and `keep-days` (above 0).
    static func readKeeping(_ m: MapReader, into c: inout GitHubLoopConfig) throws {
        if let l = try m.string("lease") {
            guard let s = DurationText.seconds(l), s >= 60, s.isFinite else {
                throw m.error(
                    at: "lease", "'lease' is '\(printable(l))', not a duration of a minute or more",
                    hint: "write e.g. 30m; it must outlast the longest step, an up included")
            }
            c.lease = s
        }
        if let d = try m.int("keep-days") {
            guard d > 0 else { throw m.error(at: "keep-days", "'keep-days' must be above 0", hint: "write e.g. 14") }
            c.keepDays = d
        }
    }

    /// `trust` (write, maintain or admin) and `bots` (logins ending in [bot]); `workspace-token-env` is refused.
    static func readTrust(_ m: MapReader, into c: inout GitHubLoopConfig) throws {
        if let t = try m.string("trust") {
            guard let p = GitHubPermission(name: t), GitHubPermission.trustLevels.contains(p) else {
                throw m.error(
                    at: "trust", "'trust' is '\(printable(t))', not write, maintain or admin",
                    hint: "write trust: write (the default), maintain or admin")
            }
            c.trust = p
        }
        let node = m.nonNull("bots")
        c.bots = try node?.stringList("'bots'", allowSingle: true) ?? []
        for (i, b) in c.bots.enumerated() where !GitHubPermission.isBot(b) || !GitHubEvent.isLogin(b) {
            // the entry's own line when it has one, else the list's
            let at = node.flatMap { $0.isSequence ? try? $0.sequence("'bots'")[i] : $0 } ?? m.node
            throw at.error(
                "'bots' holds '\(printable(b))', not an App's bot login",
                hint: "write the login as GitHub shows it, e.g. renovate[bot]")
        }
        c.bots = c.bots.map { $0.lowercased() }
        if try m.string("workspace-token-env") != nil {
            // Issue 64: a workspace gets no GitHub token at all; the loop pushes its work (a git bundle out).
            throw m.error(
                at: "workspace-token-env",
                "'workspace-token-env' is no longer read: workspaces get no GitHub token, the loop pushes their work",
                hint: "remove the line, and the workspaces' token from the loop's Secret")
        }
    }

    static func readBudget(_ node: YNode) throws -> Budget {
        let b = try node.mapping("'budget'")
        try refuseUnknown(b, budgetKeys)
        var budget = Budget()
        func positive(_ key: String) throws -> Int? {
            guard let n = try b.int(key) else { return nil }
            guard n > 0 else {
                throw b.error(at: key, "'budget.\(key)' must be above 0", hint: "leave it out for none")
            }
            return n
        }
        budget.tasks = try positive("tasks")
        budget.workspaces = try positive("workspaces")
        if let w = try b.string("wall-clock") {
            guard let s = DurationText.seconds(w), s > 0, s.isFinite else {
                throw b.error(
                    at: "wall-clock", "'budget.wall-clock' is '\(printable(w))', not a duration",
                    hint: "write e.g. 8h or 90m")
            }
            budget.wallClock = s
        }
        if let t = try b.string("cost") {
            guard let d = Double(t.trimmingPrefix("$")), d > 0, d.isFinite else {
                throw b.error(
                    at: "cost", "'budget.cost' is '\(printable(t))', not dollars", hint: "write e.g. 5 or 2.50")
            }
            budget.cost = d
        }
        return budget
    }

    static func refuseUnknown(_ m: MapReader, _ known: [String]) throws {
        for e in m.entries where !known.contains(e.key) {
            let hint =
                Suggest.closest(to: e.key, in: known).map { "did you mean '\($0)'?" }
                ?? "known: \(known.joined(separator: ", "))"
            throw e.keyNode.error("unknown key '\(printable(e.key))' in \(m.what)", hint: hint)
        }
    }

    /// A name of the config: 1 to `max` bytes, no control character.
    static func check(_ value: String, _ m: MapReader, _ key: String, max: Int) throws {
        guard !value.isEmpty, value.utf8.count <= max, !value.unicodeScalars.contains(where: isControl) else {
            throw m.error(
                at: key, "'\(key)' must be 1 to \(max) bytes without control characters", hint: "fix '\(key)'")
        }
    }

    static func isControl(_ u: Unicode.Scalar) -> Bool { u.value < 0x20 || (0x7f...0x9f).contains(u.value) }

    /// A value shown in an error: at most 60 characters, controls as `?`.
    static func printable(_ s: String) -> String {
        String(String(s.unicodeScalars.map { isControl($0) ? "?" : Character($0) }).prefix(60))
    }
}
