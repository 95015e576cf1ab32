import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

/// The image a new workspace runs: its agent's own (`image:` of the agent's entry in `agents:`, built by `so
/// build-containers --agent NAME`) when the cluster has it, so `so up agent-workspace --agent claude` needs no
/// `AGENT_IMAGE`; else the stack's default (`AGENT_IMAGE` of its spec-defaults), said with the command that builds
/// the agent's. "Has it": a node of the cluster lists it among its images, or, for kind (whose start loads the
/// host's `:local` images), this host's engine has it. A `--config AGENT_IMAGE=…` always wins; nothing is asked then.
struct AgentImage {
    let ctx: SoContext

    /// What was found: `AGENT_IMAGE=…` for the plan's config, or nothing (the stack's default stays), and the line
    /// that says which, for the caller to say when it uses it.
    struct Found: Sendable {
        var config: [String] = []
        var note: String?
    }

    func lookup(_ req: UpRequest, stack: ResolvedStack) async -> Found {
        let given = req.config.contains { $0.hasPrefix("AGENT_IMAGE=") }
        guard !given, let name = req.agent ?? Self.defaultAgent(stack),
            let image = stack.file.agents.first(where: { $0.name == name })?.image
        else { return Found() }
        if await present(image, req) {
            return Found(
                config: ["AGENT_IMAGE=\(image)"], note: "agent image: \(image) (\(name)'s, found on the cluster)")
        }
        return Found(
            note: "agent image: \(image) (\(name)'s) is not on the cluster's nodes: the workspace runs the stack's "
                + "default image, without \(name)'s CLI (build it: so build-containers --stack \(req.stack) --agent "
                + "\(name); or --config AGENT_IMAGE=IMAGE)")
    }

    /// `workspace.agent` of the stack's spec-defaults (what `so up` without `--agent` runs).
    static func defaultAgent(_ stack: ResolvedStack) -> String? {
        // StackFile.load read spec-defaults already, and init reports a workspace.agent that does not read.
        guard let defaults = try? stack.file.specDefaults?.mapping("'spec-defaults'"),
            let workspace = try? defaults.nonNull("workspace")?.mapping("'workspace'")
        else { return nil }
        // (the same: init reads workspace.agent after this, and says what is wrong with it)
        return try? workspace.nonNull("agent")?.string("workspace.agent")
    }

    /// Whether a node of the cluster lists `image` (`AgentImage.sameImage`), or the
    /// host's engine has it when the cluster is kind's. Anything that cannot be asked counts as absent.
    func present(_ image: String, _ req: UpRequest) async -> Bool {
        // Not being able to ask is an answer here: the stack's image runs, and config() says how to get the agent's.
        guard let target = try? await ClusterTargets(ctx: ctx).shared(req.cluster) else { return false }
        if let client = try? ctx.connect(target.connection),
            let nodes = await ctx.nodeListing.nodes(client, now: ctx.clock.now())
        {
            let names = nodes.flatMap { n in
                (n.at("status", "images")?.array ?? []).flatMap { ($0.at("names")?.array ?? []).compactMap(\.string) }
            }
            if names.contains(where: { Self.sameImage($0, image) }) { return true }
        }
        guard target.kindCluster != nil else { return false }
        let argv = [ctx.kindProvider.cli, "image", "inspect", "--format", "{{.Id}}", image]
        // No engine, or no such image: the host does not have it (start says so for the stack's :local images).
        let r = try? await ctx.processes.run(argv, workingDirectory: nil, environment: nil, timeout: 30)
        return r?.exitCode == 0
    }

    /// `x:local` and `docker.io/library/x:local` are one image to a node's runtime (a name without a registry is
    /// Docker Hub's); `localhost/x:local` is another.
    static func sameImage(_ a: String, _ b: String) -> Bool {
        func full(_ s: String) -> String {
            let first = s.split(separator: "/", maxSplits: 1).first.map(String.init) ?? s
            let hasRegistry = s.contains("/") && (first.contains(".") || first.contains(":") || first == "localhost")
            if hasRegistry { return s }
            return "docker.io/" + (s.contains("/") ? s : "library/" + s)
        }
        return full(a) == full(b)
    }
}
