import Foundation
import SoBasics
import SoTestSupport
import Testing

/// Reaching a cluster the way managed clusters and pipelines do, on the real node (`../shared/tools/real-node`):
/// kubeconfigs whose user is an exec plugin, a token file, a CA given by a relative path, `tls-server-name`
/// against an address the server's certificate does not name, `proxy-url` through a real HTTP proxy (tinyproxy);
/// a service account bound to examples/rbac/so-clusterrole.yml running `so up`/`status`/`down`, and the same
/// role with one rule taken away refused with a 403 that names it; `so` itself running in a pod as a Job.
/// Every test makes its own namespaces, ClusterRole and binding (suffixed at random) and removes them.
enum Access {
    static let role = Path.join(RepoPaths.root, "examples/rbac/so-clusterrole.yml")
    /// The relay on the node's address: the API server's certificate names 127.0.0.1, 10.96.0.1 and
    /// kubernetes.default.svc …, not this address.
    static let relay = "https://\(AgentE2E.nodeAddress):6443"

    static func run(_ args: [String], cwd: String? = nil, env: [String: String] = [:]) async throws -> ProcessResult {
        try await AgentE2E.run(args, cwd: cwd, env: env)
    }

    /// Waits for the Job `job` in `namespace` to end: its last 40 log lines, after expecting it succeeded.
    static func jobLogs(_ job: String, namespace: String, timeout: Int) async throws -> ProcessResult {
        _ = try await run([
            "kubectl", "--kubeconfig", E2E.kubeconfig!, "-n", namespace, "wait", "job/\(job)",
            "--for=jsonpath={.status.conditions[0].status}=True", "--timeout=\(timeout)s",
        ])
        let logs = try await E2E.kubectl(["-n", namespace, "logs", "job/\(job)", "--tail", "40"])
        let status = try await E2E.kubectl([
            "-n", namespace, "get", "job", job, "-o", "jsonpath={.status.succeeded}",
        ])
        #expect(status.stdout == "1", "the Job did not succeed:\n\(logs.stdout)\(logs.stderr)")
        return logs
    }

    /// A TCP port nothing listens on at 127.0.0.1 (asked of the kernel through python3, which the kit needs anyway).
    static func freeLoopbackPort() async throws -> Int {
        let r = try await run([
            "python3", "-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])",
        ])
        guard r.exitCode == 0, let port = Int(r.stdout.trimmedWhitespace) else {
            throw SoError("no free port: \(r.stderr)")
        }
        return port
    }

    static func suffix() -> String { String(UInt32.random(in: 0...UInt32.max), radix: 36) }

    /// The admin kubeconfig's server, and its CA, client certificate and key as PEM (kubectl flattens files into data).
    struct Admin {
        var server: String
        var ca: String
        var certificate: String
        var key: String
    }

    static func admin() async throws -> Admin {
        func field(_ path: String, base64: Bool) async throws -> String {
            let r = try await E2E.kubectl([
                "config", "view", "--raw", "--minify", "--flatten", "-o", "jsonpath={\(path)}",
            ])
            guard r.exitCode == 0, !r.stdout.isEmpty else { throw SoError("kubectl config view \(path): \(r.stderr)") }
            guard base64 else { return r.stdout }
            guard let d = Data(base64Encoded: r.stdout) else { throw SoError("\(path) is not base64") }
            return String(decoding: d, as: UTF8.self)
        }
        return Admin(
            server: try await field(".clusters[0].cluster.server", base64: false),
            ca: try await field(".clusters[0].cluster.certificate-authority-data", base64: true),
            certificate: try await field(".users[0].user.client-certificate-data", base64: true),
            key: try await field(".users[0].user.client-key-data", base64: true))
    }

    /// Writes a file only its owner reads (keys, scripts that print credentials).
    static func writePrivate(_ t: TempDir, _ rel: String, _ text: String, executable: Bool = false) throws {
        try t.write(rel, text)
        try FileManager.default.setAttributes(
            [.posixPermissions: executable ? 0o700 : 0o600], ofItemAtPath: t.file(rel))
    }

    /// A kubeconfig of one cluster, user and context; `cluster` and `user` are the entries' YAML lines.
    static func kubeconfig(cluster: [String], user: [String]) -> String {
        """
        apiVersion: v1
        kind: Config
        current-context: e2e
        clusters:
        - name: e2e
          cluster:
        \(cluster.map { "    " + $0 }.joined(separator: "\n"))
        users:
        - name: e2e
          user:
        \(user.map { "    " + $0 }.joined(separator: "\n"))
        contexts:
        - name: e2e
          context: {cluster: e2e, user: e2e}

        """
    }

    /// The exec plugin stanza of a kubeconfig user.
    static func execUser(_ script: String) -> [String] {
        ["exec:", "  apiVersion: client.authentication.k8s.io/v1", "  command: \(script)", "  interactiveMode: Never"]
    }

    /// A stack of one busybox web server with a volume, in laconic's layout under `dir`; returns its path.
    static func tinyStack(in t: TempDir, _ dir: String = "layout") throws -> String {
        try t.write("\(dir)/stacks/tiny/stack.yml", "version: \"1.0\"\nname: tiny\npods: [tiny]\n")
        try t.write(
            "\(dir)/compose/docker-compose-tiny.yml",
            """
            services:
              web:
                image: busybox:1.35
                command: ["sh", "-c", "mkdir -p /www && echo hello-from-tiny > /www/index.html && exec httpd -f -p 8080 -h /www"]
                ports: ["8080"]
                volumes:
                  - data:/data
            volumes:
              data:

            """)
        return t.file("\(dir)/stacks/tiny")
    }

    /// Waits until namespace `ns` is gone (at most `seconds`); whether it is.
    static func namespaceGone(_ ns: String, seconds: Int = 90) async throws -> Bool {
        for _ in 0..<seconds {
            let r = try await E2E.kubectl(["get", "namespace", ns, "--ignore-not-found", "-o", "name"])
            if r.exitCode == 0 && r.stdout.trimmedWhitespace.isEmpty { return true }
            try await Task.sleep(nanoseconds: 1_000_000_000)
        }
        return false
    }
}

/// A namespace holding the service account `so-deployer`, bound to a copy of the example ClusterRole
/// (renamed, optionally without one rule). `remove()` deletes all three.
struct ServiceAccountUnderTest {
    let namespace: String
    let role: String
    let account = "so-deployer"

    /// The example file's rule for Deployments, as written there.
    static let deploymentsRule =
        "  - apiGroups: [apps]\n    resources: [deployments]\n    verbs: [get, list, create, patch, delete]\n"

    static func make(in t: TempDir, removingRule rule: String? = nil) async throws -> ServiceAccountUnderTest {
        let s = Access.suffix()
        let sa = ServiceAccountUnderTest(namespace: "so-e2e-sa-\(s)", role: "so-e2e-role-\(s)")
        let text = try String(contentsOfFile: Access.role, encoding: .utf8)
        // The ClusterRole is the file's first document; the rest is the example's own namespace and binding.
        guard var clusterRole = text.components(separatedBy: "\n---\n").first,
            clusterRole.contains("\n  name: so-deployer\n")
        else {
            throw SoError("\(Access.role) no longer starts with the ClusterRole so-deployer")
        }
        clusterRole = clusterRole.replacingOccurrences(of: "\n  name: so-deployer\n", with: "\n  name: \(sa.role)\n")
        if let rule {
            guard clusterRole.contains(rule) else { throw SoError("\(Access.role) no longer holds the rule \(rule)") }
            clusterRole = clusterRole.replacingOccurrences(of: rule, with: "")
        }
        try t.write(
            "rbac-\(s).yml",
            clusterRole + """

                ---
                apiVersion: v1
                kind: Namespace
                metadata:
                  name: \(sa.namespace)
                ---
                apiVersion: v1
                kind: ServiceAccount
                metadata:
                  name: \(sa.account)
                  namespace: \(sa.namespace)
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRoleBinding
                metadata:
                  name: \(sa.role)
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: \(sa.role)}
                subjects:
                  - {kind: ServiceAccount, name: \(sa.account), namespace: \(sa.namespace)}

                """)
        let r = try await E2E.kubectl(["apply", "-f", t.file("rbac-\(s).yml")])
        guard r.exitCode == 0 else {
            await sa.remove()
            throw SoError("applying the role: \(r.stderr)")
        }
        return sa
    }

    /// A script printing an ExecCredential whose token `kubectl create token` makes for the account each time
    /// it runs (the token is never written to disk).
    func tokenPlugin(in t: TempDir) throws -> String {
        let script = "token-plugin-\(namespace).sh"
        try Access.writePrivate(
            t, script,
            """
            #!/bin/sh
            set -e
            token=$(kubectl --kubeconfig '\(E2E.kubeconfig!)' -n \(namespace) create token \(account) --duration 10m)
            echo run >> '\(t.file("token-plugin-runs"))'
            printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}\\n' "$token"

            """, executable: true)
        return t.file(script)
    }

    func remove() async {
        _ = try? await E2E.kubectl(["delete", "clusterrolebinding", role, "--ignore-not-found", "--wait=false"])
        _ = try? await E2E.kubectl(["delete", "clusterrole", role, "--ignore-not-found", "--wait=false"])
        _ = try? await E2E.kubectl(["delete", "namespace", namespace, "--ignore-not-found", "--wait=false"])
    }

    /// Runs `body`, then removes the account, its role and `alsoNamespaces` whether it passed or threw.
    func removing(alsoNamespaces: [String] = [], _ body: () async throws -> Void) async throws {
        func cleanup() async {
            for ns in alsoNamespaces {
                _ = try? await E2E.kubectl(["delete", "namespace", ns, "--ignore-not-found", "--wait=false"])
            }
            await remove()
        }
        do { try await body() } catch {
            await cleanup()
            throw error
        }
        await cleanup()
    }
}

@Suite(
    .serialized,
    RealNode.required,
    .timeLimit(.minutes(10)))
struct ClusterAccessE2ETests {
    /// An exec plugin that prints the kit's admin client certificate and key (an ExecCredential with
    /// clientCertificateData): `so` runs it and talks to the API server with that certificate.
    @Test func anExecPluginGivingAClientCertificate() async throws {
        let t = try TempDir("so-e2e-exec-cert")
        defer { t.cleanup() }
        let admin = try await Access.admin()
        try Access.writePrivate(t, "client.crt", admin.certificate)
        try Access.writePrivate(t, "client.key", admin.key)
        try Access.writePrivate(
            t, "cert-plugin.sh",
            """
            #!/bin/sh
            echo run >> '\(t.file("cert-plugin-runs"))'
            exec python3 -c 'import json; print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {
                "clientCertificateData": open("\(t.file("client.crt"))").read(), "clientKeyData": open("\(t.file("client.key"))").read()}}))'

            """, executable: true)
        try t.write(
            "kubeconfig",
            Access.kubeconfig(
                cluster: [
                    "server: \(admin.server)",
                    "certificate-authority-data: \(Data(admin.ca.utf8).base64EncodedString())",
                ],
                user: Access.execUser(t.file("cert-plugin.sh"))))
        let r = try await E2E.so(["deployment", "list", "--kubeconfig", t.file("kubeconfig")], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.hasPrefix("NAME") || r.stdout.contains("no so deployments on this cluster"), "\(r.stdout)")
        #expect((try? t.read("cert-plugin-runs")) != nil, "the plugin never ran")
        #expect(!r.stdout.contains("PRIVATE KEY") && !r.stderr.contains("PRIVATE KEY"))
    }

    /// A service account bound to the example ClusterRole, reached through an exec plugin printing a token from
    /// `kubectl create token`, runs a stack through its whole life: up, status, list, logs, exec, down; nothing is left.
    @Test func theExampleClusterRoleIsEnoughForUpStatusDown() async throws {
        let t = try TempDir("so-e2e-rbac")
        defer { t.cleanup() }
        let admin = try await Access.admin()
        let sa = try await ServiceAccountUnderTest.make(in: t)
        let ws = "so-e2e-rbac-\(Access.suffix())"
        try await sa.removing(alsoNamespaces: [ws]) {
            try t.write(
                "kubeconfig",
                Access.kubeconfig(
                    cluster: [
                        "server: \(admin.server)",
                        "certificate-authority-data: \(Data(admin.ca.utf8).base64EncodedString())",
                    ],
                    user: Access.execUser(try sa.tokenPlugin(in: t))))
            let kc = ["--kubeconfig", t.file("kubeconfig")]
            let env = ["SO_HOME": t.file("home")]
            let stack = try Access.tinyStack(in: t)
            var r = try await E2E.so(["up", stack, "--name", ws, "--timeout", "150"] + kc, cwd: t.path, env: env)
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            #expect(!r.stderr.contains("Forbidden"), "\(r.stderr)")
            r = try await E2E.so(["deployment", "--name", ws, "status"] + kc, cwd: t.path, env: env)
            #expect(r.exitCode == 0 && r.stdout.contains("ready"), "\(r.stdout)\n\(r.stderr)")
            r = try await E2E.so(["deployment", "list"] + kc, cwd: t.path, env: env)
            #expect(r.exitCode == 0 && r.stdout.contains(ws), "\(r.stdout)\n\(r.stderr)")
            r = try await E2E.so(["deployment", "--name", ws, "logs", "--tail", "5"] + kc, cwd: t.path, env: env)
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            // kubectl exec with the same kubeconfig (the plugin runs for kubectl too): pods/exec is in the role.
            r = try await E2E.so(
                ["deployment", "--name", ws] + kc + ["exec", "web", "--", "cat", "/www/index.html"], cwd: t.path,
                env: env)
            #expect(r.exitCode == 0 && r.stdout.contains("hello-from-tiny"), "\(r.stdout)\n\(r.stderr)")
            r = try await E2E.so(["down", ws] + kc, cwd: t.path, env: env)
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            #expect(try await Access.namespaceGone(ws), "namespace \(ws) is still there after down")
            #expect(!FileManager.default.fileExists(atPath: t.file("home/deployments/\(ws)")))
            #expect((try? t.read("token-plugin-runs")) != nil, "the plugin never ran")
        }
    }

    /// The same role without its rule for Deployments: `so up` stops at the first refused request, and the 403
    /// names the verb, the resource and the namespace, with the rule to add as the hint.
    @Test func aRoleMissingOneRuleIsNamedByThe403() async throws {
        let t = try TempDir("so-e2e-rbac-403")
        defer { t.cleanup() }
        let admin = try await Access.admin()
        let sa = try await ServiceAccountUnderTest.make(in: t, removingRule: ServiceAccountUnderTest.deploymentsRule)
        let ws = "so-e2e-403-\(Access.suffix())"
        try await sa.removing(alsoNamespaces: [ws]) {
            try t.write(
                "kubeconfig",
                Access.kubeconfig(
                    cluster: [
                        "server: \(admin.server)",
                        "certificate-authority-data: \(Data(admin.ca.utf8).base64EncodedString())",
                    ],
                    user: Access.execUser(try sa.tokenPlugin(in: t))))
            let stack = try Access.tinyStack(in: t)
            let r = try await E2E.so(
                ["up", stack, "--name", ws, "--timeout", "60", "--kubeconfig", t.file("kubeconfig")], cwd: t.path,
                env: ["SO_HOME": t.file("home")])
            #expect(r.exitCode == 1, "\(r.stdout)\n\(r.stderr)")
            let error = r.stderr.split(separator: "\n").first { $0.hasPrefix("error:") }.map(String.init) ?? ""
            #expect(
                error.contains("authenticated as \"system:serviceaccount:\(sa.namespace):\(sa.account)\""),
                "\(r.stderr)")
            #expect(error.contains("deployments.apps in namespace \(ws) (Forbidden)"), "\(r.stderr)")
            #expect(
                error.range(of: #"may not (list|get|patch|create) deployments\.apps"#, options: .regularExpression)
                    != nil, "\(r.stderr)")
            let hint = r.stderr.split(separator: "\n").first { $0.hasPrefix("hint:") }.map(String.init) ?? ""
            #expect(hint.contains("apps") && hint.contains("deployments"), "\(r.stderr)")
            #expect(!r.stderr.contains("eyJ"), "a token reached the output")
        }
    }

    /// `tokenFile` (re-read by `so`), the CA as a path relative to the kubeconfig, and `tls-server-name`: the
    /// server is the node's relay address, which the API server's certificate does not name; with
    /// tls-server-name kubernetes.default.svc the handshake succeeds, with a name not in it, or none, it fails.
    @Test func aTokenFileARelativeCAAndTLSServerName() async throws {
        let t = try TempDir("so-e2e-token-file")
        defer { t.cleanup() }
        let admin = try await Access.admin()
        let sa = try await ServiceAccountUnderTest.make(in: t)
        try await sa.removing {
            let token = try await E2E.kubectl(["-n", sa.namespace, "create", "token", sa.account, "--duration", "10m"])
            guard token.exitCode == 0 else {
                Issue.record("create token: \(token.stderr)")
                return
            }
            try Access.writePrivate(t, "config/token", token.stdout.trimmedWhitespace)
            try t.write("config/pki/ca.crt", admin.ca)
            func config(_ serverName: String?) -> String {
                let name = serverName.map { ["tls-server-name: \($0)"] } ?? []
                return Access.kubeconfig(
                    cluster: ["server: \(Access.relay)", "certificate-authority: pki/ca.crt"] + name,
                    user: ["tokenFile: token"])
            }
            try t.write("config/kubeconfig", config("kubernetes.default.svc"))
            var r = try await E2E.so(["deployment", "list", "--kubeconfig", t.file("config/kubeconfig")], cwd: t.path)
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            #expect(
                !r.stdout.contains(token.stdout.trimmedWhitespace) && !r.stderr.contains(token.stdout.trimmedWhitespace)
            )

            for name in ["not-in-the-certificate.invalid", nil] {
                try t.write("config/kubeconfig", config(name))
                r = try await E2E.so(["deployment", "list", "--kubeconfig", t.file("config/kubeconfig")], cwd: t.path)
                #expect(r.exitCode != 0, "tls-server-name \(name ?? "(none)") was accepted: \(r.stdout)")
                #expect(r.stderr.contains(AgentE2E.nodeAddress), "\(r.stderr)")
            }
        }
    }

    /// `proxy-url`: the API server is reached through tinyproxy (started here on a loopback port with its own
    /// config), whose log shows the CONNECT to the API server's port.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tinyproxy"),
            "tinyproxy is not installed (apt-get install tinyproxy; .ci/run installs it)"))
    func proxyURLThroughARealHTTPProxy() async throws {
        let t = try TempDir("so-e2e-proxy")
        defer { t.cleanup() }
        let admin = try await Access.admin()
        let port = try await Access.freeLoopbackPort()
        try t.write(
            "tinyproxy.conf",
            """
            Port \(port)
            Listen 127.0.0.1
            Timeout 60
            MaxClients 20
            Allow 127.0.0.1
            ConnectPort 6443
            LogFile "\(t.file("tinyproxy.log"))"
            LogLevel Info
            PidFile "\(t.file("tinyproxy.pid"))"

            """)
        let proxy = Process()
        proxy.executableURL = URL(fileURLWithPath: "/usr/bin/tinyproxy")
        proxy.arguments = ["-d", "-c", t.file("tinyproxy.conf")]
        proxy.standardOutput = FileHandle.nullDevice
        proxy.standardError = FileHandle.nullDevice
        try proxy.run()
        defer { AgentE2E.stop(proxy) }
        var listening = false
        for _ in 0..<50 where !listening {
            listening = (try? await Access.run(["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/\(port)"]).exitCode) == 0
            if !listening { try await Task.sleep(nanoseconds: 100_000_000) }
        }
        #expect(listening, "tinyproxy did not start: \((try? t.read("tinyproxy.log")) ?? "")")
        try Access.writePrivate(
            t, "kubeconfig",
            Access.kubeconfig(
                cluster: [
                    "server: \(admin.server)",
                    "certificate-authority-data: \(Data(admin.ca.utf8).base64EncodedString())",
                    "proxy-url: http://127.0.0.1:\(port)",
                ],
                user: [
                    "client-certificate-data: \(Data(admin.certificate.utf8).base64EncodedString())",
                    "client-key-data: \(Data(admin.key.utf8).base64EncodedString())",
                ]))
        // proxy-url wins over the environment's proxies, as in kubectl: NO_PROXY naming the server changes nothing.
        let r = try await E2E.so(
            ["deployment", "list", "--kubeconfig", t.file("kubeconfig")], cwd: t.path,
            env: ["NO_PROXY": "127.0.0.1,localhost"])
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        let log = (try? t.read("tinyproxy.log")) ?? ""
        let connect = URL(string: admin.server).map { "CONNECT \($0.host ?? ""):\($0.port ?? 443)" } ?? "CONNECT"
        #expect(log.contains(connect), "tinyproxy's log has no \(connect):\n\(log)")
    }

    /// `so` in a pod: a Job whose service account is bound to the example ClusterRole runs `so up` of a stack,
    /// `status` and `so down` with the in-cluster configuration (no kubeconfig), and completes; nothing is left.
    /// It also stops and starts again a workspace this host made: the pod has no directory of it, so each verb
    /// makes one from the deployment's record in the cluster.
    ///
    /// The image is the release image of container-build/so when `SO_E2E_SO_IMAGE` names it (`.ci/run` builds it
    /// with container-build/so/build.sh and the kit's buildah where the real node runs). Otherwise it is a test
    /// image: so-agent-workspace:local plus this build's debug `so` with the Swift runtime libraries it links
    /// (from ldd), kubectl and the built-in stacks, and the test says which one ran. The Job writes its small
    /// stack itself, so the same script runs in either image.
    @Test func aJobRunsSoInClusterWithTheExampleRole() async throws {
        let t = try TempDir("so-e2e-job")
        defer { t.cleanup() }
        let image = try await SoImage.image(in: t)
        let sa = try await ServiceAccountUnderTest.make(in: t)
        let ws = "so-e2e-job-\(Access.suffix())"
        let hostMade = "so-e2e-host-\(Access.suffix())"
        let hostEnv = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home")]
        try await sa.removing(alsoNamespaces: [ws, hostMade]) {
            var made = try await E2E.so(
                ["up", try Access.tinyStack(in: t), "--name", hostMade, "--timeout", "150"], cwd: t.path, env: hostEnv)
            #expect(made.exitCode == 0, "\(made.stdout)\n\(made.stderr)")
            try t.write(
                "job.yml",
                """
                apiVersion: batch/v1
                kind: Job
                metadata:
                  name: so
                  namespace: \(sa.namespace)
                spec:
                  backoffLimit: 0
                  activeDeadlineSeconds: 300
                  template:
                    spec:
                      serviceAccountName: \(sa.account)
                      restartPolicy: Never
                      containers:
                        - name: so
                          image: \(image)
                          imagePullPolicy: IfNotPresent
                          command: ["sh", "-ec"]
                          args:
                            - |
                              mkdir -p "$HOME/tiny/stacks/tiny" "$HOME/tiny/compose"
                              printf '%s\\n' 'version: "1.0"' 'name: tiny' 'pods: [tiny]' > "$HOME/tiny/stacks/tiny/stack.yml"
                              printf '%s\\n' 'services:' '  web:' '    image: busybox:1.35' \\
                                '    command: ["sh", "-c", "mkdir -p /www && echo tiny > /www/index.html && exec httpd -f -p 8080 -h /www"]' \\
                                '    ports: ["8080"]' > "$HOME/tiny/compose/docker-compose-tiny.yml"
                              so version
                              so up "$HOME/tiny/stacks/tiny" --name \(ws) --timeout 150
                              so deployment --name \(ws) status
                              so down \(ws)
                              so deployment --name \(hostMade) stop
                              so deployment --name \(hostMade) start --timeout 150
                              so deployment --name \(hostMade) status
                              echo so-job-done

                """)
            let r = try await E2E.kubectl(["apply", "-f", t.file("job.yml")])
            #expect(r.exitCode == 0, "\(r.stderr)")
            let logs = try await Access.jobLogs("so", namespace: sa.namespace, timeout: 290)
            #expect(
                logs.stdout.contains("using the pod's service account") || logs.stdout.contains("ready"),
                "\(logs.stdout)")
            #expect(logs.stdout.contains("so-job-done"), "\(logs.stdout)")
            #expect(try await Access.namespaceGone(ws), "namespace \(ws) is still there after the Job's so down")
            // The host's workspace, stopped and started again by the pod, answers; the host removes it.
            made = try await E2E.so(
                ["deployment", "--name", hostMade, "exec", "web", "--", "cat", "/www/index.html"], cwd: t.path,
                env: hostEnv)
            #expect(made.exitCode == 0 && made.stdout.contains("hello-from-tiny"), "\(made.stdout)\n\(made.stderr)")
            made = try await E2E.so(["down", hostMade, "--discard"], cwd: t.path, env: hostEnv)
            #expect(made.exitCode == 0, "\(made.stderr)")
        }
    }

    /// The example CronJob (examples/k8s-job/so-idle-cronjob.yml) as written, with this test's image and account:
    /// run once, its `so cleanup --idle` stops an idle workspace from inside the cluster, with the example role.
    @Test func theIdleCronJobExampleStopsAnIdleWorkspaceInCluster() async throws {
        let t = try TempDir("so-e2e-idle-cron")
        defer { t.cleanup() }
        let image = try await SoImage.image(in: t)
        let sa = try await ServiceAccountUnderTest.make(in: t)
        let ws = "so-e2e-idle-\(Access.suffix())"
        let env = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home")]
        try await IdleCleanupTurn.exclusive {
            try await sa.removing(alsoNamespaces: [ws]) {
                var r = try await E2E.so(
                    [
                        "up", try AgentE2E.lightStack(in: t), "--name", ws, "--idle", "2s", "--timeout", "180",
                        "--progress", "plain",
                    ],
                    cwd: t.path, env: env)
                #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
                var cron = try String(
                    contentsOfFile: Path.join(RepoPaths.root, "examples/k8s-job/so-idle-cronjob.yml"), encoding: .utf8)
                for (from, to) in [
                    (
                        "image: registry.example.org/so:1.0",
                        "image: \(image)\n              imagePullPolicy: IfNotPresent"
                    ),
                    ("serviceAccountName: so-deployer", "serviceAccountName: \(sa.account)"),
                    ("namespace: so-ci", "namespace: \(sa.namespace)"),
                ] {
                    guard cron.contains(from) else { throw SoError("the example no longer says \(from)") }
                    cron = cron.replacingOccurrences(of: from, with: to)
                }
                try t.write("cron.yml", cron)
                r = try await E2E.kubectl(["apply", "-f", t.file("cron.yml")])
                #expect(r.exitCode == 0, "\(r.stderr)")
                try await Task.sleep(for: .seconds(3))
                // Run as the CronJob runs it; again (its next turn) while it sees nothing to stop: it lists the
                // Deployments from the API server's cache, which under a full e2e run lagged seconds behind the
                // workspace's start, and a workspace it does not see running is not stopped.
                var logs = ProcessResult(exitCode: 1)
                for turn in 1...3 {
                    r = try await E2E.kubectl([
                        "-n", sa.namespace, "create", "job", "--from=cronjob/so-idle-cleanup", "now-\(turn)",
                    ])
                    #expect(r.exitCode == 0, "\(r.stderr)")
                    logs = try await Access.jobLogs("now-\(turn)", namespace: sa.namespace, timeout: 200)
                    guard logs.stdout.contains("no idle workspace to stop") else { break }
                }
                #expect(logs.stdout.contains("stopping \(ws) (namespace \(ws), unused for"), "\(logs.stdout)")
                let left = try await E2E.kubectl(["-n", ws, "get", "deployments", "-o", "name"])
                #expect(left.exitCode == 0 && left.stdout.isEmpty, "\(left.stdout)")
                r = try await E2E.so(["down", ws, "--discard"], cwd: t.path, env: env)
                #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            }
        }
    }
}

/// The test image of `aJobRunsSoInClusterWithTheExampleRole` (see there).
enum SoImage {
    /// The test image is built once per test run, whichever suite asks first (each build is a minute of CPU).
    actor Built {
        static let shared = Built()
        var done: Task<Void, Error>?
        func once(_ build: @escaping @Sendable () async throws -> Void) async throws {
            if done == nil { done = Task { try await build() } }
            try await done?.value
        }
    }

    /// The image the Job runs: `SO_E2E_SO_IMAGE` (loaded into the node here), else the test image built now.
    static func image(in t: TempDir) async throws -> String {
        if let release = ProcessInfo.processInfo.environment["SO_E2E_SO_IMAGE"], !release.isEmpty {
            let r = try await Access.run([Path.join(AgentE2E.kit, "load-image.sh"), release])
            guard r.exitCode == 0 else { throw SoError("loading \(release): \(r.stderr)") }
            print("so in-cluster Job: the release image \(release) (container-build/so)")
            return release
        }
        let image = "localhost/so-cli:e2e"
        try await Built.shared.once { try await build(image, in: t) }
        print(
            "so in-cluster Job: a test image (debug so on so-agent-workspace:local); SO_E2E_SO_IMAGE names the release image"
        )
        return image
    }

    static func build(_ image: String, in t: TempDir) async throws {
        let ctx = t.file("so-image")
        let fm = FileManager.default
        try fm.createDirectory(atPath: Path.join(ctx, "so/bin"), withIntermediateDirectories: true)
        try fm.createDirectory(atPath: Path.join(ctx, "so/lib"), withIntermediateDirectories: true)
        try fm.copyItem(atPath: E2E.binary, toPath: Path.join(ctx, "so/bin/so"))
        // The Swift runtime the debug build links dynamically (libc, libstdc++, zlib come with the base image).
        let ldd = try await Access.run(["ldd", E2E.binary])
        guard ldd.exitCode == 0 else { throw SoError("ldd \(E2E.binary): \(ldd.stderr)") }
        for line in ldd.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count >= 3, parts[1] == "=>", parts[2].hasPrefix("/"), !parts[2].hasPrefix("/lib"),
                !parts[2].hasPrefix("/usr/lib/")
            else {
                continue
            }
            let lib = String(parts[2])
            try fm.copyItem(
                atPath: fm.destinationOfSymbolicLinkOrSelf(lib), toPath: Path.join(ctx, "so/lib", Path.basename(lib)))
        }
        for d in ["stacks", "compose", "compose-jobs", "config"] {
            try fm.copyItem(atPath: Path.join(RepoPaths.root, d), toPath: Path.join(ctx, "so/share/so", d))
        }
        let kubectl = try await Access.run(["sh", "-c", "readlink -f \"$(command -v kubectl)\""])
        try fm.copyItem(atPath: kubectl.stdout.trimmedWhitespace, toPath: Path.join(ctx, "kubectl"))
        try t.write(
            "so-image/Containerfile",
            """
            FROM so-agent-workspace:local
            COPY so /opt/so
            COPY kubectl /usr/local/bin/kubectl
            ENV PATH=/opt/so/bin:/usr/local/bin:/usr/bin:/bin LD_LIBRARY_PATH=/opt/so/lib SO_ROOT=/opt/so/share/so
            USER 1000:1000
            WORKDIR /home/node

            """)
        try await AgentE2E.buildAndLoad(image, context: ctx)
    }
}

extension FileManager {
    /// The file a symlink (chain) points at, or `path` itself.
    func destinationOfSymbolicLinkOrSelf(_ path: String) -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }
}
