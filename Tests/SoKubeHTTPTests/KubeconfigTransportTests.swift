import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import SoBasics
import SoKube
import SoSystem
import SoTestSupport
import Testing

@testable import SoKubeHTTP

/// Each kubeconfig shape kubectl honours, end to end: kubeconfig text → `Kubeconfig.resolve` →
/// `HTTPClusterClient` → a loopback TLS server (and a CONNECT proxy) that records what arrived.
@Suite(.serialized, .enabled(if: TestPKI.available, "needs openssl to make its test certificates"))
struct KubeconfigTransportTests {
    static let v1 = "client.authentication.k8s.io/v1"

    final class Harness {
        let t: TempDir
        let server = RecordingServer()
        let processes = FakeProcessRunner()
        let clock = FixedClock()
        let cache = ExecCredentialCache()
        let diagnostics = DiagnosticSink()
        var port = 0
        var clients: [HTTPClusterClient] = []

        init(tls: TLSConfiguration? = try? KubeconfigTransportTests.serverTLS()) throws {
            t = try TempDir()
            port = try server.start(tls: tls)
        }

        deinit {
            let clients = clients
            Task { for c in clients { await c.shutdown() } }
            server.stop()
            t.cleanup()
        }

        func effects(_ env: [String: String] = [:], processes: ProcessRunner? = nil) -> CredentialEffects {
            CredentialEffects(
                processes: processes ?? self.processes, fs: LocalFileSystem(currentDirectory: "/"), environment: env,
                stdinIsTerminal: false, clock: clock, execCache: cache)
        }

        /// A kubeconfig with one cluster (`cluster` lines under `cluster:`) and one user (`user` lines under `user:`).
        func kubeconfig(
            server: String? = nil, cluster: [String] = ["certificate-authority-data: \(b64(TestPKI.ca))"],
            user: [String]
        ) -> String {
            """
            apiVersion: v1
            kind: Config
            current-context: test
            clusters:
            - name: c
              cluster:
                server: \(server ?? "https://127.0.0.1:\(port)")
            \(cluster.map { "    " + $0 }.joined(separator: "\n"))
            users:
            - name: u
              user:
            \(user.isEmpty ? "    {}" : user.map { "    " + $0 }.joined(separator: "\n"))
            contexts:
            - name: test
              context: {cluster: c, user: u}
            """
        }

        func connection(_ text: String, env: [String: String] = [:]) throws -> ClusterConnection {
            try t.write("kube/config", text)
            return try Kubeconfig.resolve(
                explicit: t.file("kube/config"), context: nil, environment: env,
                fs: LocalFileSystem(currentDirectory: "/"),
                diagnostics: diagnostics)
        }

        func client(_ text: String, env: [String: String] = [:], processes: ProcessRunner? = nil) throws
            -> HTTPClusterClient
        {
            let c = try HTTPClusterClient(try connection(text, env: env), effects: effects(env, processes: processes))
            clients.append(c)
            return c
        }

        func ok(_ n: Int = 1) {
            for _ in 0..<n {
                server.answer(.init(status: 200, body: "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"demo\"}}"))
            }
        }
    }

    static func serverTLS(
        certificate: String = TestPKI.serverCertificate, key: String = TestPKI.serverKey, clientCA: Bool = false
    ) throws -> TLSConfiguration {
        var c = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(certificate.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.utf8), format: .pem)))
        if clientCA {
            c.certificateVerification = .noHostnameVerification
            c.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(TestPKI.ca.utf8)))
        }
        return c
    }

    /// An ExecCredential as a plugin prints it.
    static func credential(
        token: String? = nil, certificate: String? = nil, key: String? = nil, expires: Date? = nil,
        apiVersion: String = v1
    ) -> String {
        var status: [String: Any] = [:]
        if let token { status["token"] = token }
        if let certificate { status["clientCertificateData"] = certificate }
        if let key { status["clientKeyData"] = key }
        if let expires { status["expirationTimestamp"] = Timestamps.rfc3339(expires) }
        let object: [String: Any] = ["apiVersion": apiVersion, "kind": "ExecCredential", "status": status]
        return String(decoding: (try? JSONSerialization.data(withJSONObject: object)) ?? Data(), as: UTF8.self)
    }

    func namespace(_ c: HTTPClusterClient) async throws -> String? {
        try await c.get(.namespace, name: "demo", namespace: nil)?.name
    }

    // MARK: exec credential plugins

    @Test func execPluginTokenWithItsEnvironmentAndClusterInfo() async throws {
        let h = try Harness()
        h.ok(2)
        h.processes.expect(
            ["kube-login", "get-token", "--cluster", "c"], stdout: Self.credential(token: "exec-token-1"))
        let c = try h.client(
            h.kubeconfig(
                cluster: [
                    "certificate-authority-data: \(b64(TestPKI.ca))", "tls-server-name: localhost",
                    "extensions:", "- name: client.authentication.k8s.io/exec",
                    "  extension: {audience: so, retries: 2, verbose: true}",
                ],
                user: [
                    "exec:", "  apiVersion: \(Self.v1)", "  command: kube-login", "  args: [get-token, --cluster, c]",
                    "  env: [{name: LOGIN_PROFILE, value: ci}]", "  interactiveMode: IfAvailable",
                    "  provideClusterInfo: true",
                ]),
            env: ["HOME": "/home/someone", "CI": "true"])
        #expect(try await namespace(c) == "demo")
        #expect(try await namespace(c) == "demo")
        #expect(h.server.requests.map { $0.header("Authorization") } == ["Bearer exec-token-1", "Bearer exec-token-1"])
        #expect(h.processes.calls.count == 1, "cached: no expiry")
        let env = try #require(h.processes.environments.first ?? nil)
        #expect(env["LOGIN_PROFILE"] == "ci" && env["HOME"] == "/home/someone")
        let info = try JSON.parse(Data((env["KUBERNETES_EXEC_INFO"] ?? "").utf8))
        #expect(info["kind"]?.string == "ExecCredential" && info["apiVersion"]?.string == Self.v1)
        #expect(info.at("spec", "interactive")?.bool == false, "CI is set")
        #expect(info.at("spec", "cluster", "server")?.string == "https://127.0.0.1:\(h.port)")
        #expect(info.at("spec", "cluster", "tls-server-name")?.string == "localhost")
        #expect(info.at("spec", "cluster", "certificate-authority-data")?.string == b64(TestPKI.ca))
        #expect(
            info.at("spec", "cluster", "config")
                == JSON.object(["audience": .string("so"), "retries": .number(2), "verbose": .bool(true)]))
        #expect(h.processes.prompting.isEmpty)
    }

    @Test func execPluginClientCertificateIsPresentedAndReplacedAfterA401() async throws {
        let h = try Harness(tls: try Self.serverTLS(clientCA: true))
        h.server.answer(
            .init(status: 200, body: "{\"metadata\":{\"name\":\"demo\"}}"),
            .init(status: 401, body: "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"message\":\"Unauthorized\"}"),
            .init(status: 200, body: "{\"metadata\":{\"name\":\"demo\"}}"))
        h.processes.expect(
            ["cert-plugin"], stdout: Self.credential(certificate: TestPKI.client1Certificate, key: TestPKI.client1Key))
        h.processes.expect(
            ["cert-plugin"], stdout: Self.credential(certificate: TestPKI.client2Certificate, key: TestPKI.client2Key))
        let c = try h.client(
            h.kubeconfig(user: ["exec: {apiVersion: \(Self.v1), command: cert-plugin, interactiveMode: Never}"]))
        #expect(try await namespace(c) == "demo")
        #expect(try await namespace(c) == "demo")
        #expect(h.server.requests.map(\.clientCertificateSerial) == [[0x20, 0x01], [0x20, 0x01], [0x20, 0x02]])
        #expect(h.server.requests.allSatisfy { $0.header("Authorization") == nil })
        #expect(h.processes.pending.isEmpty)
    }

    @Test func execCredentialIsCachedUntilItExpiresAndRunAgainOnceOnA401() async throws {
        let h = try Harness()
        let now = h.clock.now()
        h.processes.expect(["tok"], stdout: Self.credential(token: "t1", expires: now.addingTimeInterval(60)))
        h.processes.expect(["tok"], stdout: Self.credential(token: "t2", expires: now.addingTimeInterval(3600)))
        h.processes.expect(["tok"], stdout: Self.credential(token: "t3", expires: now.addingTimeInterval(3600)))
        let c = try h.client(
            h.kubeconfig(user: ["exec: {apiVersion: \(Self.v1), command: tok, interactiveMode: Never}"]))
        h.ok(2)
        #expect(try await namespace(c) == "demo")
        #expect(try await namespace(c) == "demo")
        #expect(h.processes.calls.count == 1)
        try await h.clock.sleep(seconds: 61)
        h.ok()
        #expect(try await namespace(c) == "demo")
        #expect(h.processes.calls.count == 2, "expired: run again")
        h.server.answer(
            .init(status: 401, body: "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"message\":\"Unauthorized\"}"))
        h.ok()
        #expect(try await namespace(c) == "demo")
        #expect(
            h.server.requests.map { $0.header("Authorization") ?? "" } == [
                "Bearer t1", "Bearer t1", "Bearer t2", "Bearer t2", "Bearer t3",
            ])
        #expect(await h.cache.runs == 3)
    }

    @Test func a401AfterThePluginRanAgainNamesTheUserAndContext() async throws {
        let h = try Harness()
        h.processes.expect(["tok"], stdout: Self.credential(token: "old-token-x1"))
        h.processes.expect(["tok"], stdout: Self.credential(token: "new-token-x2"))
        let unauthorized = RecordingServer.Response(
            status: 401, body: "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"message\":\"Unauthorized\"}")
        h.server.answer(unauthorized, unauthorized)
        let c = try h.client(
            h.kubeconfig(user: ["exec: {apiVersion: \(Self.v1), command: tok, interactiveMode: Never}"]))
        await #expect { _ = try await namespace(c) } throws: { e in
            guard let e = e as? SoError else { return false }
            return e.message
                == "cannot get Namespace demo: the API server https://127.0.0.1:\(h.port) does not accept the credentials of "
                + "user 'u' (context 'test') (Unauthorized)" && (e.hint ?? "").contains("exec plugin 'tok'")
                && !e.description.contains("token-x")
        }
        #expect(
            h.server.requests.map { $0.header("Authorization") ?? "" } == [
                "Bearer old-token-x1", "Bearer new-token-x2",
            ])
    }

    @Test func aFailingPluginIsReportedWithItsStderrAndExitCode() async throws {
        let h = try Harness()
        h.processes.expect(
            ["aws", "eks", "get-token"], exitCode: 255,
            stderr: "\nusing profile ci\nretrying\nAn error occurred (ExpiredToken): the SSO session has expired\n\n")
        let c = try h.client(
            h.kubeconfig(user: [
                "exec: {apiVersion: \(Self.v1), command: aws, args: [eks, get-token], interactiveMode: Never}"
            ]))
        await #expect { _ = try await namespace(c) } throws: { e in
            (e as? SoError)?.message
                == "exec credential plugin 'aws' of user 'u' (context 'test') failed with exit code 255: "
                + "using profile ci | retrying | An error occurred (ExpiredToken): the SSO session has expired"
        }
        #expect(h.server.requests.isEmpty)
    }

    @Test func aMissingPluginShowsTheKubeconfigsInstallHint() async throws {
        let h = try Harness()
        let c = try h.client(
            h.kubeconfig(user: [
                "exec:", "  apiVersion: \(Self.v1)", "  command: so-test-no-such-credential-plugin",
                "  interactiveMode: Never",
                "  installHint: |", "    so-test-no-such-credential-plugin is required.",
                "    Install it with: make plugin",
            ]),
            env: ["PATH": "/usr/bin:/bin"], processes: LocalProcessRunner(environment: ["PATH": "/usr/bin:/bin"]))
        await #expect { _ = try await namespace(c) } throws: { e in
            guard let e = e as? SoError else { return false }
            return e.message
                == "exec credential plugin 'so-test-no-such-credential-plugin' of user 'u' (context 'test') is not installed: "
                + "so-test-no-such-credential-plugin is not on PATH"
                && e.hint == "so-test-no-such-credential-plugin is required. Install it with: make plugin"
        }
        #expect(h.server.requests.isEmpty)
    }

    /// A real plugin: a relative command with a slash is found beside the kubeconfig (not the working directory),
    /// and it is given KUBERNETES_EXEC_INFO (v1beta1, interactiveMode defaulted to IfAvailable: no terminal, so false).
    @Test func aRealPluginBesideTheKubeconfig() async throws {
        let h = try Harness()
        h.ok()
        try h.t.write(
            "kube/bin/cred",
            """
            #!/bin/sh
            printf '%s' "$KUBERNETES_EXEC_INFO" > "$(dirname "$0")/info.json"
            echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"script-token"}}'
            """)
        try LocalFileSystem().setExecutable(h.t.file("kube/bin/cred"), true)
        let env = ProcessInfo.processInfo.environment
        let c = try h.client(
            h.kubeconfig(user: ["exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: ./bin/cred}"]),
            env: env,
            processes: LocalProcessRunner(environment: env))
        #expect(c.connection.exec?.command == h.t.file("kube/bin/cred"))
        #expect(try await namespace(c) == "demo")
        #expect(h.server.requests.first?.header("Authorization") == "Bearer script-token")
        #expect(
            try h.t.read("kube/bin/info.json")
                == #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":false}}"#
        )
    }

    // MARK: files beside the kubeconfig, rotation

    @Test func tokenFileIsReadAgainOnEveryRequest() async throws {
        let h = try Harness()
        h.ok(2)
        try h.t.write("kube/token", "first\n")
        let c = try h.client(h.kubeconfig(user: ["tokenFile: token"]))
        #expect(try await namespace(c) == "demo")
        try h.t.write("kube/token", "second")
        #expect(try await namespace(c) == "demo")
        #expect(h.server.requests.map { $0.header("Authorization") ?? "" } == ["Bearer first", "Bearer second"])
    }

    @Test func relativeCertificateAuthorityAndClientCertificateFiles() async throws {
        let h = try Harness(tls: try Self.serverTLS(clientCA: true))
        h.ok()
        try h.t.write("kube/pki/ca.pem", TestPKI.ca)
        try h.t.write("kube/pki/me.crt", TestPKI.client2Certificate)
        try h.t.write("kube/pki/me.key", TestPKI.client2Key)
        let c = try h.client(
            h.kubeconfig(
                cluster: ["certificate-authority: pki/ca.pem"],
                user: ["client-certificate: pki/me.crt", "client-key: pki/me.key"]))
        #expect(try await namespace(c) == "demo")
        #expect(h.server.requests.first?.clientCertificateSerial == [0x20, 0x02])
        // Without the CA the server's certificate is not trusted: the CA file was what made it work.
        let untrusted = try h.client(
            h.kubeconfig(cluster: [], user: ["client-certificate: pki/me.crt", "client-key: pki/me.key"]))
        await #expect { _ = try await namespace(untrusted) } throws: {
            ($0 as? SoError)?.message.contains("TLS handshake failed") == true
        }
    }

    @Test func tlsServerNameIsWhatTheCertificateIsCheckedAgainst() async throws {
        let h = try Harness(tls: try Self.serverTLS(certificate: TestPKI.namedCertificate, key: TestPKI.namedKey))
        h.ok()
        let c = try h.client(
            h.kubeconfig(
                cluster: ["certificate-authority-data: \(b64(TestPKI.ca))", "tls-server-name: api.internal"],
                user: ["token: t"]))
        #expect(try await namespace(c) == "demo")
        #expect(h.server.requests.first?.header("Host") == "127.0.0.1:\(h.port)")
        let without = try h.client(h.kubeconfig(user: ["token: t"]))
        await #expect { _ = try await namespace(without) } throws: {
            ($0 as? SoError)?.message.contains("TLS handshake failed") == true
        }
    }

    @Test func impersonationHeaders() async throws {
        let h = try Harness(tls: nil)
        h.ok()
        let c = try h.client(
            h.kubeconfig(
                server: "http://127.0.0.1:\(h.port)", cluster: [],
                user: [
                    "token: t", "as: jane", "as-uid: \"1234\"", "as-groups: [developers, qa]",
                    "as-user-extra: {scopes: [view, edit], \"acme.com/reason\": [on call]}",
                ]))
        #expect(try await namespace(c) == "demo")
        let r = try #require(h.server.requests.first)
        #expect(r.header("Impersonate-User") == "jane" && r.header("Impersonate-Uid") == "1234")
        #expect(r.headers.filter { $0.0.lowercased() == "impersonate-group" }.map(\.1) == ["developers", "qa"])
        #expect(r.headers.filter { $0.0.lowercased() == "impersonate-extra-scopes" }.map(\.1) == ["view", "edit"])
        #expect(r.header("Impersonate-Extra-acme.com%2Freason") == "on call")
    }

    // MARK: proxies

    @Test func proxyURLGoesThroughAConnectProxyWithItsCredentials() async throws {
        let h = try Harness()
        let proxy = ConnectProxy()
        let proxyPort = try proxy.start()
        defer { proxy.stop() }
        h.ok()
        let c = try h.client(
            h.kubeconfig(
                cluster: [
                    "certificate-authority-data: \(b64(TestPKI.ca))",
                    "proxy-url: http://squid:s%40cret@127.0.0.1:\(proxyPort)",
                ],
                user: ["token: t"]),
            env: ["NO_PROXY": "*"])
        #expect(try await namespace(c) == "demo")
        #expect(proxy.connects == [.init(target: "127.0.0.1:\(h.port)", authorization: "Basic " + b64("squid:s@cret"))])
    }

    @Test func httpsProxyFromTheEnvironmentUnlessNoProxyNamesTheServer() async throws {
        let h = try Harness()
        let proxy = ConnectProxy(hosts: ["kube.test": "127.0.0.1"])
        let proxyPort = try proxy.start()
        defer { proxy.stop() }
        h.ok()
        let text = h.kubeconfig(server: "https://kube.test:\(h.port)", user: ["token: t"])
        let c = try h.client(
            text, env: ["https_proxy": "127.0.0.1:\(proxyPort)", "NO_PROXY": "10.0.0.0/8,.example.com"])
        #expect(try await namespace(c) == "demo")
        #expect(proxy.connects == [.init(target: "kube.test:\(h.port)", authorization: nil)])
        let direct = try h.client(
            text, env: ["HTTPS_PROXY": "http://127.0.0.1:\(proxyPort)", "no_proxy": "example.com,.test"])
        await #expect(throws: SoError.self) { _ = try await namespace(direct) }
        #expect(proxy.connects.count == 1, "NO_PROXY: not through the proxy")
        #expect(throws: SoError.self) { _ = try h.client(text, env: ["HTTPS_PROXY": "https://127.0.0.1:\(proxyPort)"]) }
    }

    @Test func proxyKindsAsyncHTTPClientIsGiven() throws {
        func proxy(_ url: String) throws -> HTTPClient.Configuration.Proxy? {
            try HTTPClusterClient.proxy(
                for: ClusterConnection(contextName: "x", server: "https://k:6443", proxyURL: url), environment: [:])
        }
        #expect(try proxy("socks5://10.0.0.1:1080") == .socksServer(host: "10.0.0.1", port: 1080))
        #expect(try proxy("http://p:3128") == .server(host: "p", port: 3128))
        #expect { _ = try proxy("https://p:443") } throws: {
            ($0 as? SoError)?.message.hasPrefix("the proxy-url of context 'x' names an https:// proxy") == true
        }
        #expect { _ = try proxy("socks5://u:secret@p:1080") } throws: { e in
            guard let e = e as? SoError else { return false }
            return e.message.contains("SOCKS5 proxy with a user and password") && !e.description.contains("secret")
        }
    }

    // MARK: refusals

    @Test func a403NamesWhatWasRefusedAndTheRuleThatWouldAllowIt() async throws {
        let h = try Harness(tls: nil)
        h.server.answer(
            .init(
                status: 403,
                body: """
                    {"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,
                     "message":"deployments.apps \\"web\\" is forbidden: User \\"system:serviceaccount:ci:deployer\\" cannot patch resource \\"deployments\\" \
                    in API group \\"apps\\" in the namespace \\"demo\\"","details":{"name":"web","group":"apps","kind":"deployments"}}
                    """))
        let c = try h.client(h.kubeconfig(server: "http://127.0.0.1:\(h.port)", cluster: [], user: ["token: t"]))
        let web = KubeObject(apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "demo")
        await #expect { _ = try await c.apply(web, fieldManager: "so", force: true) } throws: { e in
            guard let e = e as? SoError else { return false }
            return e.message
                == "cannot apply Deployment demo/web: user 'u' (context 'test'), authenticated as \"system:serviceaccount:ci:deployer\", "
                + "may not patch deployments.apps in namespace demo (Forbidden)"
                && e.hint
                    == "grant: apiGroups: [\"apps\"], resources: [\"deployments\"], verbs: [\"patch\"] (namespace demo)"
        }
        // A 403 whose message says nothing readable: what was asked is known.
        h.server.answer(
            .init(status: 403, body: "{\"kind\":\"Status\",\"reason\":\"Forbidden\",\"message\":\"denied by policy\"}"))
        await #expect { _ = try await c.list(.namespace, namespace: nil, labelSelector: nil) } throws: { e in
            (e as? SoError)?.hint
                == "grant: apiGroups: [\"\"], resources: [\"namespaces\"], verbs: [\"list\"] (cluster-wide: a ClusterRole and ClusterRoleBinding)"
        }
    }

    @Test func inClusterServiceAccountTokenIsReadAgainEachRequest() async throws {
        let h = try Harness()
        h.ok(2)
        try h.t.write("sa/token", "pod-token-1")
        try h.t.write("sa/ca.crt", TestPKI.ca)
        try h.t.write("sa/namespace", "ci\n")
        let env = [
            "KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": String(h.port),
            "SO_SERVICEACCOUNT_DIR": h.t.file("sa"),
            "KUBECONFIG": h.t.file("no-such-kubeconfig"),
        ]
        let conn = try Kubeconfig.resolve(
            explicit: nil, context: nil, environment: env, fs: LocalFileSystem(currentDirectory: h.t.path),
            diagnostics: h.diagnostics)
        #expect(conn.inCluster && conn.namespace == "ci" && conn.server == "https://127.0.0.1:\(h.port)")
        let c = try HTTPClusterClient(conn, effects: h.effects(env))
        h.clients.append(c)
        #expect(try await namespace(c) == "demo")
        try h.t.write("sa/token", "pod-token-2")
        #expect(try await namespace(c) == "demo")
        #expect(
            h.server.requests.map { $0.header("Authorization") ?? "" } == ["Bearer pod-token-1", "Bearer pod-token-2"])
    }
}

func b64(_ s: String) -> String { Data(s.utf8).base64EncodedString() }
