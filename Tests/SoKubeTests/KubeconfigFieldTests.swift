import Foundation
import SoBasics
import SoKube
import SoSystem
import SoTestSupport
import Testing

/// Every field kubectl honours is read (or refused by name); what kubectl ignores is ignored.
@Suite struct KubeconfigFieldTests {
    func b64(_ s: String) -> String { Data(s.utf8).base64EncodedString() }

    /// A kubeconfig at `<tmp>/conf/kc` with one cluster (`cluster` lines) and one user (`user` lines).
    func resolve(
        cluster: [String] = [], user: [String], env: [String: String] = [:], files: [String: String] = [:],
        diagnostics: DiagnosticSink = DiagnosticSink()
    ) throws -> (ClusterConnection, TempDir) {
        let t = try TempDir()
        for (name, text) in files { try t.write(name, text) }
        try t.write(
            "conf/kc",
            """
            current-context: x
            clusters:
            - name: c
              cluster:
                server: https://k.example:6443
            \(cluster.map { "    " + $0 }.joined(separator: "\n"))
            users:
            - name: u
              user:
            \(user.isEmpty ? "    {}" : user.map { "    " + $0 }.joined(separator: "\n"))
            contexts:
            - name: x
              context: {cluster: c, user: u}
            """)
        let c = try Kubeconfig.resolve(
            explicit: t.file("conf/kc"), context: nil, environment: env, fs: LocalFileSystem(currentDirectory: "/"),
            diagnostics: diagnostics)
        return (c, t)
    }

    func error(cluster: [String] = [], user: [String]) -> SoError? {
        do {
            let (_, t) = try resolve(cluster: cluster, user: user)
            t.cleanup()
            return nil
        } catch {
            return error as? SoError
        }
    }

    @Test func execPluginAsClientGoReadsIt() throws {
        let (c, t) = try resolve(
            cluster: [
                "extensions:", "- name: client.authentication.k8s.io/exec",
                "  extension: {region: eu, count: 3, \"on\": true}",
                "- name: other", "  extension: {ignored: true}",
            ],
            user: [
                "exec:", "  apiVersion: client.authentication.k8s.io/v1", "  command: ../bin/login",
                "  args: [token, -v]",
                "  env: [{name: A, value: \"1\"}, {name: B, value: two}]", "  installHint: brew install login",
                "  provideClusterInfo: true", "  interactiveMode: Always",
            ])
        defer { t.cleanup() }
        let e = try #require(c.exec)
        #expect(
            e.command == t.file("bin/login"),
            "a relative command with a slash is relative to the kubeconfig's directory")
        #expect(e.args == ["token", "-v"] && e.env == [.init(name: "A", value: "1"), .init(name: "B", value: "two")])
        #expect(e.installHint == "brew install login" && e.provideClusterInfo && e.interactiveMode == .always)
        #expect(e.clusterConfig == #"{"region":"eu","count":3,"on":true}"#)
        #expect(c.userName == "u" && c.source == t.file("conf/kc"))
    }

    @Test func execPluginNameOnPathAndV1beta1Defaults() throws {
        let (c, t) = try resolve(user: [
            "exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: gke-gcloud-auth-plugin}"
        ])
        defer { t.cleanup() }
        #expect(
            c.exec
                == ExecPlugin(
                    apiVersion: "client.authentication.k8s.io/v1beta1", command: "gke-gcloud-auth-plugin",
                    interactiveMode: .ifAvailable))
    }

    @Test func execPluginMistakesAreNamed() {
        let exec = "exec: {apiVersion: client.authentication.k8s.io/v1, command: x, interactiveMode: Never"
        #expect(
            error(user: ["exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}"])?.message
                .contains("apiVersion 'client.authentication.k8s.io/v1alpha1'") == true)
        #expect(
            error(user: ["exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}"])?.message
                .contains("has no command") == true)
        #expect(error(user: [exec + ", env: [{value: v}]}"])?.message.contains("env[0] has no name") == true)
        #expect(
            error(user: ["exec: {apiVersion: client.authentication.k8s.io/v1, command: x, interactiveMode: Sometimes}"]
            )?.message
                .contains("'Sometimes'") == true)
        #expect(error(user: [exec + "}"]) == nil)
    }

    @Test func execIsNotRunWhenTheUserHasItsOwnCredentials() throws {
        let (c, t) = try resolve(user: [
            "token: static", "exec: {apiVersion: client.authentication.k8s.io/v1, command: x, interactiveMode: Never}",
        ])
        defer { t.cleanup() }
        #expect(c.exec == nil && c.token == "static")
    }

    @Test func authProvidersNameTheirReplacement() {
        let gcp = error(user: ["auth-provider: {name: gcp, config: {cmd-path: gcloud}}"])
        #expect(
            gcp?.message
                == "user 'u' uses the gcp auth-provider, which kubectl removed; its replacement is the gke-gcloud-auth-plugin exec plugin"
        )
        #expect(gcp?.hint?.contains("gcloud components install gke-gcloud-auth-plugin") == true)
        #expect(error(user: ["auth-provider: {name: azure}"])?.message.contains("kubelogin exec plugin") == true)
        let oidc = error(user: ["auth-provider: {name: oidc, config: {idp-issuer-url: https://issuer}}"])
        #expect(oidc?.message.contains("oidc-login") == true && oidc?.hint?.contains("int128/kubelogin") == true)
        #expect(error(user: ["auth-provider: {name: custom}"])?.message.contains("'custom' auth-provider") == true)
    }

    @Test func filesAreRelativeToTheKubeconfig() throws {
        let (c, t) = try resolve(
            cluster: ["certificate-authority: pki/ca.pem"],
            user: ["client-certificate: pki/me.crt", "client-key: pki/me.key", "tokenFile: ../token"],
            files: ["conf/pki/ca.pem": "CA", "conf/pki/me.crt": "CRT", "conf/pki/me.key": "KEY"])
        defer { t.cleanup() }
        #expect(
            c.caPEM == Data("CA".utf8) && c.clientCertificatePEM == Data("CRT".utf8)
                && c.clientKeyPEM == Data("KEY".utf8))
        #expect(c.tokenFile == t.file("token"))
        #expect(
            error(cluster: ["certificate-authority: missing.pem"], user: [])?.message.hasPrefix(
                "certificate-authority not found: ") == true)
    }

    @Test func insecureSkipTLSVerifyIsWarnedAboutAndRefusedWithACA() throws {
        let sink = DiagnosticSink()
        let (c, t) = try resolve(
            cluster: ["insecure-skip-tls-verify: true", "tls-server-name: api.internal", "disable-compression: true"],
            user: [],
            diagnostics: sink)
        defer { t.cleanup() }
        #expect(c.insecureSkipTLSVerify && c.tlsServerName == "api.internal")
        #expect(
            sink.all.map(\.message)
                == [
                    "cluster 'c' skips TLS verification (insecure-skip-tls-verify): the API server https://k.example:6443 is not authenticated"
                ])
        let both = error(
            cluster: ["insecure-skip-tls-verify: true", "certificate-authority-data: \(b64("CA"))"], user: [])
        #expect(both?.message.contains("both insecure-skip-tls-verify and a certificate authority") == true)
    }

    @Test func proxyURLIsKeptAndCheckedAndImpersonationRead() throws {
        let (c, t) = try resolve(
            cluster: ["proxy-url: socks5://127.0.0.1:1080"],
            user: [
                "token: t", "as: jane", "as-groups: [a, b]", "as-user-extra: {scopes: [x]}",
                "extensions: [{name: e, extension: {}}]",
            ])
        defer { t.cleanup() }
        #expect(c.proxyURL == "socks5://127.0.0.1:1080")
        #expect(c.impersonation == Impersonation(user: "jane", groups: ["a", "b"], extra: ["scopes": ["x"]]))
        #expect(error(cluster: ["proxy-url: ftp://p:21"], user: [])?.message.contains("scheme 'ftp'") == true)
        #expect(error(user: ["as-groups: [a]"])?.message.contains("without 'as'") == true)
        #expect(
            Impersonation(user: "j", uid: "7", groups: ["g"], extra: ["a/b c": ["1"]]).headers.map { "\($0.0)=\($0.1)" }
                == ["Impersonate-User=j", "Impersonate-Uid=7", "Impersonate-Group=g", "Impersonate-Extra-a%2Fb%20c=1"])
    }

    @Test func basicAuthAndOneMethodOnly() throws {
        let (c, t) = try resolve(user: ["username: admin", "password: hunter2"])
        defer { t.cleanup() }
        #expect(c.basicAuth == BasicAuth(username: "admin", password: "hunter2"))
        #expect(
            error(user: ["username: admin", "password: p", "token: t"])?.message.contains(
                "both a token and a username/password") == true)
    }

    @Test func mergedKubeconfigsFirstFileToSetAKeyWins() throws {
        let t = try TempDir()
        defer { t.cleanup() }
        try t.write(
            "a", "clusters: [{name: c, cluster: {server: 'https://a:1'}}]\nusers: [{name: u, user: {token: from-a}}]\n")
        try t.write(
            "b",
            """
            current-context: ctx
            clusters: [{name: c, cluster: {server: 'https://b:1'}}]
            users: [{name: u, user: {token: from-b}}, {name: v, user: {token: only-b}}]
            contexts: [{name: ctx, context: {cluster: c, user: u}}, {name: other, context: {cluster: c, user: v}}]
            """)
        try t.write("c", "current-context: other\n")
        let env = [
            "KUBECONFIG": [t.file("a"), t.file("missing"), t.file("b"), t.file("a"), t.file("c")].joined(separator: ":")
        ]
        let c = try Kubeconfig.resolve(
            explicit: nil, context: nil, environment: env, fs: LocalFileSystem(), diagnostics: DiagnosticSink())
        #expect(c.contextName == "ctx" && c.server == "https://a:1" && c.token == "from-a")
        #expect(
            Kubeconfig.userFiles(environment: env, fs: LocalFileSystem()) == [t.file("a"), t.file("b"), t.file("c")])
    }

    @Test func inClusterWhenNoKubeconfigAndOnlyThen() throws {
        let t = try TempDir()
        defer { t.cleanup() }
        let fs = LocalFileSystem(currentDirectory: t.path)
        var env = [
            "KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443",
            "SO_SERVICEACCOUNT_DIR": t.file("sa"), "KUBECONFIG": t.file("none"),
        ]
        #expect(!Kubeconfig.inClusterPossible(environment: env, fs: fs), "no token mounted")
        try t.write("sa/token", "tok")
        try t.write("sa/namespace", "team\n")
        #expect(Kubeconfig.inClusterPossible(environment: env, fs: fs))
        let c = try Kubeconfig.resolve(
            explicit: nil, context: nil, environment: env, fs: fs, diagnostics: DiagnosticSink())
        #expect(
            c
                == ClusterConnection(
                    contextName: "in-cluster", server: "https://[fd00::1]:443", tokenFile: t.file("sa/token"),
                    namespace: "team",
                    inCluster: true, source: t.file("sa")))
        env["POD_NAMESPACE"] = "downward"
        #expect(
            try Kubeconfig.resolve(explicit: nil, context: nil, environment: env, fs: fs, diagnostics: DiagnosticSink())
                .namespace == "downward")
        // kubectl: --context with no kubeconfig is an error, not the pod's account; a kubeconfig wins over the pod.
        #expect(throws: SoError.self) {
            try Kubeconfig.resolve(
                explicit: nil, context: "prod", environment: env, fs: fs, diagnostics: DiagnosticSink())
        }
        try t.write(
            "none",
            "current-context: x\nclusters: [{name: c, cluster: {server: 'https://k:1'}}]\ncontexts: [{name: x, context: {cluster: c}}]\n"
        )
        #expect(
            try Kubeconfig.resolve(explicit: nil, context: nil, environment: env, fs: fs, diagnostics: DiagnosticSink())
                .inCluster == false)
        env["KUBERNETES_SERVICE_PORT"] = nil
        #expect(!Kubeconfig.inClusterPossible(environment: env, fs: fs), "client-go needs both HOST and PORT")
    }
}

/// NO_PROXY and the proxy-url/HTTPS_PROXY precedence, as Go's net/http and client-go decide.
@Suite struct ProxySelectionTests {
    func conn(_ server: String, proxyURL: String? = nil) -> ClusterConnection {
        ClusterConnection(contextName: "x", server: server, proxyURL: proxyURL)
    }

    @Test func noProxyEntries() {
        let cases: [(String, Int, String, Bool)] = [
            ("api.example.com", 443, "example.com", true),
            ("example.com", 443, "example.com", true),
            ("example.com", 443, ".example.com", false),
            ("api.example.com", 443, ".example.com", true),
            ("api.example.com", 443, "*.example.com", true),
            ("notexample.com", 443, "example.com", false),
            ("api.example.com", 6443, "example.com:443", false),
            ("api.example.com", 6443, "example.com:6443", true),
            ("10.1.2.3", 6443, "10.0.0.0/8", true),
            ("11.1.2.3", 6443, "10.0.0.0/8", false),
            ("10.1.2.3", 6443, "10.1.2.3", true),
            ("fd00::5", 443, "fd00::/8", true),
            ("fd00::5", 443, "[fd00::5]:443", true),
            ("api.example.com", 443, "10.0.0.0/8, other.org ,*", true),
            ("API.Example.COM", 443, "example.com", true),
            ("localhost", 443, "", true),
            ("127.0.0.2", 443, "", true),
            ("::1", 443, "", true),
            ("api.example.com", 443, "", false),
        ]
        for (host, port, noProxy, bypass) in cases {
            #expect(
                ProxySettings.bypasses(host: host, port: port, noProxy: noProxy) == bypass,
                "\(host):\(port) NO_PROXY=\(noProxy)")
        }
    }

    @Test func proxyURLWinsOverTheEnvironment() throws {
        let env = ["HTTPS_PROXY": "http://env-proxy:3128", "NO_PROXY": "*"]
        #expect(
            try ProxySettings.choose(
                for: conn("https://k:6443", proxyURL: "http://u:p%25w@kube-proxy:8080"), environment: env)
                == ProxySettings(
                    kind: .http, host: "kube-proxy", port: 8080, username: "u", password: "p%w",
                    source: "the proxy-url of context 'x'"))
        #expect(try ProxySettings.choose(for: conn("https://k:6443"), environment: env) == nil)
        #expect(
            try ProxySettings.choose(for: conn("https://k:6443"), environment: ["https_proxy": "squid:3128"])
                == ProxySettings(kind: .http, host: "squid", port: 3128, source: "https_proxy"))
        #expect(
            try ProxySettings.choose(for: conn("https://k:6443"), environment: ["HTTPS_PROXY": "socks5h://s"])?.kind
                == .socks5)
        #expect(
            try ProxySettings.choose(for: conn("https://k:6443"), environment: ["HTTP_PROXY": "http://p:1"]) == nil,
            "HTTP_PROXY is for http:// servers")
        #expect(
            try ProxySettings.choose(for: conn("http://k:8080"), environment: ["HTTP_PROXY": "http://p:1"])?.port == 1)
        #expect(
            try ProxySettings.choose(for: conn("https://k:6443", proxyURL: "https://p"), environment: [:])?.port == 443)
        #expect(throws: SoError.self) {
            try ProxySettings.parse("socks4://p:1", source: "HTTPS_PROXY", strictScheme: false)
        }
    }

    @Test func cidrArithmetic() {
        #expect(
            IPAddress.cidr("192.168.0.0/16", contains: "192.168.200.1")
                && !IPAddress.cidr("192.168.0.0/17", contains: "192.168.200.1"))
        #expect(IPAddress.cidr("0.0.0.0/0", contains: "8.8.8.8") && IPAddress.cidr("10.0.0.1/32", contains: "10.0.0.1"))
        #expect(
            !IPAddress.cidr("10.0.0.0/8", contains: "fd00::1") && !IPAddress.isCIDR("10.0.0.0/33")
                && IPAddress.isCIDR("fd00::/8"))
        #expect(IPAddress.bytes("::ffff:10.0.0.1") == [10, 0, 0, 1])
    }
}
