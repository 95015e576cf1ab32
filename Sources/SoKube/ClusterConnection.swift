import Foundation
import SoBasics

/// How to reach one API server: what a kubeconfig context resolves to.
public struct ClusterConnection: Sendable, Equatable {
    public var contextName: String
    public var server: String
    public var caPEM: Data?
    public var insecureSkipTLSVerify: Bool
    public var tlsServerName: String?
    /// The cluster's `proxy-url` (http, https or socks5); wins over `HTTPS_PROXY`.
    public var proxyURL: String?
    /// The kubeconfig's user entry, named in errors (nil in a pod: its service account).
    public var userName: String?
    public var clientCertificatePEM: Data?
    public var clientKeyPEM: Data?
    public var token: String?
    /// Re-read on every request (projected service-account tokens rotate).
    public var tokenFile: String?
    public var basicAuth: BasicAuth?
    /// The user's exec credential plugin, when it has no token, basic auth or client certificate of its own
    /// (client-go runs the plugin only then).
    public var exec: ExecPlugin?
    public var impersonation: Impersonation?
    public var namespace: String?
    /// The pod's own service account (no kubeconfig): kubectl finds it by itself.
    public var inCluster: Bool
    /// The file the user entry came from (or what the kubeconfig text was), for messages.
    public var source: String?

    public init(
        contextName: String, server: String, caPEM: Data? = nil, insecureSkipTLSVerify: Bool = false,
        tlsServerName: String? = nil,
        clientCertificatePEM: Data? = nil, clientKeyPEM: Data? = nil, token: String? = nil, tokenFile: String? = nil,
        namespace: String? = nil,
        userName: String? = nil, proxyURL: String? = nil, basicAuth: BasicAuth? = nil, exec: ExecPlugin? = nil,
        impersonation: Impersonation? = nil, inCluster: Bool = false, source: String? = nil
    ) {
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
        self.userName = userName
        self.proxyURL = proxyURL
        self.basicAuth = basicAuth
        self.exec = exec
        self.impersonation = impersonation
        self.inCluster = inCluster
        self.source = source
    }

    /// `user 'alice' (context 'prod')`, or the pod's service account: who the API server was asked to believe.
    public var who: String {
        if inCluster { return "the pod's service account (in-cluster, namespace \(namespace ?? "default"))" }
        return "user '\(userName ?? "(none)")' (context '\(contextName)')"
    }
}

extension ClusterConnection: CustomStringConvertible {
    /// What it names, never the secrets it holds (a failed test or a log line shows this).
    public var description: String {
        var parts = ["context \(contextName)", "server \(server)"]
        if let userName { parts.append("user \(userName)") }
        if let namespace { parts.append("namespace \(namespace)") }
        if caPEM != nil { parts.append("CA") }
        if insecureSkipTLSVerify { parts.append("insecure-skip-tls-verify") }
        if let tlsServerName { parts.append("tls-server-name \(tlsServerName)") }
        if let proxyURL { parts.append("proxy-url \(ProxySettings.redacted(proxyURL))") }
        if clientCertificatePEM != nil { parts.append("client certificate") }
        if token != nil { parts.append("token") }
        if let tokenFile { parts.append("tokenFile \(tokenFile)") }
        if basicAuth != nil { parts.append("basic auth") }
        if let exec { parts.append("exec \(exec.command)") }
        if let impersonation { parts.append("as \(impersonation.user)") }
        if inCluster { parts.append("in-cluster") }
        if let source { parts.append("from \(source)") }
        return "ClusterConnection(" + parts.joined(separator: ", ") + ")"
    }
}
