import Foundation
import SoBasics

/// Kubeconfig files as kubectl reads them: `--kubeconfig`, else `$KUBECONFIG` (several files merged,
/// the first file to name an entry wins), else `~/.kube/config`; the in-cluster service account when
/// none exists and the process runs in a pod. Every field kubectl honours is honoured, or refused by name.
public enum Kubeconfig {
    struct Named {
        var name: String
        var fields: MapReader
        var file: String
        var index: Int
    }

    public static let inClusterDirectory = "/var/run/secrets/kubernetes.io/serviceaccount"

    /// Where the pod's service account is mounted: `SO_SERVICEACCOUNT_DIR` (tests), else Kubernetes' path.
    public static func serviceAccountDirectory(environment: [String: String]) -> String {
        if let d = environment["SO_SERVICEACCOUNT_DIR"], !d.isEmpty { return d }
        return inClusterDirectory
    }

    /// Inside a pod with a service account token, as client-go tells (`KUBERNETES_SERVICE_HOST` and `_PORT`, the token file).
    public static func inClusterPossible(environment: [String: String], fs: FileSystem) -> Bool {
        guard environment["KUBERNETES_SERVICE_HOST"]?.isEmpty == false,
            environment["KUBERNETES_SERVICE_PORT"]?.isEmpty == false
        else { return false }
        return fs.isFile(Path.join(serviceAccountDirectory(environment: environment), "token"))
    }

    /// Resolves a context to a connection.
    /// - Parameters:
    ///   - explicit: `--kubeconfig` (one file).
    ///   - context: `--context`, else the merged `current-context`.
    public static func resolve(
        explicit: String?, context: String?, environment: [String: String], fs: FileSystem,
        diagnostics: DiagnosticSink
    ) throws -> ClusterConnection {
        var files: [String] = []
        if let explicit {
            let p = Path.absolute(Path.expandTilde(explicit, home: fs.homeDirectory), relativeTo: fs.currentDirectory)
            guard fs.isFile(p) else {
                throw SoError("kubeconfig not found: \(p)", hint: "pass an existing file to --kubeconfig")
            }
            files = [p]
        } else {
            files = userFiles(environment: environment, fs: fs)
        }
        if files.isEmpty {
            if context == nil, inClusterPossible(environment: environment, fs: fs) {
                return try inCluster(environment: environment, fs: fs)
            }
            throw SoError(
                "no kubeconfig found (looked at --kubeconfig, $KUBECONFIG and ~/.kube/config)",
                hint: "create a kind cluster, or point --kubeconfig / KUBECONFIG at a cluster's kubeconfig")
        }
        let documents = try files.compactMap { f in try YAMLFile.load(f, fs: fs, what: "kubeconfig").map { ($0, f) } }
        return try resolve(
            documents: documents, context: context, fs: fs, sources: files.joined(separator: ", "),
            diagnostics: diagnostics)
    }

    /// Whether the user's kubeconfig files name a context. `kind delete cluster` leaves `~/.kube/config` naming
    /// none, which is as good as no kubeconfig; a file that cannot be read counts, so that its error is shown.
    public static func userFilesNameAContext(environment: [String: String], fs: FileSystem) -> Bool {
        userFiles(environment: environment, fs: fs).contains { f in
            let root: YNode?
            do { root = try YAMLFile.load(f, fs: fs, what: "kubeconfig") } catch { return true }
            guard let root else { return false }
            guard let m = try? root.mapping("kubeconfig") else { return true }
            let current = (try? m.string("current-context")) ?? nil
            let contexts = (try? m.nonNull("contexts")?.sequence("'contexts'")) ?? nil
            return current?.isEmpty == false || contexts?.isEmpty == false
        }
    }

    /// `$KUBECONFIG`'s existing files (duplicates once), else `~/.kube/config` when it exists.
    public static func userFiles(environment: [String: String], fs: FileSystem) -> [String] {
        if let env = environment["KUBECONFIG"], !env.isEmpty {
            var seen: Set<String> = []
            return env.split(separator: ":").map {
                Path.absolute(Path.expandTilde(String($0), home: fs.homeDirectory), relativeTo: fs.currentDirectory)
            }
            .filter { fs.isFile($0) && seen.insert($0).inserted }
        }
        let home = Path.join(fs.homeDirectory, ".kube", "config")
        return fs.isFile(home) ? [home] : []
    }

    /// A context of the user's kubeconfig (`$KUBECONFIG`, else `~/.kube/config`), or nil when there is
    /// no such file or context — never the in-cluster account. kind writes `kind-<cluster>` there.
    public static func userContext(
        _ context: String, environment: [String: String], fs: FileSystem,
        diagnostics: DiagnosticSink = DiagnosticSink()
    ) -> ClusterConnection? {
        let files = userFiles(environment: environment, fs: fs)
        guard !files.isEmpty,
            let documents = try? files.compactMap({ f in
                try YAMLFile.load(f, fs: fs, what: "kubeconfig").map { ($0, f) }
            })
        else {
            return nil
        }
        return try? resolve(
            documents: documents, context: context, fs: fs, sources: files.joined(separator: ", "),
            diagnostics: diagnostics)
    }

    /// Resolves a kubeconfig given as text (e.g. `kind get kubeconfig`), never written to disk.
    public static func resolve(
        text: String, label: String, context: String?, fs: FileSystem,
        diagnostics: DiagnosticSink = DiagnosticSink()
    ) throws -> ClusterConnection {
        guard let root = try YAMLFile.parse(text, file: label) else {
            throw SoError("\(label) is empty", hint: "check the cluster exists")
        }
        return try resolve(
            documents: [(root, label)], context: context, fs: fs, sources: label, diagnostics: diagnostics)
    }

    static func resolve(
        documents: [(YNode, String)], context: String?, fs: FileSystem, sources: String,
        diagnostics: DiagnosticSink
    ) throws -> ClusterConnection {
        var clusters: [Named] = []
        var users: [Named] = []
        var contexts: [Named] = []
        var current: String?
        for (root, file) in documents {
            let m = try root.mapping("kubeconfig")
            if current == nil, let c = try m.string("current-context"), !c.isEmpty { current = c }
            func collect(_ key: String, _ inner: String, into list: inout [Named]) throws {
                for (i, item) in try (m.nonNull(key)?.sequence("'\(key)'") ?? []).enumerated() {
                    let im = try item.mapping("\(key)[\(i)]")
                    let name = try im.required("name").string("'name'")
                    guard !list.contains(where: { $0.name == name }) else { continue }
                    let fields = try (im.nonNull(inner) ?? YNode.emptyMapping(file: file)).mapping(
                        "\(key)[\(i)].\(inner)")
                    list.append(Named(name: name, fields: fields, file: file, index: i))
                }
            }
            try collect("clusters", "cluster", into: &clusters)
            try collect("users", "user", into: &users)
            try collect("contexts", "context", into: &contexts)
        }
        guard let contextName = context ?? current else {
            throw SoError(
                "kubeconfig \(sources) has no current-context",
                hint: "pass --context NAME (kubectl config get-contexts lists them)")
        }
        guard let ctx = contexts.first(where: { $0.name == contextName }) else {
            let names = contexts.map(\.name)
            let suggestion = Suggest.closest(to: contextName, in: names).map { "did you mean '\($0)'? " } ?? ""
            throw SoError(
                "context '\(contextName)' not found in \(sources)",
                hint: suggestion + "contexts: \(names.joined(separator: ", "))")
        }
        let clusterName = try ctx.fields.required("cluster").string("'cluster'")
        guard let cluster = clusters.first(where: { $0.name == clusterName }) else {
            throw SoError(
                "cluster '\(clusterName)' of context '\(contextName)' not found",
                hint: "check the kubeconfig's clusters: list")
        }
        var conn = ClusterConnection(
            contextName: contextName, server: try cluster.fields.required("server").string("'server'"))
        conn.namespace = try ctx.fields.string("namespace")
        try readCluster(cluster, into: &conn, fs: fs, diagnostics: diagnostics)
        if let userName = try ctx.fields.string("user") {
            guard let user = users.first(where: { $0.name == userName }) else {
                throw SoError(
                    "user '\(userName)' of context '\(contextName)' not found",
                    hint: "check the kubeconfig's users: list")
            }
            conn.userName = userName
            conn.source = user.file
            try readUser(user, cluster: cluster, into: &conn, fs: fs)
        }
        return conn
    }

    /// A cluster entry: server, CA (data or file), `insecure-skip-tls-verify` (warned about), `tls-server-name`,
    /// `proxy-url`. `disable-compression` and `extensions` need nothing (so never asks for compressed answers).
    static func readCluster(
        _ cluster: Named, into conn: inout ClusterConnection, fs: FileSystem, diagnostics: DiagnosticSink
    ) throws {
        let f = cluster.fields
        let at = SourceLocation(file: cluster.file)
        conn.insecureSkipTLSVerify = try f.bool("insecure-skip-tls-verify") ?? false
        conn.tlsServerName = try f.string("tls-server-name").flatMap { $0.isEmpty ? nil : $0 }
        conn.caPEM = try dataOrFile(
            f, data: "certificate-authority-data", file: "certificate-authority", base: cluster.file, fs: fs)
        if conn.insecureSkipTLSVerify {
            if conn.caPEM != nil {
                throw SoError(
                    "cluster '\(cluster.name)' sets both insecure-skip-tls-verify and a certificate authority, which kubectl refuses",
                    hint: "remove insecure-skip-tls-verify (or the certificate-authority entry)", at: at)
            }
            diagnostics.warn(
                "cluster '\(cluster.name)' skips TLS verification (insecure-skip-tls-verify): the API server \(conn.server) is not authenticated",
                hint: "set certificate-authority-data to the cluster's CA instead", at: at)
        }
        if let proxy = try f.string("proxy-url"), !proxy.isEmpty {
            _ = try ProxySettings.parse(proxy, source: "proxy-url of cluster '\(cluster.name)'", strictScheme: true)
            conn.proxyURL = proxy
        }
        f.accept(["server", "disable-compression", "extensions"])
    }

    /// A user entry: client certificate, token or token file, basic auth, impersonation, an exec plugin;
    /// an auth-provider is refused naming the exec plugin that replaces it.
    static func readUser(_ user: Named, cluster: Named, into conn: inout ClusterConnection, fs: FileSystem) throws {
        let f = user.fields
        let name = user.name
        let at = SourceLocation(file: user.file)
        if let provider = f.nonNull("auth-provider") {
            let providerName = try provider.mapping("auth-provider").string("name") ?? ""
            throw authProviderError(user: name, provider: providerName, at: at)
        }
        conn.clientCertificatePEM = try dataOrFile(
            f, data: "client-certificate-data", file: "client-certificate", base: user.file, fs: fs)
        conn.clientKeyPEM = try dataOrFile(f, data: "client-key-data", file: "client-key", base: user.file, fs: fs)
        if (conn.clientCertificatePEM == nil) != (conn.clientKeyPEM == nil) {
            throw SoError(
                "user '\(name)' has a client certificate without a key (or a key without a certificate)",
                hint: "give both client-certificate and client-key", at: at)
        }
        conn.token = try f.string("token").flatMap { $0.isEmpty ? nil : $0 }
        if let tf = try f.string("tokenFile"), !tf.isEmpty {
            conn.tokenFile = Path.absolute(
                Path.expandTilde(tf, home: fs.homeDirectory), relativeTo: Path.dirname(user.file))
        }
        let username = try f.string("username") ?? ""
        let password = try f.string("password") ?? ""
        if !username.isEmpty || !password.isEmpty {
            guard conn.token == nil && conn.tokenFile == nil else {
                throw SoError(
                    "user '\(name)' has both a token and a username/password, which kubectl refuses (one authentication method only)",
                    hint: "remove token/tokenFile or username/password", at: at)
            }
            conn.basicAuth = BasicAuth(username: username, password: password)
        }
        conn.impersonation = try impersonation(f, user: name, at: at)
        if let e = f.nonNull("exec") {
            let plugin = try execPlugin(e, user: user, cluster: cluster, fs: fs)
            // client-go runs the plugin only when the user has no token, basic auth or certificate of its own.
            let hasOwn =
                conn.token != nil || conn.tokenFile != nil || conn.basicAuth != nil || conn.clientCertificatePEM != nil
            conn.exec = hasOwn ? nil : plugin
        }
        f.accept(["extensions"])
    }

    static func impersonation(_ f: MapReader, user: String, at: SourceLocation) throws -> Impersonation? {
        let name = try f.string("as") ?? ""
        let uid = try f.string("as-uid").flatMap { $0.isEmpty ? nil : $0 }
        let groups = try f.nonNull("as-groups")?.stringList("'as-groups'") ?? []
        var extra: [String: [String]] = [:]
        for e in try f.nonNull("as-user-extra")?.entries("'as-user-extra'") ?? [] {
            extra[e.key] = try e.value.stringList("'as-user-extra.\(e.key)'", allowSingle: false)
        }
        guard !name.isEmpty else {
            if uid != nil || !groups.isEmpty || !extra.isEmpty {
                throw SoError(
                    "user '\(user)' sets as-uid, as-groups or as-user-extra without 'as', which kubectl refuses",
                    hint: "add 'as: USER' (whom to impersonate) or remove them", at: at)
            }
            return nil
        }
        return Impersonation(user: name, uid: uid, groups: groups, extra: extra)
    }

    public static let execAPIVersions = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]

    /// `users[].user.exec` as client-go reads it: a relative `command` with a slash is relative to the
    /// kubeconfig's directory; `interactiveMode` defaults to IfAvailable for v1beta1 and is required by v1.
    static func execPlugin(_ node: YNode, user: Named, cluster: Named, fs: FileSystem) throws -> ExecPlugin {
        let what = "users[\(user.index)].user.exec (user '\(user.name)')"
        let e = try node.mapping(what)
        let apiVersion = try e.string("apiVersion") ?? ""
        guard execAPIVersions.contains(apiVersion) else {
            throw node.error(
                "\(what) has apiVersion '\(apiVersion)', which kubectl no longer runs",
                hint: "use apiVersion: client.authentication.k8s.io/v1 (or v1beta1) with a plugin that speaks it")
        }
        var command = try e.string("command") ?? ""
        guard !command.isEmpty else {
            throw node.error("\(what) has no command", hint: "set exec.command to the credential plugin to run")
        }
        if command.contains("/"), !command.hasPrefix("/") {
            command = Path.absolute(
                Path.expandTilde(command, home: fs.homeDirectory), relativeTo: Path.dirname(user.file))
        }
        let args = try e.nonNull("args")?.stringList("'args'") ?? []
        var env: [ExecPlugin.EnvVar] = []
        for (i, item) in try (e.nonNull("env")?.sequence("'env'") ?? []).enumerated() {
            let m = try item.mapping("env[\(i)]")
            let n = try m.string("name") ?? ""
            guard !n.isEmpty else {
                throw item.error("\(what): env[\(i)] has no name", hint: "each env entry needs name: and value:")
            }
            env.append(ExecPlugin.EnvVar(name: n, value: try m.string("value") ?? ""))
        }
        let mode: ExecPlugin.InteractiveMode
        switch try e.string("interactiveMode") {
        case nil where apiVersion.hasSuffix("/v1beta1"): mode = .ifAvailable
        case nil:
            throw node.error(
                "\(what) has no interactiveMode, which apiVersion v1 requires",
                hint: "set interactiveMode: Never, IfAvailable or Always")
        case let m?:
            guard let v = ExecPlugin.InteractiveMode(rawValue: m) else {
                throw node.error("\(what) has interactiveMode '\(m)'", hint: "use Never, IfAvailable or Always")
            }
            mode = v
        }
        var config: YValue?
        for (i, ext) in try (cluster.fields.nonNull("extensions")?.sequence("'extensions'") ?? []).enumerated() {
            let m = try ext.mapping("extensions[\(i)]")
            if try m.string("name") == "client.authentication.k8s.io/exec", let v = m.nonNull("extension") {
                config = try yvalue(v)
            }
        }
        return ExecPlugin(
            apiVersion: apiVersion, command: command, args: args, env: env, installHint: try e.string("installHint"),
            provideClusterInfo: try e.bool("provideClusterInfo") ?? false, interactiveMode: mode,
            clusterConfig: config.map { String(decoding: $0.compactJSON(), as: UTF8.self) })
    }

    /// A YAML value as JSON would carry it (kubeconfigs are read as JSON by kubectl: plain true/false are
    /// booleans, plain whole numbers are numbers).
    static func yvalue(_ n: YNode) throws -> YValue {
        if n.isNull { return .null }
        if n.isMapping { return .map(try n.entries("extension").map { ($0.key, try yvalue($0.value)) }) }
        if n.isSequence { return .list(try n.sequence("extension").map(yvalue)) }
        let s = try n.string("extension")
        if !n.isQuoted {
            if s == "true" || s == "false" { return .bool(s == "true") }
            if let i = Int(s) { return .int(i) }
        }
        return .string(s)
    }

    /// The exec plugin that replaced each auth-provider kubectl dropped.
    static func authProviderError(user: String, provider: String, at: SourceLocation) -> SoError {
        switch provider {
        case "gcp":
            return SoError(
                "user '\(user)' uses the gcp auth-provider, which kubectl removed; its replacement is the gke-gcloud-auth-plugin exec plugin",
                hint:
                    "install gke-gcloud-auth-plugin (gcloud components install gke-gcloud-auth-plugin), then rewrite the kubeconfig with "
                    + "'gcloud container clusters get-credentials CLUSTER'", at: at)
        case "azure":
            return SoError(
                "user '\(user)' uses the azure auth-provider, which kubectl removed; its replacement is the kubelogin exec plugin",
                hint: "install kubelogin (Azure/kubelogin), then run 'kubelogin convert-kubeconfig'", at: at)
        case "oidc":
            return SoError(
                "user '\(user)' uses the oidc auth-provider, which so does not run; use kubelogin's oidc-login exec plugin instead",
                hint:
                    "install kubelogin (int128/kubelogin) and set the user's exec: to command: kubectl, args: [oidc-login, get-token, "
                    + "--oidc-issuer-url=ISSUER, --oidc-client-id=ID]", at: at)
        default:
            return SoError(
                "user '\(user)' uses the '\(provider)' auth-provider, which so does not run",
                hint: "use an exec credential plugin, a client certificate or a token for this user", at: at)
        }
    }

    /// The pod's own service account, as client-go's in-cluster configuration reads it: the token is a
    /// file re-read on every request (bound tokens rotate); the namespace is `POD_NAMESPACE`, else the
    /// mounted one, else `default`.
    public static func inCluster(environment: [String: String], fs: FileSystem) throws -> ClusterConnection {
        let dir = serviceAccountDirectory(environment: environment)
        let host = environment["KUBERNETES_SERVICE_HOST"] ?? ""
        let port = environment["KUBERNETES_SERVICE_PORT"] ?? "443"
        let server = host.contains(":") ? "https://[\(host)]:\(port)" : "https://\(host):\(port)"
        var ns = environment["POD_NAMESPACE"].flatMap { $0.isEmpty ? nil : $0 }
        if ns == nil { ns = (try? fs.readText(Path.join(dir, "namespace")))?.trimmedWhitespace }
        let ca = Path.join(dir, "ca.crt")
        return ClusterConnection(
            contextName: "in-cluster", server: server, caPEM: fs.isFile(ca) ? try fs.readData(ca) : nil,
            tokenFile: Path.join(dir, "token"), namespace: ns?.isEmpty == false ? ns : "default", inCluster: true,
            source: dir)
    }

    static func dataOrFile(_ m: MapReader, data: String, file: String, base: String, fs: FileSystem) throws -> Data? {
        if let d = m.nonNull(data) {
            let text = try d.string("'\(data)'").filter { !$0.isWhitespace }
            guard let decoded = Data(base64Encoded: text) else {
                throw d.error("'\(data)' is not base64", hint: "kubeconfig *-data fields hold base64-encoded PEM")
            }
            if !decoded.isEmpty { return decoded }
        }
        if let f = try m.string(file), !f.isEmpty {
            let p = Path.absolute(Path.expandTilde(f, home: fs.homeDirectory), relativeTo: Path.dirname(base))
            guard fs.isFile(p) else {
                throw SoError(
                    "\(file) not found: \(p)", hint: "fix the path in the kubeconfig", at: SourceLocation(file: base))
            }
            return try fs.readData(p)
        }
        return nil
    }
}
