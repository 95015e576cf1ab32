import Foundation
import SoActions
import SoBasics
import SoCompose
import SoStack

/// `so build-containers`: builds the images a stack names — its `containers:` from
/// `container-build/<name>/` (build.sh or Dockerfile, tagged `<name>:local`) and every compose service
/// with `build:` (tagged with its `image:`, else `<stack>-<service>:local`) — with docker, through the
/// process runner. `start` loads them into kind.
public struct BuildAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    /// What would be built, in order; nothing runs.
    public func targets(_ stack: ResolvedStack) throws -> [BuildTarget] {
        var out: [BuildTarget] = []
        for name in stack.file.containers {
            let dir = Path.join(stack.root, "container-build", name.replacingOccurrences(of: "/", with: "-"))
            let origin = SourceLocation(file: stack.stackFilePath)
            let script = Path.join(dir, "build.sh")
            if ctx.fs.isFile(script) {
                out.append(
                    BuildTarget(name: name, image: "\(name):local", recipe: .script(path: script), origin: origin))
            } else {
                out.append(
                    BuildTarget(
                        name: name, image: "\(name):local",
                        recipe: .dockerfile(
                            context: dir, dockerfile: Path.join(dir, "Dockerfile"), args: [], target: nil),
                        origin: origin))
            }
        }
        for component in stack.pods + stack.optionalPods {
            let compose = try stack.compose(
                component, fs: ctx.fs, environment: nil,
                diagnostics: .dropped("a build reads only build:; deploy create and start warn about the rest")
            ).file
            for svc in compose.services {
                guard let b = svc.build else { continue }
                let origin = SourceLocation(file: compose.path, line: svc.line)
                // Interpolated as `docker compose build` does, from this shell's environment (defaults apply).
                func value(_ text: String, _ key: String) throws -> String {
                    do { return try Interpolation.interpolate(text, lookup: { ctx.environment[$0] }) } catch var e
                        as SoError
                    {
                        e.message = "\(key) of service '\(svc.name)': " + e.message
                        e.location = origin
                        throw e
                    }
                }
                let written = try value(b.context, "build.context")
                let context = Path.absolute(written.isEmpty ? "." : written, relativeTo: compose.directory)
                let dockerfile = Path.absolute(
                    try b.dockerfile.map { try value($0, "build.dockerfile") } ?? "Dockerfile", relativeTo: context)
                let image =
                    try svc.image.map { try value($0, "image") }
                    ?? LocalImage.name(stack: stack.name, service: svc.name)
                let args = try b.args.sorted { $0.key < $1.key }.map {
                    ($0.key, try value($0.value, "build.args.\($0.key)"))
                }
                out.append(
                    BuildTarget(
                        name: svc.name, image: image,
                        recipe: .dockerfile(
                            context: context, dockerfile: dockerfile, args: args,
                            target: try b.target.map { try value($0, "build.target") }),
                        origin: origin))
            }
        }
        return out
    }

    @discardableResult
    public func run(_ req: BuildRequest) async throws -> [BuildTarget] {
        let stack = try ctx.locator.resolve(req.stack, diagnostics: ctx.diagnostics)
        // --agent: the agent's image, after the stack's own (its FROM), which are built only when missing.
        let agentTarget = try req.agent.map { try AgentImageBuild(ctx: ctx).target(stack, agent: $0) }
        let chosen = try chosen(req, stack: stack) + (agentTarget.map { [$0] } ?? [])
        if chosen.isEmpty {
            ctx.say("\(stack.name) has nothing to build (no containers: in stack.yml, no compose service with build:)")
            return []
        }
        var built: [BuildTarget] = []
        var shim: String?
        // best effort: a scratch directory left behind (so-docker.*) is the system temp dir's to clear.
        defer { if let shim { try? ctx.fs.removeOwnedTree(shim, owner: .scratch(prefix: "so-docker")) } }
        for t in chosen {
            if req.dryRun {
                let argv = try command(t, stack: stack)
                if t == agentTarget { _ = try await AgentImageBuild(ctx: ctx).prepare(t, dryRun: true) }
                ctx.say("would build \(t.image): " + argv.joined(separator: " "))
                continue
            }
            _ = try command(t, stack: stack)
            var env = environment(stack, t)
            if case .script = t.recipe, ctx.kindProvider.cli != "docker" {
                let dir = try shim ?? dockerShim()
                shim = dir
                env["PATH"] = dir + ":" + (env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin")
            }
            // An image the engine cannot inspect (or no engine: the build says so) is built. With --agent, the stack's
            // own images are the agent's base: --force-rebuild rebuilds them only when --include names them.
            let forced = req.forceRebuild && (agentTarget == nil || t == agentTarget || !req.include.isEmpty)
            if !forced,
                let r = try? await ctx.processes.run(
                    inspectCommand(t.image), workingDirectory: nil, environment: env, timeout: 30),
                r.exitCode == 0
            {
                ctx.say("\(t.image) exists; skipped (--force-rebuild builds it again)")
                continue
            }
            // The agent's wheels are downloaded into a scratch context first (AgentImageBuild).
            let prepared = try await AgentImageBuild(ctx: ctx).prepare(t, dryRun: false)
            defer {
                if let s = prepared.scratch { try? ctx.fs.removeOwnedTree(s, owner: .scratch(prefix: "so-wheels")) }
            }
            let argv = try command(prepared.target, stack: stack)
            ctx.say("building \(t.image) (\(t.name))")
            let code: Int32
            if !ctx.options.quiet {
                code = try await ctx.processes.runAttached(argv, environment: env)
            } else {
                let r = try await ctx.processes.run(argv, workingDirectory: nil, environment: env, timeout: 3600)
                code = r.exitCode
                if code != 0 {
                    throw SoError(
                        "building \(t.image) failed: \(r.lastErrorLine)",
                        hint: "run '\(argv.joined(separator: " "))' to see the whole build",
                        at: t.origin)
                }
            }
            guard code == 0 else {
                throw SoError(
                    "building \(t.image) failed (exit code \(code))", hint: "the build output above says why",
                    at: t.origin)
            }
            built.append(t)
        }
        if !req.dryRun {
            ctx.say(
                "built \(built.count) \(English.plural("image", built.count)); 'so deployment … start' loads them into kind"
            )
        }
        return built
    }

    /// The stack's targets `--include` and `--exclude` leave; a name they give that the stack does not build is an error.
    func chosen(_ req: BuildRequest, stack: ResolvedStack) throws -> [BuildTarget] {
        var chosen = try targets(stack)
        let names = chosen.map(\.name)
        for n in req.include + req.exclude where !names.contains(n) {
            let hint =
                names.isEmpty
                ? "the stack lists no containers and no compose service has build:"
                : "it builds: " + names.joined(separator: ", ")
            throw SoError("\(stack.name) builds no container named '\(n)'", hint: hint)
        }
        if !req.include.isEmpty { chosen = chosen.filter { req.include.contains($0.name) } }
        return chosen.filter { !req.exclude.contains($0.name) }
    }

    /// The docker (or build.sh) command line, with the kind provider's engine (KIND_EXPERIMENTAL_PROVIDER) for docker,
    /// so the image is where start looks for it; a missing context or Dockerfile is an error here, at build time.
    func command(_ t: BuildTarget, stack: ResolvedStack) throws -> [String] {
        switch t.recipe {
        case .script(let path):
            return ["bash", path]
        case .dockerfile(let context, let dockerfile, let args, let target):
            guard ctx.fs.isDirectory(context) else {
                throw SoError(
                    "build context of \(t.name) not found: \(context)",
                    hint: "create it, or fix build.context (relative to the compose file)",
                    at: t.origin)
            }
            guard ctx.fs.isFile(dockerfile) else {
                let hint =
                    stack.file.containers.contains(t.name)
                    ? "add container-build/\(t.name)/Dockerfile or build.sh"
                    : "fix build.dockerfile (relative to the build context)"
                throw SoError("Dockerfile of \(t.name) not found: \(dockerfile)", hint: hint, at: t.origin)
            }
            var argv = [engine, "build", "--tag", t.image, "--file", dockerfile]
            for (k, v) in args { argv += ["--build-arg", "\(k)=\(v)"] }
            if let target { argv += ["--target", target] }
            return argv + [context]
        }
    }

    /// The engine that builds a Dockerfile: `DOCKER` when set (laconic-so's variable, which build.sh scripts read
    /// too: e.g. a wrapper around buildah), else the kind provider's (docker, podman, nerdctl), so the image is where
    /// start looks for it.
    var engine: String {
        if let d = ctx.environment["DOCKER"]?.trimmedSpaces, !d.isEmpty { return d }
        return ctx.kindProvider.cli
    }

    /// How the engine is asked whether `image` exists (buildah has no `image inspect`).
    func inspectCommand(_ image: String) -> [String] {
        if Path.basename(engine).contains("buildah") {
            return [engine, "inspect", "--type", "image", "--format", "{{.FromImageID}}", image]
        }
        return [engine, "image", "inspect", "--format", "{{.Id}}", image]
    }

    /// laconic-so's build.sh scripts call `docker build` by name: with kind on another engine (podman), a
    /// `docker` first on their PATH runs that engine, so the image lands where start loads it from.
    func dockerShim() throws -> String {
        let dir = try ctx.fs.temporaryDirectory(beside: Path.join(ctx.temporaryRoot, "so-docker"), prefix: "so-docker")
        let engine = ctx.kindProvider.cli
        try ctx.fs.writeText(
            "#!/bin/sh\n# so build-containers: docker runs \(engine), the engine kind uses here\nexec \(engine) \"$@\"\n",
            to: Path.join(dir, "docker"))
        try ctx.fs.setExecutable(Path.join(dir, "docker"), true)
        ctx.say("build.sh scripts run with 'docker' calling \(engine) (KIND_EXPERIMENTAL_PROVIDER=\(engine))")
        return dir
    }

    /// What laconic-so's build.sh scripts read.
    func environment(_ stack: ResolvedStack, _ t: BuildTarget) -> [String: String] {
        var env = ctx.environment
        env["CERC_CONTAINER_BASE_DIR"] = Path.join(stack.root, "container-build")
        env["CERC_REPO_BASE_DIR"] = ctx.locator.repoBaseDir
        env["CERC_DEFAULT_CONTAINER_VERSION"] = "local"
        env["CERC_CONTAINER_EXTRA_BUILD_ARGS"] = env["CERC_CONTAINER_EXTRA_BUILD_ARGS"] ?? ""
        env["SO_IMAGE"] = t.image
        // The engine kind runs on builds the images start loads from it; build.sh scripts that honour DOCKER use it too.
        if ctx.kindProvider.cli != "docker", env["DOCKER"] == nil { env["DOCKER"] = ctx.kindProvider.cli }
        return env
    }
}
