import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

/// What `so up` of a workspace stack starts from: a checkout here (no `GIT_REPO`), carried in as a bundle,
/// and the config that tells the clone to wait for it.
struct WorkspacePlan {
    var source: WorkspaceSource?
    var carry: CarryIn?
    var config: [String] = []
    var note: String?
    /// HEAD's history counted, beside the rest of `up` (a claim does not wait for it): `counted()`.
    var counts: Task<(commits: Int, local: Int), Never>?

    /// `s` (the plan's source, or what a claim made of it) with HEAD's history counted: what `up` prints.
    func counted(_ s: WorkspaceSource?) async -> WorkspaceSource? {
        guard var s else { return nil }
        if let counts { (s.commits, s.localCommits) = await counts.value }
        return s
    }

    static func make(_ ctx: SoContext, _ req: UpRequest, stack: ResolvedStack, name: String, existing: Bool)
        async throws -> WorkspacePlan
    {
        // spec-defaults is a mapping: StackFile.load checked it (`entries` cannot fail here).
        let defaults = (try? stack.file.specDefaults?.entries("'spec-defaults'")) ?? []
        let isWorkspace = defaults.contains { $0.key == "workspace" }
        guard isWorkspace else {
            if req.from != nil || req.includeUncommitted || req.agent != nil {
                throw SoError.usage(
                    "\(req.stack) is not a workspace stack: --from, --include-uncommitted and --agent apply to workspaces",
                    hint: "use them with agent-workspace, or a stack whose spec-defaults have workspace:")
            }
            return WorkspacePlan()
        }
        try checkAgent(req, stack: stack, existing: existing)
        // A pool's member: its clone waits for the checkout the claim carries in.
        // GIT_WARM: a member whose pool names its origin fetches it while it waits (clone.sh).
        if req.poolMember != nil { return WorkspacePlan(config: ["GIT_CARRY=bundle", "GIT_WARM=1"]) }
        let given = Set(
            req.config.compactMap {
                $0.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
            })
        if given.contains("GIT_REPO") {
            if req.from != nil || req.includeUncommitted {
                throw SoError.usage(
                    "--from and --include-uncommitted carry a local checkout, and GIT_REPO names a remote to clone",
                    hint: "give one of them")
            }
            return WorkspacePlan()
        }
        let carries = carriesCheckout(ctx, stack: stack)
        if existing {
            // Carried again only when its first start never got the checkout in.
            let env = try carriedConfig(ctx, name: name)
            guard carries, env.contains(where: { $0.key == "GIT_CARRY" && !$0.value.isEmpty }) else {
                return WorkspacePlan()
            }
        } else if !carries {
            if req.from != nil || req.includeUncommitted {
                throw SoError.usage(
                    "\(req.stack) cannot carry a local checkout in (its spec-defaults config has no GIT_CARRY)",
                    hint: "start it from a remote: --config GIT_REPO=URL")
            }
            return WorkspacePlan()
        }
        let start = req.from.map(ctx.absolute) ?? ctx.fs.currentDirectory
        guard let carry = try await CarryIn.find(ctx, directory: start) else {
            if req.from != nil {
                throw SoError.usage(
                    "\(start) is not in a git checkout", hint: "--from names the checkout to start the workspace from")
            }
            if req.includeUncommitted {
                throw SoError.usage(
                    "--include-uncommitted needs a git checkout, and \(start) is in none",
                    hint: "run so up in your checkout, or pass --from DIR")
            }
            let note =
                "\(start) is not in a git checkout and GIT_REPO is not set: "
                + "/workspace starts empty (run so up in your checkout, pass --from DIR, or --config GIT_REPO=URL)"
            return WorkspacePlan(note: existing ? nil : note)
        }
        let (source, hasOrigin) = try await carry.inspectUncounted(includeUncommitted: req.includeUncommitted)
        return WorkspacePlan(
            source: source, carry: carry, config: ["GIT_CARRY=bundle", "GIT_ORIGIN=\(source.origin)"],
            counts: carry.counting(base: source.base, hasOrigin: hasOrigin))
    }

    /// An `--agent` the stack does not know is refused (for a new workspace; an existing one keeps its own).
    static func checkAgent(_ req: UpRequest, stack: ResolvedStack, existing: Bool) throws {
        guard let agent = req.agent, !existing, !stack.file.agents.contains(where: { $0.name == agent }) else { return }
        throw SoError.usage(
            "unknown agent '\(agent)' for \(req.stack)",
            hint: stack.file.agents.isEmpty
                ? "the stack has no agents: table; add one to its stack.yml"
                : "known: \(stack.file.agents.map(\.name).joined(separator: ", ")); "
                    + "another one goes under agents: in the stack or a spec (task, secret-env, egress)")
    }

    /// Whether the stack's spec-defaults config has `GIT_CARRY` (its clone can wait for a carried checkout);
    /// an unreadable config is said, and taken as unset.
    static func carriesCheckout(_ ctx: SoContext, stack: ResolvedStack) -> Bool {
        let config: [(key: String, keyNode: YNode, value: YNode)]
        do {
            config =
                try stack.file.specDefaults?.mapping("'spec-defaults'").nonNull("config")?.entries("'config'") ?? []
        } catch {
            ctx.diagnostics.warn(
                "cannot read spec-defaults config of stack \(stack.name): \(SoContext.oneLine(error)); GIT_CARRY taken as unset",
                hint: "make spec-defaults.config a mapping of names to values")
            config = []
        }
        return config.contains { $0.key == "GIT_CARRY" }
    }

    /// The config.env of the existing workspace `name` (an unreadable one is said, and taken as empty).
    static func carriedConfig(_ ctx: SoContext, name: String) throws -> [(key: String, value: String)] {
        let dir = try ctx.namedDeployment(name)
        let env: [(key: String, value: String)]
        do {
            env = try ConfigEnv.load(Path.join(dir, "config.env"), fs: ctx.fs)
        } catch {
            ctx.diagnostics.warn(
                "cannot read config.env of workspace \(name): \(SoContext.oneLine(error)); its checkout is not carried again",
                hint: "fix \(Path.join(dir, "config.env")), then run so up again")
            env = []
        }
        return env
    }
}
