import Foundation
import SoActions
import SoBasics
import SoStack

/// `so fetch-stack` and `so setup-repositories`: git through the context's process runner only.
public struct RepositoryAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    var dryRun: Bool { ctx.options.dryRun }

    public func fetch(_ locator: RepoLocator, gitSSH: Bool = false, pull: Bool = false, checkOnly: Bool = false)
        async throws -> FetchResult
    {
        let base = ctx.locator.repoBaseDir
        let dir = Path.join(base, locator.repo)
        var result = FetchResult(
            repository: locator.description, directory: dir, state: .present, ref: locator.ref, stacks: [])
        if ctx.fs.exists(dir) {
            guard ctx.fs.isDirectory(Path.join(dir, ".git")) || ctx.fs.isFile(Path.join(dir, ".git")) else {
                throw SoError(
                    "\(dir) exists but is not a git repository",
                    hint: "move it away, or set SO_REPO_BASE_DIR to another directory")
            }
            if let ref = locator.ref, !checkOnly {
                if try await !isAt(ref, dir) {
                    if dryRun {
                        ctx.say("would check out \(ref) in \(dir)")
                    } else {
                        try await git(["-C", dir, "checkout", "--quiet", ref], what: "check out \(ref) in \(dir)")
                        result.state = .checkedOut
                    }
                }
            }
            if pull && !checkOnly {
                let branch = try await git(
                    ["-C", dir, "rev-parse", "--abbrev-ref", "HEAD"], what: "read the branch of \(dir)"
                ).trimmedWhitespace
                if branch == "HEAD" {
                    ctx.say("skipping pull in \(dir): \(locator.ref ?? "the checkout") is not a branch")
                } else if dryRun {
                    ctx.say("would pull \(branch) in \(dir)")
                } else {
                    try await git(["-C", dir, "pull", "--ff-only", "--quiet"], what: "pull \(branch) in \(dir)")
                    result.state = .updated
                }
            }
        } else if checkOnly {
            result.state = .wouldClone
            ctx.say("\(locator.description) is not cloned yet (\(dir))")
            return result
        } else if dryRun {
            result.state = .wouldClone
            ctx.say(
                "would clone \(locator.cloneURL(ssh: gitSSH)) into \(dir)\(locator.ref.map { " and check out \($0)" } ?? "")"
            )
            return result
        } else {
            try ctx.fs.createDirectory(base)
            do {
                let hint =
                    gitSSH
                    ? "check your SSH key has access to the repository"
                    : "check the URL and your access to it; for private repositories try --git-ssh"
                try await git(
                    ["clone", "--quiet", locator.cloneURL(ssh: gitSSH), dir],
                    what: "clone \(locator.cloneURL(ssh: gitSSH))", hint: hint)
                if let ref = locator.ref {
                    try await git(["-C", dir, "checkout", "--quiet", ref], what: "check out \(ref) in \(dir)")
                }
            } catch {
                // It did not exist before this clone (checked above): what is there now is git's half-made clone.
                // best effort: the clone's error thrown next is what matters; the next clone refuses a leftover dir by name.
                try? ctx.fs.removeOwnedTree(dir, owner: .vouched(what: "the clone this run started") { _ in true })
                throw error
            }
            result.state = .cloned
        }
        result.stacks = try findStacks(in: dir)
        return result
    }

    public func setup(
        stack: ResolvedStack, include: [String], exclude: [String], gitSSH: Bool, pull: Bool, checkOnly: Bool,
        branches: [String]
    ) async throws -> [FetchResult] {
        if stack.file.repos.isEmpty {
            ctx.diagnostics.warn(
                "stack \(stack.name) does not define any repositories", at: SourceLocation(file: stack.stackFilePath))
            return []
        }
        let overrides = try branches.map { try RepoLocator.parse($0) }
        var results: [FetchResult] = []
        for entry in stack.file.repos {
            var locator = try RepoLocator.parse(entry)
            if !include.isEmpty && !include.contains(where: { matches(locator, $0) }) { continue }
            if exclude.contains(where: { matches(locator, $0) }) { continue }
            if let o = overrides.first(where: { $0.path == locator.path }) { locator.ref = o.ref }
            results.append(try await fetch(locator, gitSSH: gitSSH, pull: pull, checkOnly: checkOnly))
        }
        return results
    }

    func matches(_ locator: RepoLocator, _ pattern: String) -> Bool {
        let p = pattern.split(separator: "@").first.map(String.init) ?? pattern
        return locator.path == p || "\(locator.org)/\(locator.repo)" == p
    }

    /// True when the checkout is on branch `ref`, or its HEAD is the commit `ref` names.
    func isAt(_ ref: String, _ dir: String) async throws -> Bool {
        let branch = try await git(["-C", dir, "rev-parse", "--abbrev-ref", "HEAD"], what: "read the ref of \(dir)")
            .trimmedWhitespace
        if branch == ref { return true }
        let head = try await git(["-C", dir, "rev-parse", "HEAD"], what: "read the commit of \(dir)").trimmedWhitespace
        // A ref that is no commit here is not where the checkout is (rev-parse --verify fails for it).
        let target = try? await git(
            ["-C", dir, "rev-parse", "--verify", "--quiet", "\(ref)^{commit}"], what: "resolve \(ref)")
        return target?.trimmedWhitespace == head
    }

    /// Stacks in a checkout, in laconic-so's layouts first.
    func findStacks(in dir: String) throws -> [FetchResult.StackRef] {
        var out: [FetchResult.StackRef] = []
        for sub in ["stack-orchestrator/stacks", "stack_orchestrator/data/stacks", "stacks"] {
            let stacks = Path.join(dir, sub)
            guard ctx.fs.isDirectory(stacks) else { continue }
            for name in try ctx.fs.list(stacks) where ctx.fs.isFile(Path.join(stacks, name, "stack.yml")) {
                out.append(.init(name: name, path: Path.join(stacks, name)))
            }
            if !out.isEmpty { break }
        }
        return out
    }

    @discardableResult
    func git(_ args: [String], what: String, hint: String = "run the same git command by hand to see more") async throws
        -> String
    {
        ctx.verbose("git \(args.joined(separator: " "))")
        let r = try await ctx.processes.run(["git"] + args, workingDirectory: nil, environment: nil, timeout: 600)
        guard r.exitCode == 0 else { throw SoError("cannot \(what): \(r.lastErrorLine)", hint: hint) }
        return r.stdout
    }
}
