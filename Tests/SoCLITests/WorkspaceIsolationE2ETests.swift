import Foundation
import SoBasics
import SoTestSupport
import Testing

/// Isolation proven where NetworkPolicy is enforced: the real-node kit running kube-network-policies
/// (`$K8S_BIN/kube-network-policies`; `.ci/run` sets SO_E2E_NETPOL=1 when the enforcer runs). Without an
/// enforcer policies are inert and nothing here could fail, so the suite says it is skipped.
enum Isolation {
    static let enabled = RealNode.enabled && ProcessInfo.processInfo.environment["SO_E2E_NETPOL"] == "1"
    /// The two-node tier (`SO_E2E_NODES=2`, the enforcer on both nodes): the workspaces must be on two nodes.
    static let twoNodes = ProcessInfo.processInfo.environment["SO_E2E_NODES"] == "2"

    /// On two nodes, the workspaces' agent pods run on different ones (a workspace prefers a node without its
    /// stack's others), so what is isolated is isolated across nodes.
    static func expectOnTwoNodes(_ workspaces: [String], _ so: ([String]) async throws -> ProcessResult) async throws {
        guard twoNodes else { return }
        var nodes: [String: String] = [:]
        for ws in workspaces {
            let r = try await so(["deployment", "--name", ws, "status", "-o", "json"])
            let status = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
            let pods = status?["pods"] as? [[String: Any]] ?? []
            nodes[ws] = pods.first { ($0["name"] as? String ?? "").contains("agent") }?["node"] as? String
        }
        #expect(Set(nodes.values).count == workspaces.count, "the workspaces' nodes: \(nodes)")
    }
    static let postgresImage = "docker.io/library/postgres:17-alpine"

    /// A stand-in for postgres:17-alpine (no registry here): busybox answering HTTP on 5432, and a
    /// `pg_isready` that asks it. Built with the kit's buildah, loaded into the node.
    static func buildPostgres(in t: TempDir) async throws {
        // -Y off: busybox wget does not read no_proxy, and so gives every container of the workspace HTTP_PROXY.
        try t.write("pg/pg_isready", "#!/bin/sh\nexec wget -Y off -q -O /dev/null http://127.0.0.1:5432/\n")
        try t.write(
            "pg/Containerfile",
            """
            FROM busybox:1.35
            COPY --chmod=755 pg_isready /usr/local/bin/pg_isready
            CMD ["sh", "-c", "mkdir -p /tmp/www && echo postgres-stand-in > /tmp/www/index.html && exec httpd -f -p 5432 -h /tmp/www"]

            """)
        try await AgentE2E.buildAndLoad(postgresImage, context: t.file("pg"))
    }

    /// An HTTP server on the node's address on a port no policy allows, answering `token` (its own: a control that
    /// gets any other answer did not reach it). The port is one the kernel found free, told through a file once the
    /// server listens: a port drawn from 18000-18899 met Traefik's entry point on all addresses (18080, hostNetwork),
    /// the server's bind failed unseen, and the control curl got Traefik's 404.
    static func serveForbidden(in t: TempDir) throws -> (Process, port: Int, token: String) {
        let token = "forbidden-\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
        try t.write("forbidden/index.html", token + "\n")
        let portFile = t.file("forbidden-port")
        try t.write(
            "forbidden.py",
            """
            import functools, http.server, os, sys
            handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[2])
            srv = http.server.HTTPServer((sys.argv[1], 0), handler)
            with open(sys.argv[3] + '.part', 'w') as f:
                f.write(str(srv.server_address[1]))
            os.rename(sys.argv[3] + '.part', sys.argv[3])
            srv.serve_forever()

            """)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", t.file("forbidden.py"), AgentE2E.nodeAddress, t.file("forbidden"), portFile]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        for _ in 0..<400 {
            if let port = try? String(contentsOfFile: portFile, encoding: .utf8), let port = Int(port) {
                return (p, port, token)
            }
            if !p.isRunning { break }
            usleep(25_000)
        }
        AgentE2E.stop(p)
        throw SoError(
            "the forbidden server did not listen on \(AgentE2E.nodeAddress) (python3 \(t.file("forbidden.py")))")
    }

    /// The exit code of `probe`, tried again for up to a minute while it fails: the enforcer learns a new pod's
    /// address from the API server a moment after the pod starts, and until then allowed traffic can be dropped.
    /// Only for what must get through; what must not is tried once (and waits out its own timeout).
    static func eventually(_ probe: () async throws -> Int32) async throws -> Int32 {
        var code = try await probe()
        for _ in 0..<12 where code != 0 {
            try await Task.sleep(nanoseconds: 5_000_000_000)
            code = try await probe()
        }
        return code
    }

    static func podIPs(_ namespace: String, selector: String) async throws -> [String] {
        let r = try await E2E.kubectl([
            "get", "pods", "-n", namespace, "-l", selector, "-o", "jsonpath={.items[*].status.podIP}",
        ])
        return r.stdout.split(separator: " ").map(String.init)
    }
}

@Suite(
    .serialized,
    .enabled(
        if: Isolation.enabled,
        "no NetworkPolicy enforcer: needs the real node (SO_E2E_REAL_NODE=1) with kube-network-policies running (SO_E2E_NETPOL=1)"
    ))
struct WorkspaceIsolationE2ETests {
    /// Two workspaces, each with postgres: each reaches its own services, its repository and DNS; neither
    /// reaches the other, the node's other ports or the API server.
    @Test func twoWorkspacesAreIsolatedFromEachOther() async throws {
        let t = try TempDir("so-e2e-isolation")
        defer { t.cleanup() }
        try await Isolation.buildPostgres(in: t)
        let (daemon, repo) = try await AgentE2E.serveRepository(in: t)
        defer { AgentE2E.stop(daemon) }
        let (forbidden, port, token) = try Isolation.serveForbidden(in: t)
        defer { AgentE2E.stop(forbidden) }
        let env = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home")]
        let stack = try AgentE2E.lightStack(in: t)
        func so(_ args: [String]) async throws -> ProcessResult { try await E2E.so(args, cwd: t.path, env: env) }
        /// The exit code of a shell line in a workspace's agent container.
        func probe(_ ws: String, _ line: String) async throws -> Int32 {
            try await so(["deployment", "--name", ws, "exec", "agent", "--", "sh", "-c", line]).exitCode
        }
        let (a, b) = ("iso-a", "iso-b")
        try await AgentE2E.removing(a, t, env) {
            try await AgentE2E.removing(b, t, env) {
                for ws in [a, b] {
                    let r = try await so([
                        "up", stack, "--name", ws, "--with", "postgres", "--config", "GIT_REPO=\(repo)", "--timeout",
                        "240",
                    ])
                    #expect(r.exitCode == 0, "up \(ws): \(r.stdout)\(r.stderr)")
                }
                try await Isolation.expectOnTwoNodes([a, b]) { try await so($0) }
                // A cloned its repository (git daemon on the node's address, on the port the URL names).
                #expect(
                    try await Isolation.eventually {
                        try await probe(a, "git -C /workspace log --oneline -1 | grep -q first")
                    } == 0)
                #expect(
                    try await Isolation.eventually { try await probe(a, "git ls-remote \(repo) >/dev/null") } == 0,
                    "the repository's own port is allowed")
                // A resolves names: its own services, the other's, the cluster's.
                #expect(
                    try await Isolation.eventually {
                        try await probe(a, "getent hosts postgres && getent hosts postgres.\(b).svc.cluster.local")
                    } == 0, "DNS under enforcement")
                // A reaches its own postgres; B's services reach each other.
                #expect(
                    try await Isolation.eventually {
                        try await probe(a, "curl -fsS --max-time 5 http://postgres:5432/ | grep -q postgres-stand-in")
                    } == 0)
                #expect(
                    try await Isolation.eventually {
                        try await probe(b, "curl -fsS --max-time 5 http://postgres:5432/ | grep -q postgres-stand-in")
                    } == 0)
                // A cannot reach B: by name, by Service IP, by pod IP.
                #expect(
                    try await probe(
                        a, "curl -sS --noproxy '*' --max-time 4 http://postgres.\(b).svc.cluster.local:5432/") != 0,
                    "A reached B's postgres by name")
                let bService = try await E2E.kubectl([
                    "get", "svc", "postgres", "-n", b, "-o", "jsonpath={.spec.clusterIP}",
                ]).stdout
                #expect(!bService.isEmpty)
                #expect(
                    try await probe(a, "curl -sS --noproxy '*' --max-time 4 http://\(bService):5432/") != 0,
                    "A reached B's postgres Service")
                let bPods = try await Isolation.podIPs(b, selector: "app.kubernetes.io/component=postgres")
                #expect(!bPods.isEmpty)
                for ip in bPods {
                    #expect(
                        try await probe(a, "curl -sS --noproxy '*' --max-time 4 http://\(ip):5432/") != 0,
                        "A reached B's pod \(ip)")
                }
                // Not the node's other ports, not the API server (by its Service or the node's address).
                #expect(
                    try await probe(a, "curl -sS --noproxy '*' --max-time 4 http://\(AgentE2E.nodeAddress):\(port)/")
                        != 0, "A reached a port no policy allows")
                #expect(
                    try await probe(a, "curl -sSk --noproxy '*' --max-time 4 https://kubernetes.default.svc/version")
                        != 0, "A reached the API server")
                #expect(
                    try await probe(
                        a, "curl -sSk --noproxy '*' --max-time 4 https://\(AgentE2E.nodeAddress):6443/version") != 0,
                    "A reached the API server's address")
                // Through the workspace's egress proxy (HTTPS_PROXY in every container) the same server is refused at
                // once, by name, with the spec key to change.
                let refused = try await so([
                    "deployment", "--name", a, "exec", "agent", "--", "sh", "-c",
                    "curl -s --max-time 5 -w ' %{http_code}' http://\(AgentE2E.nodeAddress):\(port)/",
                ])
                #expect(
                    refused.stdout.contains("is not in the egress: list") && refused.stdout.hasSuffix(" 403")
                        && refused.stdout.contains("deployments/\(a)/spec.yml"), "\(refused.stdout)\(refused.stderr)")
                try await allowedNameFollowsItsAddress(a, t: t, stack: stack, so: so)
                // The control: from the host the forbidden server itself answers (its token, not another server's
                // page), so its refusal above was the policy's.
                let direct = try await AgentE2E.run([
                    "curl", "-fsS", "--noproxy", "*", "--max-time", "5", "http://\(AgentE2E.nodeAddress):\(port)/",
                ])
                #expect(
                    direct.exitCode == 0 && direct.stdout.contains(token),
                    "the forbidden server does not answer from the host: \(direct.stdout)\(direct.stderr)")
            }
        }
    }

    /// The same guarantees for two workspaces claimed from a warm pool (their NetworkPolicies were applied when
    /// the members were made, before any checkout): each reaches its own postgres and its origin, neither the
    /// other, the node's other ports or the API server.
    @Test func twoWorkspacesClaimedFromAPoolAreIsolatedFromEachOther() async throws {
        let t = try TempDir("so-e2e-isolation-pool")
        defer { t.cleanup() }
        try await Isolation.buildPostgres(in: t)
        let (daemon, repo) = try await AgentE2E.serveRepository(in: t)
        defer { AgentE2E.stop(daemon) }
        let (forbidden, port, _) = try Isolation.serveForbidden(in: t)
        defer { AgentE2E.stop(forbidden) }
        let env = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home")]
        let stack = try AgentE2E.lightStack(in: t)
        _ = try await AgentE2E.run(["git", "clone", "-q", repo, t.file("mine")])
        func so(_ args: [String], in dir: String? = nil) async throws -> ProcessResult {
            try await E2E.so(args, cwd: dir ?? t.path, env: env)
        }
        func probe(_ ws: String, _ line: String) async throws -> Int32 {
            try await so(["deployment", "--name", ws, "exec", "agent", "--", "sh", "-c", line]).exitCode
        }
        let (a, b) = ("iso-pool-a", "iso-pool-b")
        var r = try await so([
            "pool", "create", stack, "--name", "iso", "--size", "2", "--with", "postgres", "--config",
            "GIT_ORIGIN=\(repo)",
        ])
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        defer {
            let done = DispatchSemaphore(value: 0)
            Task {
                _ = try? await so(["pool", "remove", "iso"])
                done.signal()
            }
            done.wait()
        }
        try await AgentE2E.removing(a, t, env) {
            try await AgentE2E.removing(b, t, env) {
                var warm = 0
                for _ in 0..<180 where warm < 2 {
                    try await Task.sleep(nanoseconds: 500_000_000)
                    r = try await so(["pool", "list", "-o", "json"])
                    let pools = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
                    warm = pools.first { $0["name"] as? String == "iso" }?["warm"] as? Int ?? 0
                }
                #expect(warm == 2, "\(r.stdout)\(r.stderr)")
                for ws in [a, b] {
                    r = try await so(
                        ["up", stack, "--name", ws, "--with", "postgres", "--timeout", "240"], in: t.file("mine"))
                    #expect(r.exitCode == 0 && r.stdout.contains("claimed iso-"), "up \(ws): \(r.stdout)\(r.stderr)")
                }
                // The pool's two warm members were made on two nodes, and each claim took one.
                try await Isolation.expectOnTwoNodes([a, b]) { try await so($0) }
                // The members the claims made in their place are not needed here (the node's CPU is shared).
                r = try await so(["pool", "remove", "iso"])
                #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
                // No member is left (the refills the claims started were making some): one left once made the next
                // run of this test claim it, and refuse it (another origin).
                r = try await so(["deployment", "list", "-o", "json"])
                let listed = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
                let left = listed.filter { $0["pool"] as? String == "iso" && $0["terminating"] as? Bool != true }
                #expect(left.isEmpty, "the pool's members left: \(left.map { $0["name"] ?? "" })")
                #expect(
                    try await Isolation.eventually {
                        try await probe(a, "git -C /workspace log --oneline -1 | grep -q first")
                    }
                        == 0)
                #expect(
                    try await Isolation.eventually { try await probe(a, "git ls-remote origin >/dev/null") } == 0,
                    "its origin is allowed")
                for ws in [a, b] {
                    #expect(
                        try await Isolation.eventually {
                            try await probe(
                                ws, "curl -fsS --max-time 5 http://postgres:5432/ | grep -q postgres-stand-in")
                        } == 0, "\(ws) reaches its own postgres")
                }
                let bNamespace = try #require(
                    (try JSONSerialization.jsonObject(
                        with: Data(try await so(["deployment", "list", "-o", "json"]).stdout.utf8))
                        as? [[String: Any]])?.first { $0["name"] as? String == b }?["namespace"] as? String)
                #expect(
                    try await probe(
                        a, "curl -sS --noproxy '*' --max-time 4 http://postgres.\(bNamespace).svc.cluster.local:5432/")
                        != 0,
                    "A reached B's postgres by name")
                for ip in try await Isolation.podIPs(bNamespace, selector: "app.kubernetes.io/component=postgres") {
                    #expect(
                        try await probe(a, "curl -sS --noproxy '*' --max-time 4 http://\(ip):5432/") != 0,
                        "A reached B's pod \(ip)")
                }
                #expect(
                    try await probe(a, "curl -sS --noproxy '*' --max-time 4 http://\(AgentE2E.nodeAddress):\(port)/")
                        != 0,
                    "A reached a port no policy allows")
                #expect(
                    try await probe(a, "curl -sSk --noproxy '*' --max-time 4 https://kubernetes.default.svc/version")
                        != 0,
                    "A reached the API server")
            }
        }
    }

    /// An allowed name whose address changes while the workspace runs stays reachable through its egress proxy,
    /// with no restart: `moving.iso-target` is a headless Service whose one pod is swapped for another (the
    /// stand-in for a CDN-fronted API whose addresses change). A cluster name is exempt from the proxy by
    /// NO_PROXY, so the test names the proxy itself.
    func allowedNameFollowsItsAddress(
        _ ws: String, t: TempDir, stack: String, so: ([String]) async throws -> ProcessResult
    ) async throws {
        let target = "iso-target"
        let pods = ["old", "new"].map { name in
            """
            apiVersion: v1
            kind: Pod
            metadata: {name: \(name), namespace: \(target), labels: {app: moving}}
            spec:
              containers:
              - name: web
                image: busybox:1.35
                command: ["sh", "-c", "mkdir -p /tmp/www && echo \(name) > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www"]
            """
        }.joined(separator: "\n---\n")
        try t.write(
            "moving.yml",
            """
            apiVersion: v1
            kind: Namespace
            metadata: {name: \(target)}
            ---
            apiVersion: v1
            kind: Service
            metadata: {name: moving, namespace: \(target)}
            spec: {clusterIP: None, selector: {current: "yes"}, ports: [{port: 8080}]}
            ---
            \(pods)

            """)
        defer { Task { _ = try? await E2E.kubectl(["delete", "namespace", target, "--wait=false"]) } }
        var r = try await E2E.kubectl(["apply", "-f", t.file("moving.yml")])
        #expect(r.exitCode == 0, "\(r.stderr)")
        r = try await E2E.kubectl([
            "wait", "-n", target, "--for=condition=Ready", "pod/old", "pod/new", "--timeout=90s",
        ])
        #expect(r.exitCode == 0, "\(r.stderr)")
        _ = try await E2E.kubectl(["label", "-n", target, "pod/old", "current=yes"])
        // The name joins the workspace's egress: list; starting it again gives the proxy the new list.
        let specPath = t.file("home/deployments/\(ws)/spec.yml")
        var lines = try t.read("home/deployments/\(ws)/spec.yml").components(separatedBy: "\n")
        let at = try #require(lines.firstIndex(of: "egress:"))
        let indent = String(lines[at + 1].prefix { $0 == " " })
        lines.insert("\(indent)- http://moving.\(target).svc.cluster.local:8080", at: at + 1)
        try lines.joined(separator: "\n").write(toFile: specPath, atomically: true, encoding: .utf8)
        r = try await so(["up", stack, "--name", ws, "--timeout", "180"])
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        let fetch =
            "curl -fsS --noproxy '' -x http://egress-proxy:3128 --max-time 5 http://moving.\(target).svc.cluster.local:8080/"
        func answer() async throws -> String {
            try await so(["deployment", "--name", ws, "exec", "agent", "--", "sh", "-c", fetch]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        var got = ""
        for _ in 0..<10 where got != "old" {
            got = try await answer()
            if got != "old" { try await Task.sleep(nanoseconds: 2_000_000_000) }
        }
        #expect(got == "old", "through the proxy before the move: '\(got)'")
        // The address behind the name changes.
        _ = try await E2E.kubectl(["label", "-n", target, "pod/old", "current-"])
        _ = try await E2E.kubectl(["label", "-n", target, "pod/new", "current=yes"])
        for _ in 0..<15 where got != "new" {
            try await Task.sleep(nanoseconds: 2_000_000_000)
            got = try await answer()
        }
        #expect(got == "new", "through the proxy after the move: '\(got)'")
    }

    /// compose networks: web and api share front, api and db share back; web cannot reach db.
    @Test func composeNetworksSeparateServices() async throws {
        let t = try TempDir("so-e2e-networks")
        defer { t.cleanup() }
        _ = try await RealNode.deploy("networks", in: t)
        try await RealNode.removing(t) {
            let r = try await E2E.so(
                ["deployment", "--dir", "dep", "start", "--timeout", "180"] + RealNode.kc, cwd: t.path)
            #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
            var last = ""
            func get(_ from: String, _ to: String) async throws -> Int32 {
                let r = try await E2E.so(
                    ["deployment", "--dir", "dep", "exec", from] + RealNode.kc
                        + ["--", "sh", "-c", "timeout 5 wget -qO- http://\(to):8080/ 2>&1 | grep \(to)"], cwd: t.path)
                last = "\(from) → \(to): exit \(r.exitCode) \(r.stdout)\(r.stderr)"
                return r.exitCode
            }
            #expect(
                try await Isolation.eventually { try await get("web", "api") } == 0, "web and api share front: \(last)")
            #expect(
                try await Isolation.eventually { try await get("api", "db") } == 0, "api and db share back: \(last)")
            #expect(
                try await Isolation.eventually { try await get("db", "api") } == 0, "db and api share back: \(last)")
            #expect(try await get("web", "db") != 0, "web reached db: they share no network")
        }
    }

    /// `egress: []`: DNS, and nothing else out.
    @Test func anEmptyEgressListLeavesDNSOnly() async throws {
        let t = try TempDir("so-e2e-egress-none")
        defer { t.cleanup() }
        let (forbidden, port, _) = try Isolation.serveForbidden(in: t)
        defer { AgentE2E.stop(forbidden) }
        try await RealNode.deploy("egress-none", in: t, appendToSpec: "egress: []\n")
        try await RealNode.removing(t) {
            let r = try await E2E.so(
                ["deployment", "--dir", "dep", "start", "--timeout", "120"] + RealNode.kc, cwd: t.path)
            #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
            var last = ""
            func probe(_ line: String) async throws -> Int32 {
                // --kubeconfig before `--`: after it, it would be the probe's own argument.
                let r = try await E2E.so(
                    ["deployment", "--dir", "dep", "exec", "probe"] + RealNode.kc + ["--", "sh", "-c", line],
                    cwd: t.path)
                last = "exit \(r.exitCode) \(r.stdout)\(r.stderr)"
                return r.exitCode
            }
            #expect(
                try await Isolation.eventually {
                    try await probe("nslookup kube-dns.kube-system.svc.cluster.local | grep -q 'Name:'")
                } == 0, "DNS is allowed: \(last)")
            #expect(
                try await probe("timeout 5 wget -qO- http://\(AgentE2E.nodeAddress):\(port)/") != 0,
                "egress: [] let traffic out")
        }
    }
}
