import Foundation
import SoBasics
import SoCompose

/// Where built-in stacks live and how paths and repos are found.
public struct StackLocator: Sendable {
    public var fs: FileSystem
    /// Root of the built-in stacks (holds stacks/, compose/, config/), if one was found.
    public var builtInRoot: String?
    /// Where the root was looked for (`BuiltInRootLookup.searched`), named in "no built-in stacks" errors.
    public var builtInSearched: [String]
    public var environment: [String: String]
    public var currentDirectory: String

    public init(
        fs: FileSystem, builtInRoot: String?, builtInSearched: [String] = [], environment: [String: String],
        currentDirectory: String
    ) {
        self.fs = fs
        self.builtInRoot = builtInRoot
        self.builtInSearched = builtInSearched
        self.environment = environment
        self.currentDirectory = currentDirectory
    }

    /// The built-in root, or the error saying where `so` looked for it.
    public func requireBuiltInRoot() throws -> String {
        guard let builtInRoot else { throw noBuiltInStacks(detail: nil) }
        return builtInRoot
    }

    func noBuiltInStacks(detail: String?, at location: SourceLocation? = nil) -> SoError {
        let looked = builtInSearched.isEmpty ? "" : "looked in " + builtInSearched.joined(separator: ", ")
        let why = [detail, looked.isEmpty ? nil : looked].compactMap { $0 }.joined(separator: "; ")
        return SoError(
            "no built-in stacks found" + (why.isEmpty ? "" : " (\(why))"),
            hint:
                "pass --root DIR or set SO_ROOT to the directory holding stacks/, or reinstall with 'make install PREFIX=…' "
                + "(installs PREFIX/bin/so and PREFIX/share/so); a stack on disk is --stack PATH",
            at: location)
    }

    /// `$SO_REPO_BASE_DIR`, else `$CERC_REPO_BASE_DIR`, else `~/cerc`.
    public var repoBaseDir: String {
        let raw =
            environment["SO_REPO_BASE_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["CERC_REPO_BASE_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "~/cerc"
        return Path.absolute(Path.expandTilde(raw, home: fs.homeDirectory), relativeTo: currentDirectory)
    }

    /// True when `value` names a path rather than a built-in stack.
    public static func looksLikePath(_ value: String) -> Bool {
        value.contains("/") || value.hasPrefix(".") || value.hasPrefix("~")
    }

    /// Names of the built-in stacks. Throws when there is no root, or it holds no stacks/ directory, saying where `so` looked.
    public func builtInStackNames() throws -> [String] {
        let dir = Path.join(try requireBuiltInRoot(), "stacks")
        guard fs.isDirectory(dir) else {
            throw noBuiltInStacks(detail: builtInSearched.isEmpty ? "no directory \(dir)" : nil)
        }
        return try fs.list(dir).filter { fs.isFile(Path.join(dir, $0, "stack.yml")) }
    }

    /// A stack of compose files, merged in order (docker compose `-f a -f b`). One file is resolved as
    /// `--stack PATH` is (a directory works too).
    public func resolve(
        composeFiles files: [String], relativeTo bases: [String]? = nil, at location: SourceLocation? = nil,
        diagnostics: DiagnosticSink
    ) throws -> ResolvedStack {
        if files.count == 1, let file = files.first {
            return try resolve(
                file.contains("/") || file.hasPrefix(".") ? file : "./" + file, relativeTo: bases, at: location,
                diagnostics: diagnostics)
        }
        let paths = try files.map { part -> String in
            let p = Path.expandTilde(part.trimmedSpaces, home: fs.homeDirectory)
            guard
                let f = (bases ?? [currentDirectory]).map({ Path.absolute(p, relativeTo: $0) }).first(where: {
                    fs.isFile($0)
                })
            else {
                throw SoError(
                    "compose file not found: \(Path.absolute(p, relativeTo: (bases ?? [currentDirectory])[0]))",
                    hint: "--stack takes compose files separated by commas", at: location)
            }
            return fs.realpath(f)
        }
        return try plainCompose(paths, diagnostics: diagnostics, at: location)
    }

    /// Finds the stack named or pointed to by `value` (`--stack` or a spec's `stack:`).
    /// `relativeTo` lists directories a relative path is tried against, in order.
    public func resolve(
        _ value: String, relativeTo bases: [String]? = nil, at location: SourceLocation? = nil,
        diagnostics: DiagnosticSink
    ) throws -> ResolvedStack {
        let trimmed = value.trimmedSpaces
        guard !trimmed.isEmpty else {
            throw SoError("stack name is empty", hint: "pass --stack NAME or --stack PATH", at: location)
        }
        if Self.looksLikePath(trimmed) && trimmed.contains(",") {
            // `--stack a.yml,b.yml` (and a spec's `stack:` written so): several compose files.
            return try resolve(
                composeFiles: trimmed.split(separator: ",").map { $0.trimmedSpaces }, relativeTo: bases, at: location,
                diagnostics: diagnostics)
        }
        if Self.looksLikePath(trimmed) {
            let expanded = Path.expandTilde(trimmed, home: fs.homeDirectory)
            let candidates = (bases ?? [currentDirectory]).map { Path.absolute(expanded, relativeTo: $0) }
            guard let dir = candidates.first(where: { fs.exists($0) }) else {
                throw SoError(
                    "stack not found: \(candidates[0])", hint: "a stack path points at the directory holding stack.yml",
                    at: location)
            }
            var stackDir = dir
            if fs.isFile(dir) {
                if Path.basename(dir) == "stack.yml" {
                    stackDir = Path.dirname(dir)
                } else if dir.hasSuffix(".yml") || dir.hasSuffix(".yaml") {
                    return try plainCompose([fs.realpath(dir)], diagnostics: diagnostics, at: location)
                } else {
                    throw SoError(
                        "\(dir) is a file, not a stack directory or compose file",
                        hint: "point --stack at the directory holding stack.yml, or at a compose file", at: location)
                }
            }
            let stackFile = Path.join(stackDir, "stack.yml")
            guard fs.isFile(stackFile) else {
                if let compose = Self.composeNames.map({ Path.join(stackDir, $0) }).first(where: { fs.isFile($0) }) {
                    // As docker compose: the override file beside the default file applies too.
                    let override = [
                        "compose.override.yaml", "compose.override.yml", "docker-compose.override.yaml",
                        "docker-compose.override.yml",
                    ]
                    .map { Path.join(stackDir, $0) }.first { fs.isFile($0) }
                    return try plainCompose(
                        [fs.realpath(compose)] + (override.map { [fs.realpath($0)] } ?? []), diagnostics: diagnostics,
                        at: location)
                }
                throw SoError(
                    "stack.yml not found in \(stackDir)",
                    hint:
                        "a stack directory holds stack.yml (laconic layout: <repo>/stack-orchestrator/stacks/<name>/stack.yml) or a compose.yaml",
                    at: location)
            }
            let real = fs.realpath(stackDir)
            return try load(stackDir: real, builtIn: false, diagnostics: diagnostics)
        }
        try NameRules.checkComponent(trimmed, what: "stack name", at: location)
        guard let root = builtInRoot else {
            throw noBuiltInStacks(detail: "looking for stack '\(trimmed)'", at: location)
        }
        let stackDir = Path.join(root, "stacks", trimmed)
        guard fs.isFile(Path.join(stackDir, "stack.yml")) else {
            let names = (try? builtInStackNames()) ?? []
            var hint =
                "built-in stacks: \(names.joined(separator: ", ")); for a stack on disk pass a path such as ./\(trimmed)"
            if let close = Suggest.closest(to: trimmed, in: names) { hint = "did you mean '\(close)'? " + hint }
            throw SoError("unknown stack '\(trimmed)'", hint: hint, at: location)
        }
        return try load(stackDir: stackDir, builtIn: true, diagnostics: diagnostics)
    }

    /// The file names docker compose looks for in a directory, in its order.
    public static let composeNames = ["compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml"]

    /// A plain compose file as a one-pod stack named after its directory; its relative paths resolve
    /// from its directory, as docker compose does.
    func plainCompose(_ files: [String], diagnostics: DiagnosticSink, at location: SourceLocation?) throws
        -> ResolvedStack
    {
        let file = files[0]
        let dir = Path.dirname(file)
        var name = KubeNameish.label(Path.basename(dir))
        if name.isEmpty { name = "compose" }
        let text = StackFile.forComposeFile(name: name)
        var stackFile = StackFile(
            path: file, repos: [], containers: [], pods: [StackFile.Pod(name: name)], jobs: [], npms: [],
            hasConfigOrchestration: false)
        stackFile.podPerService = true
        var r = ResolvedStack(
            name: name, stackDir: dir, stackFilePath: file, root: dir, isBuiltIn: false, file: stackFile,
            pods: [.init(name: name, composePath: file)], jobs: [])
        r.composeFile = file
        r.composeFiles = files
        r.stackFileText = text
        return r
    }

    func load(stackDir: String, builtIn: Bool, diagnostics: DiagnosticSink) throws -> ResolvedStack {
        let stackFilePath = Path.join(stackDir, "stack.yml")
        let file = try StackFile.load(stackFilePath, fs: fs, diagnostics: diagnostics)
        let root = Path.normalize(Path.join(stackDir, "..", ".."))
        var pods: [ResolvedStack.Component] = []
        for pod in file.pods {
            let compose: String
            if let repo = pod.repository {
                let last =
                    repo.split(separator: "@").first.map(String.init)?.split(separator: "/").last.map(String.init)
                    ?? repo
                compose = Path.normalize(Path.join(repoBaseDir, last, pod.path ?? "", "docker-compose.yml"))
            } else {
                compose = Path.join(root, "compose", "docker-compose-\(pod.name).yml")
            }
            guard fs.isFile(compose) else {
                let hint =
                    pod.repository.map { "run 'so --stack \(stackDir) setup-repositories' to clone \($0)" }
                    ?? "add \(Path.relative(compose, to: root) ?? compose) to the stack or remove the pod from stack.yml"
                throw SoError(
                    "compose file for pod '\(pod.name)' not found: \(compose)", hint: hint,
                    at: SourceLocation(file: stackFilePath, line: pod.line))
            }
            pods.append(
                .init(
                    name: pod.name, composePath: compose, preStartCommand: pod.preStartCommand,
                    postStartCommand: pod.postStartCommand))
        }
        // An optional pod's or a job's compose file, which must exist.
        func component(_ name: String, in folder: String, what: String, removal: String) throws
            -> ResolvedStack.Component
        {
            let compose = Path.join(root, folder, "docker-compose-\(name).yml")
            guard fs.isFile(compose) else {
                throw SoError(
                    "compose file for \(what) '\(name)' not found: \(compose)",
                    hint: "add \(Path.relative(compose, to: root) ?? compose) to the stack or remove \(removal)",
                    at: SourceLocation(file: stackFilePath))
            }
            return .init(name: name, composePath: compose)
        }
        let optional = try file.optionalPods.map {
            try component($0, in: "compose", what: "optional pod", removal: "it from optional-pods")
        }
        let jobs = try file.jobs.map {
            try component($0, in: "compose-jobs", what: "job", removal: "the job from stack.yml")
        }
        if file.hasConfigOrchestration {
            diagnostics.warn(
                "stack.yml 'config:' (container-to-container value passing) is not supported on Kubernetes and is ignored",
                hint: "pass values through spec config instead", at: SourceLocation(file: stackFilePath))
        }
        let plugin = Path.join(stackDir, "deploy", "commands.py")
        if fs.isFile(plugin) {
            diagnostics.warn(
                "stack plugin deploy/commands.py is not run by so",
                hint: "put its init() defaults under 'spec-defaults:' in stack.yml", at: SourceLocation(file: plugin))
        }
        return ResolvedStack(
            name: Path.basename(stackDir), stackDir: stackDir, stackFilePath: stackFilePath, root: root,
            isBuiltIn: builtIn, file: file, pods: pods, optionalPods: optional, jobs: jobs)
    }

    /// Finds the built-in root (see `lookUpBuiltInRoot`).
    public static func findBuiltInRoot(
        explicit: String?, environment: [String: String], executable: String, fs: FileSystem
    ) -> String? {
        lookUpBuiltInRoot(explicit: explicit, environment: environment, executable: executable, fs: fs).root
    }

    /// Finds the built-in root: `--root`, `SO_ROOT`, then `<prefix>/share/so` for an installed `<prefix>/bin/so`
    /// (`make install`), then a checkout (a directory holding stacks/ and compose/) at or above the executable,
    /// the executable's symlinks resolved first. Says where it looked when it finds nothing.
    public static func lookUpBuiltInRoot(
        explicit: String?, environment: [String: String], executable: String, fs: FileSystem
    ) -> BuiltInRootLookup {
        if let explicit, !explicit.isEmpty {
            let root = Path.absolute(explicit, relativeTo: fs.currentDirectory)
            return BuiltInRootLookup(root: root, searched: ["\(root) (--root)"])
        }
        if let env = environment["SO_ROOT"], !env.isEmpty {
            let root = Path.absolute(env, relativeTo: fs.currentDirectory)
            return BuiltInRootLookup(root: root, searched: ["\(root) (SO_ROOT)"])
        }
        let binDir = Path.dirname(fs.realpath(Path.absolute(executable, relativeTo: fs.currentDirectory)))
        let share = Path.join(Path.dirname(binDir), "share", "so")
        if fs.isDirectory(Path.join(share, "stacks")) { return BuiltInRootLookup(root: share, searched: [share]) }
        var dir = binDir
        for _ in 0..<6 {
            if fs.isDirectory(Path.join(dir, "stacks")) && fs.isDirectory(Path.join(dir, "compose")) {
                return BuiltInRootLookup(root: dir, searched: [share, dir])
            }
            if dir == "/" { break }
            dir = Path.dirname(dir)
        }
        return BuiltInRootLookup(root: nil, searched: [share, "a checkout at or above \(binDir)"])
    }
}
