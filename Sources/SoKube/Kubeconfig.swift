import Foundation
import SoBasics

/// How to reach one API server: what a kubeconfig context resolves to.
public struct ClusterConnection: Sendable, Equatable {
    public var contextName: String
    public var server: String
    public var caPEM: Data?
    public var insecureSkipTLSVerify: Bool
    public var tlsServerName: String?
    public var clientCertificatePEM: Data?
    public var clientKeyPEM: Data?
    public var token: String?
    /// Re-read on every request (projected service-account tokens rotate).
    public var tokenFile: String?
    public var namespace: String?

    public init(contextName: String, server: String, caPEM: Data? = nil, insecureSkipTLSVerify: Bool = false, tlsServerName: String? = nil,
                clientCertificatePEM: Data? = nil, clientKeyPEM: Data? = nil, token: String? = nil, tokenFile: String? = nil, namespace: String? = nil) {
        self.contextName = contextName
        self.server = server
        self.caPEM = caPEM
        self.insecureSkipTLSVerify = insecureSkipTLSVerify
        self.tlsServerName = tlsServerName
        self.clientCertificatePEM = clientCertificatePEM
        self.clientKeyPEM = clientKeyPEM
        self.token = token
        self.tokenFile = tokenFile
        self.namespace = namespace
    }

    public static func == (a: ClusterConnection, b: ClusterConnection) -> Bool {
        a.contextName == b.contextName && a.server == b.server && a.caPEM == b.caPEM && a.insecureSkipTLSVerify == b.insecureSkipTLSVerify &&
            a.clientCertificatePEM == b.clientCertificatePEM && a.clientKeyPEM == b.clientKeyPEM && a.token == b.token && a.tokenFile == b.tokenFile &&
            a.namespace == b.namespace && a.tlsServerName == b.tlsServerName
    }
}

/// Kubeconfig files as kubectl reads them: `--kubeconfig`, else `$KUBECONFIG` (several files merged,
/// the first file to name an entry wins), else `~/.kube/config`; the in-cluster service account when
/// none exists and the process runs in a pod.
public enum Kubeconfig {
    struct Named {
        var name: String
        var fields: MapReader
        var file: String
    }

    public static let inClusterDirectory = "/var/run/secrets/kubernetes.io/serviceaccount"

    /// Resolves a context to a connection.
    /// - Parameters:
    ///   - explicit: `--kubeconfig` (one file).
    ///   - context: `--context`, else the merged `current-context`.
    public static func resolve(explicit: String?, context: String?, environment: [String: String], fs: FileSystem, diagnostics: DiagnosticSink) throws -> ClusterConnection {
        var files: [String] = []
        if let explicit {
            let p = Path.absolute(Path.expandTilde(explicit, home: fs.homeDirectory), relativeTo: fs.currentDirectory)
            guard fs.isFile(p) else { throw SoError("kubeconfig not found: \(p)", hint: "pass an existing file to --kubeconfig") }
            files = [p]
        } else {
            files = userFiles(environment: environment, fs: fs)
        }
        if files.isEmpty {
            if environment["KUBERNETES_SERVICE_HOST"] != nil, fs.isFile(Path.join(inClusterDirectory, "token")) {
                return try inCluster(environment: environment, fs: fs)
            }
            throw SoError("no kubeconfig found (looked at --kubeconfig, $KUBECONFIG and ~/.kube/config)",
                          hint: "create a kind cluster, or point --kubeconfig / KUBECONFIG at a cluster's kubeconfig")
        }
        let documents = try files.compactMap { f in try YAMLFile.load(f, fs: fs, what: "kubeconfig").map { ($0, f) } }
        return try resolve(documents: documents, context: context, fs: fs, sources: files.joined(separator: ", "))
    }

    /// `$KUBECONFIG`'s existing files, else `~/.kube/config` when it exists.
    public static func userFiles(environment: [String: String], fs: FileSystem) -> [String] {
        if let env = environment["KUBECONFIG"], !env.isEmpty {
            return env.split(separator: ":").map { Path.absolute(Path.expandTilde(String($0), home: fs.homeDirectory), relativeTo: fs.currentDirectory) }
                .filter { fs.isFile($0) }
        }
        let home = Path.join(fs.homeDirectory, ".kube", "config")
        return fs.isFile(home) ? [home] : []
    }

    /// A context of the user's kubeconfig (`$KUBECONFIG`, else `~/.kube/config`), or nil when there is
    /// no such file or context — never the in-cluster account. kind writes `kind-<cluster>` there.
    public static func userContext(_ context: String, environment: [String: String], fs: FileSystem) -> ClusterConnection? {
        let files = userFiles(environment: environment, fs: fs)
        guard !files.isEmpty, let documents = try? files.compactMap({ f in try YAMLFile.load(f, fs: fs, what: "kubeconfig").map { ($0, f) } }) else { return nil }
        return try? resolve(documents: documents, context: context, fs: fs, sources: files.joined(separator: ", "))
    }

    /// Resolves a kubeconfig given as text (e.g. `kind get kubeconfig`), never written to disk.
    public static func resolve(text: String, label: String, context: String?, fs: FileSystem) throws -> ClusterConnection {
        guard let root = try YAMLFile.parse(text, file: label) else { throw SoError("\(label) is empty", hint: "check the cluster exists") }
        return try resolve(documents: [(root, label)], context: context, fs: fs, sources: label)
    }

    static func resolve(documents: [(YNode, String)], context: String?, fs: FileSystem, sources: String) throws -> ClusterConnection {
        var clusters: [Named] = [], users: [Named] = [], contexts: [Named] = []
        var current: String?
        for (root, file) in documents {
            let m = try root.mapping("kubeconfig")
            if current == nil, let c = try m.string("current-context"), !c.isEmpty { current = c }
            func collect(_ key: String, _ inner: String, into list: inout [Named]) throws {
                for (i, item) in try (m.nonNull(key)?.sequence("'\(key)'") ?? []).enumerated() {
                    let im = try item.mapping("\(key)[\(i)]")
                    let name = try im.required("name").string("'name'")
                    guard !list.contains(where: { $0.name == name }) else { continue }
                    let fields = try (im.nonNull(inner) ?? YNode.emptyMapping(file: file)).mapping("\(key)[\(i)].\(inner)")
                    list.append(Named(name: name, fields: fields, file: file))
                }
            }
            try collect("clusters", "cluster", into: &clusters)
            try collect("users", "user", into: &users)
            try collect("contexts", "context", into: &contexts)
        }
        guard let contextName = context ?? current else {
            throw SoError("kubeconfig has no current-context", hint: "pass --context NAME (kubectl config get-contexts lists them)")
        }
        guard let ctx = contexts.first(where: { $0.name == contextName }) else {
            let names = contexts.map(\.name)
            throw SoError("context '\(contextName)' not found in \(sources)",
                          hint: (Suggest.closest(to: contextName, in: names).map { "did you mean '\($0)'? " } ?? "") + "contexts: \(names.joined(separator: ", "))")
        }
        let clusterName = try ctx.fields.required("cluster").string("'cluster'")
        guard let cluster = clusters.first(where: { $0.name == clusterName }) else {
            throw SoError("cluster '\(clusterName)' of context '\(contextName)' not found", hint: "check the kubeconfig's clusters: list")
        }
        var conn = ClusterConnection(contextName: contextName, server: try cluster.fields.required("server").string("'server'"))
        conn.namespace = try ctx.fields.string("namespace")
        conn.insecureSkipTLSVerify = try cluster.fields.bool("insecure-skip-tls-verify") ?? false
        conn.tlsServerName = try cluster.fields.string("tls-server-name")
        conn.caPEM = try dataOrFile(cluster.fields, data: "certificate-authority-data", file: "certificate-authority", base: cluster.file, fs: fs)
        _ = try cluster.fields.string("proxy-url")
        if let userName = try ctx.fields.string("user") {
            guard let user = users.first(where: { $0.name == userName }) else {
                throw SoError("user '\(userName)' of context '\(contextName)' not found", hint: "check the kubeconfig's users: list")
            }
            if user.fields.nonNull("exec") != nil {
                throw SoError("user '\(userName)' uses an exec credential plugin, which so does not support",
                              hint: "use a kubeconfig with a client certificate or token (e.g. 'kubectl create token' for a service account)")
            }
            if user.fields.nonNull("auth-provider") != nil {
                throw SoError("user '\(userName)' uses an auth-provider, which so does not support", hint: "use a client certificate or token")
            }
            conn.clientCertificatePEM = try dataOrFile(user.fields, data: "client-certificate-data", file: "client-certificate", base: user.file, fs: fs)
            conn.clientKeyPEM = try dataOrFile(user.fields, data: "client-key-data", file: "client-key", base: user.file, fs: fs)
            conn.token = try user.fields.string("token")
            if let tf = try user.fields.string("tokenFile") { conn.tokenFile = Path.absolute(tf, relativeTo: Path.dirname(user.file)) }
            if (conn.clientCertificatePEM == nil) != (conn.clientKeyPEM == nil) {
                throw SoError("user '\(userName)' has a client certificate without a key (or a key without a certificate)", hint: "give both client-certificate and client-key")
            }
        }
        return conn
    }

    static func inCluster(environment: [String: String], fs: FileSystem) throws -> ClusterConnection {
        let host = environment["KUBERNETES_SERVICE_HOST"] ?? ""
        let port = environment["KUBERNETES_SERVICE_PORT"] ?? "443"
        let server = host.contains(":") ? "https://[\(host)]:\(port)" : "https://\(host):\(port)"
        let ns = try? fs.readText(Path.join(inClusterDirectory, "namespace")).trimmedWhitespace
        let ca = Path.join(inClusterDirectory, "ca.crt")
        return ClusterConnection(contextName: "in-cluster", server: server, caPEM: fs.isFile(ca) ? try fs.readData(ca) : nil,
                                 tokenFile: Path.join(inClusterDirectory, "token"), namespace: ns)
    }

    static func dataOrFile(_ m: MapReader, data: String, file: String, base: String, fs: FileSystem) throws -> Data? {
        if let d = m.nonNull(data) {
            let text = try d.string("'\(data)'").filter { !$0.isWhitespace }
            guard let decoded = Data(base64Encoded: text) else { throw d.error("'\(data)' is not base64", hint: "kubeconfig *-data fields hold base64-encoded PEM") }
            return decoded
        }
        if let f = try m.string(file) {
            let p = Path.absolute(Path.expandTilde(f, home: fs.homeDirectory), relativeTo: Path.dirname(base))
            guard fs.isFile(p) else { throw SoError("\(file) not found: \(p)", hint: "fix the path in the kubeconfig", at: SourceLocation(file: base)) }
            return try fs.readData(p)
        }
        return nil
    }
}
