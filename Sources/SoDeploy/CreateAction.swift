import Foundation
import SoActions
import SoBasics
import SoCompose
import SoRender
import SoStack

public struct CreateAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    @discardableResult
    public func run(_ req: CreateRequest) async throws -> CreateResult {
        let specPath = ctx.absolute(req.specFile)
        let spec = try loadSpec(specPath, ttl: req.ttl)
        let dir = ctx.absolute(req.deploymentDir ?? "deployment-001")
        try checkDirectory(dir, update: req.update)
        let stack = try resolveStack(spec, specPath: specPath, req: req)
        let identity = try await deploymentIdentity(dir: dir, spec: spec, stack: stack, update: req.update)
        let plan = try DeploymentPlanner(ctx: ctx, spec: spec, stack: stack, directory: dir).plan(
            identity: identity, includeIdentity: !req.update)
        if req.dryRun { return try dryRun(plan, dir: dir, stack: stack, identity: identity, update: req.update) }
        // Temporaries a killed create left beside the directory (their process is gone) go first.
        let fs = ctx.fs
        let prefix = DeploymentPlan.temporaryPrefix(dir)
        for p in fs.removeStaleTemporaries(
            beside: dir, prefix: prefix, isProcessAlive: ctx.isProcessAlive, now: ctx.clock.now())
        {
            ctx.verbose("removed \(p), left by an interrupted run")
        }
        var result = CreateResult(directory: dir, deployment: identity)
        if req.update {
            // One step: an interrupt waits for the refresh to finish rather than leave it half done.
            let changes = try ctx.interrupts.step { try plan.apply(over: dir, fs: fs) }
            result.changed = changes.changed
            result.added = changes.added
            result.removed = changes.removed
            ctx.say("updated deployment \(dir) (stack \(stack.name), id \(identity.deploymentID))")
            for f in changes.changed { ctx.say("  changed \(f) (previous copy kept as \(f).bak)") }
            for f in changes.added { ctx.say("  added \(f)") }
            for f in changes.removed { ctx.say("  removed \(f) (no longer in the stack)") }
            if changes.changed.isEmpty && changes.added.isEmpty && changes.removed.isEmpty {
                ctx.say("  no changes")
            } else {
                await RecordAction(ctx).recordUpdate(dir: dir, cluster: req.cluster)
            }
        } else {
            try plan.write(to: dir, fs: fs, interrupts: ctx.interrupts)
            ctx.say("created deployment \(dir) (stack \(stack.name), id \(identity.deploymentID))")
        }
        return result
    }

    /// The spec file, with `--ttl` (when given) written into its text and value.
    func loadSpec(_ specPath: String, ttl: String?) throws -> Spec {
        var spec = try Spec.load(specPath, fs: ctx.fs, diagnostics: ctx.diagnostics)
        if let ttl {
            guard let seconds = DurationText.seconds(ttl), seconds > 0 else {
                throw SoError("--ttl '\(ttl)' is not a duration", hint: "write e.g. 90m, 4h or 2d")
            }
            // Through the spec's tree: the deployment's copy of the spec records the ttl (see YAMLDocument for what is kept).
            var doc = try YAMLDocument(text: spec.text, file: specPath)
            try doc.set(["ttl"], .string(ttl))
            spec.text = doc.text
            spec.ttl = seconds
        }
        return spec
    }

    /// `--update` needs a deployment directory; a new one must not exist yet.
    func checkDirectory(_ dir: String, update: Bool) throws {
        let fs = ctx.fs
        if update {
            guard fs.isDirectory(dir) else {
                throw SoError("deployment directory \(dir) does not exist", hint: "drop --update to create it")
            }
            guard fs.isFile(Path.join(dir, "deployment.yml")) else {
                throw SoError(
                    "\(dir) is not a deployment directory (no deployment.yml)",
                    hint: "point --deployment-dir at a directory made by 'so deploy create'")
            }
        } else if fs.exists(dir) {
            throw SoError(
                "deployment directory \(dir) already exists",
                hint: "pass --update to refresh it from the spec, or choose another --deployment-dir")
        }
    }

    /// The spec's stack (the caller's, when resolved already); a different `--stack` is warned about.
    func resolveStack(_ spec: Spec, specPath: String, req: CreateRequest) throws -> ResolvedStack {
        let stack =
            try req.resolved
            ?? ctx.locator.resolve(
                spec.stack, relativeTo: [ctx.fs.currentDirectory, Path.dirname(specPath)],
                at: SourceLocation(file: specPath, line: spec.stackLine), diagnostics: ctx.diagnostics)
        try stack.requirePods()
        if let cli = req.stack, cli != spec.stack {
            // An unresolvable --stack counts as different: the warning below names it.
            let other = try? ctx.locator.resolve(
                cli, diagnostics: .dropped("only compared with the spec's stack, never used"))
            if other?.stackDir != stack.stackDir {
                ctx.diagnostics.warn(
                    "--stack \(cli) differs from the spec's stack '\(spec.stack)'; using the spec's",
                    at: SourceLocation(file: specPath, line: spec.stackLine))
            }
        }
        return stack
    }

    /// The deployment's identity: read back on `--update`, else new ids (the cluster shared with an existing kind cluster).
    func deploymentIdentity(dir: String, spec: Spec, stack: ResolvedStack, update: Bool) async throws -> DeploymentFile
    {
        if update {
            return try DeploymentFile.load(Path.join(dir, "deployment.yml"), fs: ctx.fs, diagnostics: ctx.diagnostics)
        }
        let deploymentID = DeploymentFile.makeID(now: ctx.clock.now(), entropy: ctx.entropy)
        var clusterID = DeploymentFile.makeID(now: ctx.clock.now(), entropy: ctx.entropy)
        if spec.deployTo == .k8sKind, let existing = await existingKindCluster() { clusterID = existing }
        return DeploymentFile(clusterID: clusterID, deploymentID: deploymentID, stackSource: stack.stackDir)
    }

    /// `--dry-run`: what create or update would write, printed; nothing written.
    func dryRun(_ plan: DeploymentPlan, dir: String, stack: ResolvedStack, identity: DeploymentFile, update: Bool)
        throws -> CreateResult
    {
        var result = CreateResult(directory: dir, deployment: identity)
        if update {
            let changes = try plan.changes(over: dir, fs: ctx.fs)
            ctx.console.out("would update deployment \(dir) (stack \(stack.name), id \(identity.deploymentID))")
            for f in changes.changed { ctx.console.out("  would change \(f) (keeping \(f).bak)") }
            for f in changes.added { ctx.console.out("  would add \(f)") }
            for f in changes.removed { ctx.console.out("  would remove \(f)") }
            if changes.changed.isEmpty && changes.added.isEmpty && changes.removed.isEmpty {
                ctx.console.out("  no changes")
            }
            (result.changed, result.added, result.removed) = changes
        } else {
            ctx.console.out("would create deployment \(dir) (stack \(stack.name)):")
            for f in plan.files.map(\.path).sorted() { ctx.console.out("  \(f)") }
            result.added = plan.files.map(\.path).sorted()
        }
        return result
    }

    /// The first cluster `kind get clusters` lists, so every deployment on a host shares it.
    func existingKindCluster() async -> String? {
        // No kind (or kind failing) means no cluster to share: the start that follows makes or names one.
        guard
            let r = try? await ctx.processes.run(
                ["kind", "get", "clusters"], workingDirectory: nil, environment: ctx.environment, timeout: 10),
            r.exitCode == 0
        else { return nil }
        return ClusterTargets.clusters(listed: r.stdout).first
    }
}
