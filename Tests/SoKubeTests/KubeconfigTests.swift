import Foundation
import SoBasics
import SoKube
import SoSystem
import SoTestSupport
import Testing

@Suite struct KubeconfigTests {
    let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

    func b64(_ s: String) -> String { Data(s.utf8).base64EncodedString() }

    func resolve(
        _ files: [String: String], env: [String: String] = [:], explicit: String? = nil, context: String? = nil,
        in t: TempDir
    ) throws -> ClusterConnection {
        for (name, text) in files { try t.write(name, text) }
        var environment = env
        if let kc = environment["KUBECONFIG"] {
            environment["KUBECONFIG"] = kc.split(separator: ":").map { t.file(String($0)) }.joined(separator: ":")
        }
        return try Kubeconfig.resolve(
            explicit: explicit.map(t.file), context: context, environment: environment,
            fs: LocalFileSystem(currentDirectory: t.path), diagnostics: DiagnosticSink())
    }

    var kind: String {
        """
        apiVersion: v1
        kind: Config
        current-context: kind-dev
        clusters:
        - name: kind-dev
          cluster: {server: "https://127.0.0.1:40000", certificate-authority-data: \(b64(pem))}
        users:
        - name: kind-dev
          user: {client-certificate-data: \(b64("CERT")), client-key-data: \(b64("KEY"))}
        contexts:
        - name: kind-dev
          context: {cluster: kind-dev, user: kind-dev, namespace: team}
        """
    }

    @Test func kindShapedFile() throws {
        let t = try TempDir()
        defer { t.cleanup() }
        let c = try resolve(["kc": kind], explicit: "kc", in: t)
        #expect(
            c
                == ClusterConnection(
                    contextName: "kind-dev", server: "https://127.0.0.1:40000", caPEM: Data(pem.utf8),
                    clientCertificatePEM: Data("CERT".utf8), clientKeyPEM: Data("KEY".utf8), namespace: "team",
                    userName: "kind-dev", source: t.file("kc")))
    }

    @Test func usersKindContextIsFoundButNeverTheInClusterAccount() throws {
        let t = try TempDir()
        defer { t.cleanup() }
        let fs = LocalFileSystem(currentDirectory: t.path)
        let env = ["KUBECONFIG": t.file("missing") + ":" + t.file("kc"), "KUBERNETES_SERVICE_HOST": "10.96.0.1"]
        // No file: nil, even inside a pod.
        #expect(Kubeconfig.userContext("kind-dev", environment: env, fs: fs) == nil)
        try t.write("kc", kind)
        #expect(Kubeconfig.userContext("kind-dev", environment: env, fs: fs)?.server == "https://127.0.0.1:40000")
        #expect(Kubeconfig.userContext("kind-other", environment: env, fs: fs) == nil)
    }

    @Test func mergedKubeconfigFirstFileWins() throws {
        let t = try TempDir()
        defer { t.cleanup() }
        let second = """
            current-context: other
            clusters:
            - name: kind-dev
              cluster: {server: "https://ignored:1"}
            - name: prod
              cluster: {server: "https://prod.example:6443", certificate-authority: ca.pem, insecure-skip-tls-verify: false}
            users:
            - name: bot
              user: {tokenFile: token}
            contexts:
            - name: prod
              context: {cluster: prod, user: bot}
            """
        try t.write("ca.pem", pem)
        let dev = try resolve(["a": kind, "b": second], env: ["KUBECONFIG": "a:b:missing"], in: t)
        #expect(dev.server == "https://127.0.0.1:40000")
        let prod = try resolve(["a": kind, "b": second], env: ["KUBECONFIG": "a:b"], context: "prod", in: t)
        #expect(
            prod.caPEM == Data(pem.utf8) && prod.tokenFile == t.file("token")
                && prod.server == "https://prod.example:6443")
    }

    @Test func errorsSayWhatToDo() throws {
        let t = try TempDir()
        defer { t.cleanup() }
        #expect { try resolve(["kc": kind], explicit: "kc", context: "kind-deb", in: t) } throws: {
            ($0 as! SoError).message.contains("context 'kind-deb' not found")
                && ($0 as! SoError).hint!.hasPrefix("did you mean 'kind-dev'?")
        }
        let exec = kind.replacingOccurrences(
            of: "user: {client-certificate-data: \(b64("CERT")), client-key-data: \(b64("KEY"))}",
            with: "user: {exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}}")
        #expect { try resolve(["kc": exec], explicit: "kc", in: t) } throws: {
            ($0 as? SoError)?.message.contains("has no interactiveMode, which apiVersion v1 requires") == true
        }
        let half = kind.replacingOccurrences(of: ", client-key-data: \(b64("KEY"))", with: "")
        #expect { try resolve(["kc": half], explicit: "kc", in: t) } throws: {
            ($0 as! SoError).message.contains("without a key")
        }
        #expect(throws: SoError.self) { try resolve([:], explicit: "nope", in: t) }
        #expect { try resolve([:], env: ["HOME": "/nonexistent"], in: t) } throws: {
            ($0 as! SoError).message.hasPrefix("no kubeconfig found") || ($0 as! SoError).message.contains("kubeconfig")
        }
    }

    @Test func kindGetKubeconfigText() throws {
        let c = try Kubeconfig.resolve(
            text: kind, label: "kind get kubeconfig", context: "kind-dev", fs: LocalFileSystem())
        #expect(c.contextName == "kind-dev" && c.clientKeyPEM == Data("KEY".utf8))
    }
}

@Suite struct KubeObjectTests {
    @Test func jsonIsOrderedAndEscaped() {
        let o = KubeObject(
            apiVersion: "v1", kind: "ConfigMap", name: "c", namespace: "n", labels: [("a", "1")],
            body: [("data", .map([("k", .string("line\n\"q\"")), ("b", .bool(true)), ("i", .int(3))]))])
        #expect(
            o.json(pretty: false)
                == #"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n","labels":{"a":"1"}},"data":{"k":"line\n\"q\"","b":true,"i":3}}"#
        )
        #expect(o.reference == "ConfigMap n/c")
    }

    @Test func resourcePaths() throws {
        #expect(
            try ResourceType.of(apiVersion: "apps/v1", kind: "Deployment").path(name: "d", namespace: "ns")
                == "/apis/apps/v1/namespaces/ns/deployments/d")
        #expect(
            try ResourceType.of(apiVersion: "v1", kind: "PersistentVolume").path(name: "p", namespace: "ns")
                == "/api/v1/persistentvolumes/p")
        #expect(throws: SoError.self) { try ResourceType.of(apiVersion: "v9", kind: "Nope") }
    }

    @Test func labelRules() {
        #expect(
            NameRules.isLabelKey("app.kubernetes.io/name") && NameRules.isLabelKey("team")
                && !NameRules.isLabelKey("bad key") && !NameRules.isLabelKey("a/b/c"))
        #expect(
            NameRules.isLabelValue("") && NameRules.isLabelValue("v1.2_x") && !NameRules.isLabelValue("-x")
                && !NameRules.isLabelValue(String(repeating: "a", count: 64)))
    }
}

@Suite struct AppliedHashTests {
    @Test func aSecretsHashHoldsNoFunctionOfItsValuesYetAChangedValueIsSeen() throws {
        func secret(_ v: String, keys: [String] = ["TOKEN"]) -> KubeObject {
            KubeObject(
                apiVersion: "v1", kind: "Secret", name: "s", namespace: "ns",
                body: [("data", .map(keys.map { ($0, .string(Data(v.utf8).base64EncodedString())) }))])
        }
        #expect(secret("one").appliedHash == secret("two").appliedHash)
        #expect(secret("one").appliedHash != secret("one", keys: ["TOKEN", "PIN"]).appliedHash)
        let live = try JSON.parse(Data(secret("one").stamped.json(pretty: false).utf8))
        #expect(secret("one").isUnchanged(in: live))
        #expect(!secret("two").isUnchanged(in: live))
    }

    let cm = KubeObject(
        apiVersion: "v1", kind: "ConfigMap", name: "c", namespace: "ns", labels: [("app", "x")],
        body: [("data", .map([("k", .string("v"))])), ("list", .list([.int(80), .bool(true)]))])

    /// What the API server returns after applying `o.stamped`, plus fields the server adds.
    func stored(_ o: KubeObject, extra: String = "") throws -> JSON {
        var text = o.stamped.json(pretty: false)
        text.removeLast()
        return try JSON.parse(Data((text + ",\"status\":{\"x\":1}" + extra + "}").utf8))
    }

    @Test func unchangedOnlyWhenAppliedFromTheSameBytesAndStillHoldingThem() throws {
        let live = try stored(cm)
        #expect(cm.appliedHash.count == 16 && cm.appliedHash == cm.appliedHash)
        #expect(cm.isUnchanged(in: live))
        // Not stamped (applied by an older so, or by someone else): apply.
        #expect(!cm.isUnchanged(in: try JSON.parse(Data(cm.json(pretty: false).utf8))))
        // A field removed from what we render: the hash differs, so the apply that removes it happens.
        var fewer = cm
        fewer.body = [("data", .map([]))]
        #expect(!fewer.isUnchanged(in: live))
        // What the server leaves out because it is a zero value (an env var's empty `value`) is no change.
        let env = KubeObject(
            apiVersion: "v1", kind: "ConfigMap", name: "c",
            body: [("env", .list([.map([("name", .string("A")), ("value", .string(""))])]))])
        let omitted = try JSON.parse(
            Data(env.stamped.json(pretty: false).replacingOccurrences(of: ",\"value\":\"\"", with: "").utf8))
        #expect(omitted.at("env")?.array.first?["value"] == nil && env.isUnchanged(in: omitted))
        // Drift: someone edited a value, dropped a label or an item since; the hash alone would miss it.
        for (from, to) in [
            ("\"k\":\"v\"", "\"k\":\"edited\""), ("\"labels\":{\"app\":\"x\"}", "\"labels\":{}"), ("[80,true]", "[80]"),
            ("[80,true]", "[\"80\",true]"),
        ] {
            let edited = try JSON.parse(
                Data(cm.stamped.json(pretty: false).replacingOccurrences(of: from, with: to).utf8))
            #expect(!cm.isUnchanged(in: edited), "\(to)")
        }
    }
}
