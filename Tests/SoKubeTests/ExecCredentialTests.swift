import Foundation
import SoBasics
import SoKube
import SoSystem
import SoTestSupport
import Testing

/// Exec credential plugins against a fake process runner and clock: interactivity, what the plugin is
/// given and what it must print, the cache, and the credentials a connection sends.
@Suite struct ExecCredentialTests {
    let v1 = "client.authentication.k8s.io/v1"
    let connection = ClusterConnection(
        contextName: "prod", server: "https://k:6443", userName: "ci", source: "/home/ci/.kube/config")

    func effects(
        _ p: FakeProcessRunner, env: [String: String] = [:], terminal: Bool = false, clock: FixedClock = FixedClock()
    ) -> CredentialEffects {
        CredentialEffects(
            processes: p, fs: LocalFileSystem(), environment: env, stdinIsTerminal: terminal, clock: clock,
            execCache: ExecCredentialCache())
    }

    func printed(_ status: String, apiVersion: String? = nil) -> String {
        #"{"apiVersion":"\#(apiVersion ?? v1)","kind":"ExecCredential","status":\#(status)}"#
    }

    func info(_ p: FakeProcessRunner, _ i: Int = 0) throws -> JSON {
        try JSON.parse(Data(((p.environments[i] ?? [:])["KUBERNETES_EXEC_INFO"] ?? "").utf8))
    }

    @Test func interactiveOnlyWithATerminalOutsideCI() async throws {
        for (mode, terminal, env, interactive) in [
            (ExecPlugin.InteractiveMode.ifAvailable, true, [String: String](), true),
            (.ifAvailable, false, [:], false), (.ifAvailable, true, ["CI": "true"], false),
            (.never, true, [:], false), (.always, true, [:], true),
        ] {
            let p = FakeProcessRunner()
            p.expect(["login"], stdout: printed(#"{"token":"t"}"#))
            let plugin = ExecPlugin(command: "login", interactiveMode: mode)
            _ = try await ExecPlugins.run(plugin, for: connection, effects: effects(p, env: env, terminal: terminal))
            #expect(try info(p).at("spec", "interactive")?.bool == interactive, "\(mode) terminal=\(terminal) \(env)")
            #expect(p.prompting.isEmpty == !interactive, "a prompting plugin gets the terminal's stdin")
        }
        for (terminal, env, why) in [
            (false, [String: String](), "standard input is not one"), (true, ["CI": "1"], "CI is set"),
        ] {
            let p = FakeProcessRunner()
            await #expect {
                _ = try await ExecPlugins.run(
                    ExecPlugin(command: "login", interactiveMode: .always), for: connection,
                    effects: effects(p, env: env, terminal: terminal))
            } throws: { e in
                (e as? SoError)?.message
                    == "exec credential plugin 'login' of user 'ci' (context 'prod') needs a terminal (interactiveMode: Always), and \(why)"
            }
            #expect(p.calls.isEmpty)
        }
    }

    @Test func thePluginGetsTheEnvironmentAndClusterInfo() async throws {
        let p = FakeProcessRunner()
        p.expect(["/opt/bin/login", "--x"], stdout: printed(#"{"token":"t"}"#))
        var conn = connection
        conn.caPEM = Data("CA".utf8)
        conn.proxyURL = "http://p:1"
        let plugin = ExecPlugin(
            command: "/opt/bin/login", args: ["--x"],
            env: [.init(name: "HOME", value: "/elsewhere"), .init(name: "A", value: "b")],
            provideClusterInfo: true, clusterConfig: #"{"b":[1,"x"],"a":null}"#)
        _ = try await ExecPlugins.run(
            plugin, for: conn, effects: effects(p, env: ["HOME": "/home/ci", "PATH": "/bin"]))
        let env = try #require(p.environments[0])
        #expect(env["HOME"] == "/elsewhere" && env["A"] == "b" && env["PATH"] == "/bin")
        #expect(
            env["KUBERNETES_EXEC_INFO"] == #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","#
                + #""spec":{"cluster":{"server":"https://k:6443","#
                + #""certificate-authority-data":"Q0E=","proxy-url":"http://p:1","config":{"a":null,"b":[1,"x"]}},"interactive":false}}"#
        )
    }

    @Test func whatThePluginPrintsIsChecked() throws {
        let plugin = ExecPlugin(apiVersion: v1, command: "p")
        func parse(_ s: String) throws -> ExecCredential { try ExecPlugins.parse(s, plugin: plugin, name: "plugin") }
        #expect(
            try parse(printed(#"{"token":"s3cr3t","expirationTimestamp":"2026-01-02T03:04:05Z"}"#))
                == ExecCredential(token: "s3cr3t", expiry: Timestamps.parse("2026-01-02T03:04:05Z")))
        #expect(
            try parse(printed(#"{"clientCertificateData":"C","clientKeyData":"K"}"#))
                == ExecCredential(clientCertificatePEM: Data("C".utf8), clientKeyPEM: Data("K".utf8)))
        let bad: [(String, String)] = [
            ("not json s3cr3t", "not a JSON object"),
            (
                printed(#"{"token":"s3cr3t"}"#, apiVersion: "client.authentication.k8s.io/v1beta1"),
                "apiVersion 'client.authentication.k8s.io/v1beta1'"
            ),
            (#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"}"#, "without a status"),
            (printed(#"{"clientCertificateData":"s3cr3t"}"#), "only one of clientCertificateData and clientKeyData"),
            (printed(#"{}"#), "neither a token nor a client certificate"),
            (printed(#"{"token":"s3cr3t","expirationTimestamp":"tomorrow"}"#), "not an RFC 3339 time"),
        ]
        for (text, says) in bad {
            #expect { _ = try parse(text) } throws: { e in
                guard let e = e as? SoError else { return false }
                return e.message.contains(says) && !e.description.contains("s3cr3t")
            }
        }
    }

    @Test func theCacheRunsOncePerCredentialAndAgainWhenRefusedOrExpired() async throws {
        let p = FakeProcessRunner()
        let clock = FixedClock()
        let fx = effects(p, clock: clock)
        let plugin = ExecPlugin(command: "tok")
        p.expect(
            ["tok"],
            stdout: printed(
                #"{"token":"a","expirationTimestamp":"\#(Timestamps.rfc3339(clock.now().addingTimeInterval(30)))"}"#))
        p.expect(["tok"], stdout: printed(#"{"token":"b"}"#))
        p.expect(["tok"], stdout: printed(#"{"token":"c"}"#))
        // Concurrent first requests run the plugin once.
        async let one = fx.execCache.credential(plugin, for: connection, effects: fx)
        async let two = fx.execCache.credential(plugin, for: connection, effects: fx)
        let (x, y) = try await (one, two)
        #expect(x.token == "a" && y.token == "a" && p.calls.count == 1)
        try await clock.sleep(seconds: 30)
        let b = try await fx.execCache.credential(plugin, for: connection, effects: fx)
        #expect(b.token == "b" && p.calls.count == 2, "expired at its expirationTimestamp")
        #expect(try await fx.execCache.credential(plugin, for: connection, effects: fx).token == "b", "no expiry: kept")
        // Refused: run again; a caller still holding the refused one gets the new one without another run.
        #expect(try await fx.execCache.credential(plugin, for: connection, effects: fx, replacing: b).token == "c")
        #expect(try await fx.execCache.credential(plugin, for: connection, effects: fx, replacing: b).token == "c")
        #expect(p.calls.count == 3 && p.pending.isEmpty)
    }

    @Test func aMissingPluginOrAFailedOneIsNamed() async throws {
        let p = FakeProcessRunner()
        p.missing = ["kubelogin"]
        await #expect {
            _ = try await ExecPlugins.run(
                ExecPlugin(command: "kubelogin", installHint: "  go install\n  kubelogin@latest  "),
                for: connection, effects: effects(p))
        } throws: { e in
            guard let e = e as? SoError else { return false }
            return e.message
                == "exec credential plugin 'kubelogin' of user 'ci' (context 'prod') is not installed: kubelogin is not on PATH"
                && e.hint == "go install kubelogin@latest"
        }
        await #expect {
            _ = try await ExecPlugins.run(ExecPlugin(command: "kubelogin"), for: connection, effects: effects(p))
        } throws: { e in
            (e as? SoError)?.hint == "install kubelogin, or fix users[].user.exec.command in /home/ci/.kube/config"
        }
        let q = FakeProcessRunner()
        q.expect(["login"], exitCode: 3)
        await #expect {
            _ = try await ExecPlugins.run(ExecPlugin(command: "login"), for: connection, effects: effects(q))
        } throws: { e in
            (e as? SoError)?.message
                == "exec credential plugin 'login' of user 'ci' (context 'prod') failed with exit code 3"
        }
    }

    @Test func credentialSourceReadsTheTokenFileEachTimeAndAgainAfterA401() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        try t.write("token", "one\n")
        var conn = connection
        conn.tokenFile = t.file("token")
        let source = CredentialSource(conn, effects: effects(FakeProcessRunner()))
        let first = try await source.current()
        #expect(first.authorization == "Bearer one")
        #expect(try await source.afterUnauthorized(first) == nil, "unchanged: no point trying again")
        try t.write("token", "two")
        #expect(try await source.afterUnauthorized(first)?.authorization == "Bearer two")
        try LocalFileSystem().remove(t.file("token"))
        await #expect { _ = try await source.current() } throws: {
            ($0 as? SoError)?.message.hasPrefix("cannot read the token file of user 'ci' (context 'prod')") == true
        }
        conn.token = "static"
        #expect(
            try await CredentialSource(conn, effects: effects(FakeProcessRunner())).current().bearerToken == "static",
            "client-go: the static token is the fallback")
        let basic = CredentialSource(
            ClusterConnection(contextName: "x", server: "s", basicAuth: BasicAuth(username: "a", password: "b")),
            effects: effects(FakeProcessRunner()))
        #expect(try await basic.current().authorization == "Basic YTpi")
        #expect(try await basic.afterUnauthorized(basic.current()) == nil)
    }
}
