import Foundation
import SoBasics
import SoCompose

public enum DeploymentLoader {
    /// Reads a deployment directory into a model. `displayDirectory` replaces the directory's path in
    /// the model (goldens render the same bytes wherever the test runs).
    public static func load(_ dir: String, fs: FileSystem, diagnostics: DiagnosticSink, displayDirectory: String? = nil)
        throws -> DeploymentModel
    {
        guard fs.isDirectory(dir) else {
            throw SoError(
                "deployment directory not found: \(dir)",
                hint: "create one with 'so deploy create --spec-file SPEC --deployment-dir \(dir)'")
        }
        let deploymentFile = Path.join(dir, "deployment.yml")
        guard fs.isFile(deploymentFile) else {
            throw SoError(
                "\(dir) is not a deployment directory (no deployment.yml)",
                hint: "point --dir at a directory made by 'so deploy create'")
        }
        let loading = Loading(dir: dir, fs: fs, diagnostics: diagnostics)
        let identity = try DeploymentFile.load(deploymentFile, fs: fs, diagnostics: diagnostics)
        let stack = try StackFile.load(Path.join(dir, "stack.yml"), fs: fs, diagnostics: diagnostics)
        // The workspace's agent (workspace.agent) brings its task, API key variables and API hosts.
        let spec = try AgentTable.resolve(
            try Spec.load(Path.join(dir, "spec.yml"), fs: fs, diagnostics: diagnostics), stack: stack.agents)
        let (config, secretKeys, credentials) = try loading.configuration(spec)
        var env: [String: String] = [:]
        for e in config { env[e.key] = e.value }
        for k in secretKeys { env[k] = SecretMarker.marker(k) }

        var skipped: [(String, ComposeService)] = []
        // Compose profiles: a service with profiles runs only when one of them is selected in the spec.
        func selectProfiles(_ c: ComposeComponent) -> ComposeComponent {
            let selected = c.selecting(profiles: spec.profiles)
            skipped += selected.skipped.map { (c.relativePath, $0) }
            return selected.component
        }
        var pods = try stack.selectedPods(with: spec.with, at: SourceLocation(file: spec.path)).map {
            selectProfiles(try loading.component($0, folder: "compose", environment: env, stack: stack))
        }
        var jobs = try stack.jobs.map {
            try loading.component($0, folder: "compose-jobs", environment: env, stack: stack)
        }
        // The spec's network.ports replace the listed services' ports (laconic-so rewrites the compose copies).
        var components = pods + jobs
        try SpecPorts.apply(
            spec, to: &components, environment: env, otherServices: skipped.map(\.1.name), diagnostics: diagnostics)
        pods = Array(components.prefix(pods.count))
        jobs = Array(components.dropFirst(pods.count))

        let (files, bindDirectories) = try loading.files(pods + jobs, spec: spec)
        let cas = try loading.caCertificates(spec)
        // A plain compose file's stack is named after its directory (stack.yml's name:, made by so).
        let stackName =
            stack.podPerService
            ? (stack.name ?? Path.basename(Path.dirname(spec.stack)))
            : StackLocator.looksLikePath(spec.stack) ? Path.basename(spec.stack) : spec.stack
        var model = DeploymentModel(
            directory: displayDirectory ?? dir, identity: identity, stackName: stackName, spec: spec, config: config,
            secretKeys: secretKeys, pods: pods, jobs: jobs, files: files, caCertificates: cas)
        model.podPerService = stack.podPerService
        model.skippedServices = skipped
        model.credentialsFiles = credentials
        model.bindDirectories = bindDirectories
        if !stack.podPerService {
            model.repoBinds = loading.repoBinds(
                pods + jobs, root: identity.repoBaseDir ?? Path.join(fs.homeDirectory, "cerc"))
        }
        for v in spec.volumes {
            guard let p = v.path else { continue }
            let abs =
                p.hasPrefix("/") || p.hasPrefix("~")
                ? Path.normalize(Path.expandTilde(p, home: fs.homeDirectory)) : Path.absolute(p, relativeTo: dir)
            model.hostPathKinds[v.name] = HostPathKind.of(abs, fs: fs)
        }
        return model
    }

    /// The reads of one deployment directory.
    struct Loading {
        let dir: String
        let fs: FileSystem
        let diagnostics: DiagnosticSink

        /// config.env's entries (without the credentials files' keys), the Secret's keys and the credentials files.
        func configuration(_ spec: Spec) throws
            -> (config: [(key: String, value: String)], secretKeys: [String], credentials: [CredentialsFile])
        {
            var config = try ConfigEnv.load(Path.join(dir, "config.env"), fs: fs)
            var secretKeys = spec.generatedKeys
            for k in spec.secretEnv where !secretKeys.contains(k) { secretKeys.append(k) }
            // Credentials come after config (laconic-so appends them to config.env), so their keys win.
            let credentials = try ConfigEnv.loadCredentialsFiles(Path.join(dir, "config.env"), fs: fs)
            let credentialKeys = Set(credentials.flatMap(\.keys))
            if !credentialKeys.isEmpty {
                config.removeAll { credentialKeys.contains($0.key) }
                for k in credentials.flatMap(\.keys) where !secretKeys.contains(k) { secretKeys.append(k) }
            }
            return (config, secretKeys, credentials)
        }

        /// One compose file of the deployment, interpolated with `environment`.
        func component(_ name: String, folder: String, environment env: [String: String], stack: StackFile) throws
            -> ComposeComponent
        {
            let rel = "\(folder)/docker-compose-\(name).yml"
            let path = Path.join(dir, rel)
            guard fs.isFile(path) else {
                throw SoError(
                    "compose file for '\(name)' not found: \(path)",
                    hint: "run 'so deploy create --update' to restore the deployment's compose files")
            }
            var compose = try ComposeLoader.load(
                path, fs: fs, environment: env, diagnostics: diagnostics, warnUnset: stack.podPerService)
            // Plain compose: env_file variables reach the container, under what environment: sets (compose's
            // precedence). laconic stacks keep laconic-so's behaviour (env files are not read).
            if stack.podPerService {
                for i in compose.services.indices where !compose.services[i].envFiles.isEmpty {
                    let fromFiles = try envFileEntries(compose.services[i], of: compose, path: path)
                    let explicit = Set(compose.services[i].environment.map(\.key))
                    compose.services[i].environment =
                        fromFiles.filter { !explicit.contains($0.key) } + compose.services[i].environment
                }
            }
            return ComposeComponent(name: name, compose: compose, relativePath: rel)
        }

        /// The variables of a service's env files, in order (a later file's value wins); a missing optional file is skipped.
        func envFileEntries(_ svc: ComposeService, of compose: ComposeFile, path: String) throws -> [EnvEntry] {
            var fromFiles: [EnvEntry] = []
            for f in svc.envFiles {
                let p = Path.absolute(f.path, relativeTo: compose.directory)
                guard fs.isFile(p) else {
                    if f.required {
                        throw SoError(
                            "env_file \(f.path) of service '\(svc.name)' not found: \(p)",
                            hint: "run 'so deploy create --update', or mark it required: false",
                            at: SourceLocation(file: path, line: svc.line))
                    }
                    continue
                }
                for e in try DotEnv.parse(try fs.readText(p, what: "env file"), file: p) {
                    fromFiles.removeAll { $0.key == e.key }
                    fromFiles.append(EnvEntry(key: e.key, value: e.value))
                }
            }
            return fromFiles
        }

        /// The files binds, compose configs and spec configmaps refer to, by path relative to the deployment
        /// directory; and the relative binds deploy create made `data/<volume>` for.
        func files(_ components: [ComposeComponent], spec: Spec) throws -> (
            files: [String: Data], bindDirectories: [String: String]
        ) {
            var files: [String: Data] = [:]
            var bindDirectories: [String: String] = [:]
            var collected: Set<String> = []
            func collect(_ rel: String) throws {
                guard collected.insert(rel).inserted else { return }
                try read(rel, into: &files)
            }
            for c in components {
                let folder = Path.dirname(c.relativePath)
                for svc in c.compose.services {
                    for m in svc.volumes where m.kind == .bind {
                        guard let src = m.source, !src.hasPrefix("/"), !src.hasPrefix("~") else { continue }
                        let rel = Path.normalize(Path.join(folder, src))
                        guard !rel.hasPrefix("..") else { continue }
                        guard fs.exists(Path.join(dir, rel)) else {
                            // Not in the stack when the deployment was created: deploy create made data/<volume> for it.
                            if fs.isDirectory(Path.join(dir, BindDirectory.path(for: src))) {
                                bindDirectories[rel] = BindDirectory.volume(for: src)
                                continue
                            }
                            throw SoError(
                                "\(Path.join(dir, rel)) not found (mounted as '\(src)')",
                                hint: "run 'so deploy create --update' to restore it",
                                at: SourceLocation(file: c.compose.path, line: m.line ?? svc.line))
                        }
                        try collect(rel)
                    }
                }
            }
            for c in components {
                // Compose configs from files (ConfigMaps); compose secrets are read at start, never here.
                let folder = Path.dirname(c.relativePath)
                for cfg in c.compose.configs where !cfg.external {
                    if let file = cfg.file { try collect(Path.normalize(Path.join(folder, file))) }
                }
            }
            for cm in spec.configmaps { try collect("configmaps/\(cm.name)") }
            return (files, bindDirectories)
        }

        /// A file, or every file under a directory (links must stay inside the deployment directory).
        func read(_ rel: String, into files: inout [String: Data]) throws {
            let abs = Path.join(dir, rel)
            if fs.isDirectory(abs) {
                for f in try fs.walk(abs) where f.kind == .file || f.kind == .symlink {
                    let p = Path.join(abs, f.relative)
                    guard Path.isWithin(fs.realpath(p), fs.realpath(dir)) else {
                        throw SoError(
                            "\(p) points outside the deployment directory",
                            hint: "replace the link with a copy of the file")
                    }
                    files[Path.join(rel, f.relative)] = try fs.readData(p)
                }
            } else if fs.isFile(abs) {
                files[rel] = try fs.readData(abs)
            }
        }

        /// The PEM contents of the spec's ca-certificates, in order.
        func caCertificates(_ spec: Spec) throws -> [Data] {
            var cas: [Data] = []
            for ca in spec.sections.caCertificates {
                let p = Path.absolute(Path.expandTilde(ca, home: fs.homeDirectory), relativeTo: dir)
                guard fs.isFile(p) else {
                    throw SoError(
                        "ca-certificates file not found: \(p)", hint: "fix the path in the spec",
                        at: SourceLocation(file: spec.path))
                }
                cas.append(try fs.readData(p))
            }
            return cas
        }

        /// Absolute binds under the stack's repositories (`root`), by source as written (laconic stacks).
        func repoBinds(_ components: [ComposeComponent], root: String) -> [String: RepoBind] {
            var out: [String: RepoBind] = [:]
            for c in components {
                for svc in c.compose.services {
                    for m in svc.volumes where m.kind == .bind {
                        guard let src = m.source, let abs = RepoBind.path(of: src, root: root, home: fs.homeDirectory)
                        else { continue }
                        out[src] = RepoBind(path: abs, kind: HostPathKind.of(abs, fs: fs))
                    }
                }
            }
            return out
        }
    }
}
