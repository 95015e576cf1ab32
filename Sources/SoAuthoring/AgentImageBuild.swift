import Foundation
import SoActions
import SoBasics
import SoStack

/// `so build-containers --agent NAME`: the image of one entry of the stack's `agents:` table (its `image:`, e.g.
/// `so-agent-workspace-claude:local`), built from `container-build/<image's name>/` of the stack. Where that
/// directory has a `wheels.txt`, the wheels it names are downloaded first (`python3 -m pip download`, binary wheels
/// for the Python its `# python-version:` line names and this host's architecture) into a scratch build context,
/// so the build itself needs no network and the Dockerfile installs from `wheels/`.
struct AgentImageBuild {
    let ctx: SoContext

    /// The agent's image as a build target (its container directory's Dockerfile).
    func target(_ stack: ResolvedStack, agent: String) throws -> BuildTarget {
        let origin = SourceLocation(file: stack.stackFilePath)
        guard let profile = stack.file.agents.first(where: { $0.name == agent }) else {
            throw SoError.usage(
                "\(stack.name) has no agent '\(agent)'",
                hint: stack.file.agents.isEmpty
                    ? "the stack has no agents: table"
                    : "its agents: " + stack.file.agents.map(\.name).joined(separator: ", "))
        }
        guard let image = profile.image else {
            let withImage = stack.file.agents.filter { $0.image != nil }.map(\.name)
            throw SoError(
                "agent \(agent) of \(stack.name) names no image: to build",
                hint: (withImage.isEmpty ? "" : "images are built for: \(withImage.joined(separator: ", ")); ")
                    + "build your own from the stack's Dockerfile (docs/agent-workspaces.md, \"An image with your agent\") "
                    + "and give it as --config AGENT_IMAGE=…",
                at: profile.location ?? origin)
        }
        let name = Self.containerName(image)
        let dir = Path.join(stack.root, "container-build", name)
        return BuildTarget(
            name: name, image: image,
            recipe: .dockerfile(context: dir, dockerfile: Path.join(dir, "Dockerfile"), args: [], target: nil),
            origin: profile.location ?? origin)
    }

    /// `so-agent-workspace-claude:local` → `so-agent-workspace-claude` (a registry host and path dropped too).
    static func containerName(_ image: String) -> String {
        var name = Substring(image)
        if let at = name.firstIndex(of: "@") { name = name[..<at] }
        if let slash = name.lastIndex(of: "/") { name = name[name.index(after: slash)...] }
        if let colon = name.firstIndex(of: ":") { name = name[..<colon] }
        return String(name)
    }

    /// What `wheels.txt` asks for: the image's Python version (`# python-version: 3.11`), whether the packages'
    /// dependencies come too (`# dependencies: no` for a wheel that only carries a binary) and the requirement lines.
    struct Wheels: Equatable {
        var pythonVersion: String
        var requirements: [String]
        var dependencies = true
    }

    static func wheels(_ text: String, path: String) throws -> Wheels {
        var version: String?
        var requirements: [String] = []
        var dependencies = true
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#") {
                let body = line.dropFirst().trimmingCharacters(in: .whitespaces)
                if body.hasPrefix("python-version:") {
                    let v = body.dropFirst("python-version:".count).trimmingCharacters(in: .whitespaces)
                    guard v.split(separator: ".").count == 2, v.allSatisfy({ $0.isNumber || $0 == "." }) else {
                        throw SoError(
                            "python-version '\(v)' is not a version like 3.11",
                            hint: "write the image's python3 version: # python-version: 3.11",
                            at: SourceLocation(file: path, line: i + 1))
                    }
                    version = v
                } else if body.replacingOccurrences(of: " ", with: "") == "dependencies:no" {
                    dependencies = false
                }
                continue
            }
            guard !line.isEmpty else { continue }
            // Options (an index, a hash mode) stay the user's pip configuration's, not a file's in a stack.
            guard !line.hasPrefix("-") else {
                throw SoError(
                    "\(line) is a pip option: wheels.txt holds requirements only",
                    hint: "configure pip's index with pip's own configuration (pip config, PIP_INDEX_URL)",
                    at: SourceLocation(file: path, line: i + 1))
            }
            requirements.append(line)
        }
        guard let version else {
            throw SoError(
                "\(path) does not say the image's Python version",
                hint: "add a line # python-version: 3.11 (the image's python3)", at: SourceLocation(file: path))
        }
        guard !requirements.isEmpty else {
            throw SoError(
                "\(path) names no package", hint: "add the pinned package, e.g. aider-chat==0.86.2",
                at: SourceLocation(file: path))
        }
        return Wheels(pythonVersion: version, requirements: requirements, dependencies: dependencies)
    }

    /// This host's architecture as wheel platform tags use it.
    static var architecture: String {
        #if arch(arm64)
            return "aarch64"
        #else
            return "x86_64"
        #endif
    }

    /// The pip command that downloads `w` into `into`.
    static func download(_ w: Wheels, requirements file: String, into: String) -> [String] {
        let arch = architecture
        return [
            "python3", "-m", "pip", "download", "--disable-pip-version-check", "--progress-bar", "off",
            "--only-binary=:all:", "--implementation", "cp", "--python-version", w.pythonVersion,
            "--platform", "manylinux_2_28_\(arch)", "--platform", "manylinux2014_\(arch)",
            "--platform", "manylinux_2_17_\(arch)", "--dest", into, "--requirement", file,
        ] + (w.dependencies ? [] : ["--no-deps"])
    }

    /// The target with its wheels downloaded into a scratch context (`wheels/`, with `wheels.txt` beside them),
    /// or as it is when its directory has no `wheels.txt`; `scratch` is what to remove afterwards.
    func prepare(_ t: BuildTarget, dryRun: Bool) async throws -> (target: BuildTarget, scratch: String?) {
        guard case .dockerfile(let context, let dockerfile, let args, let stage) = t.recipe else { return (t, nil) }
        let list = Path.join(context, "wheels.txt")
        guard ctx.fs.isFile(list) else { return (t, nil) }
        let w = try Self.wheels(try ctx.fs.readText(list, limit: 1 << 20, what: "wheels.txt"), path: list)
        ctx.say("\(t.image): \(w.requirements.joined(separator: ", ")) (pinned in \(list), Python \(w.pythonVersion))")
        if dryRun {
            ctx.say(
                "would download: "
                    + Self.download(w, requirements: list, into: Path.join("CONTEXT", "wheels")).joined(separator: " "))
            return (t, nil)
        }
        let scratch = try ctx.fs.temporaryDirectory(
            beside: Path.join(ctx.temporaryRoot, "so-wheels"), prefix: "so-wheels")
        do {
            let wheels = Path.join(scratch, "wheels")
            try ctx.fs.createDirectory(wheels)
            try ctx.fs.writeText(w.requirements.joined(separator: "\n") + "\n", to: Path.join(wheels, "wheels.txt"))
            let argv = Self.download(w, requirements: Path.join(wheels, "wheels.txt"), into: wheels)
            ctx.say("downloading the wheels of \(t.image) (python3 -m pip download)")
            let r = try await ctx.processes.run(
                argv, workingDirectory: nil, environment: ctx.environment, timeout: 1800)
            guard r.exitCode == 0 else {
                throw SoError(
                    "downloading the wheels of \(t.image) failed: \(r.lastErrorLine)",
                    hint: "pip needs its package index (pip config, PIP_INDEX_URL) or PIP_FIND_LINKS with the wheels; "
                        + "run '\(argv.joined(separator: " "))' to see more",
                    at: SourceLocation(file: list))
            }
            let got = try ctx.fs.list(wheels).filter { $0.hasSuffix(".whl") }
            ctx.say("\(got.count) \(English.plural("wheel", got.count)) downloaded for \(t.image)")
            var out = t
            // The Dockerfile stays where it is; the context is the scratch directory with wheels/ in it.
            out.recipe = .dockerfile(context: scratch, dockerfile: dockerfile, args: args, target: stage)
            return (out, scratch)
        } catch {
            // best effort: the error that ended the download is the one to report; a scratch left is the temp dir's.
            try? ctx.fs.removeOwnedTree(scratch, owner: .scratch(prefix: "so-wheels"))
            throw error
        }
    }
}
