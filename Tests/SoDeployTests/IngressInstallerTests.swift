import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

// The ingress controller, progress, stop and the observe verbs, kind targets, resync and cluster
// selection against the fake cluster (start itself: ClusterTests.swift).

@Suite struct IngressControllerTests {
    static func withProxy() async throws -> ClusterHarness {
        let c = try await ClusterHarness()
        // Where the cluster's lock (the controller's install) lives, as on every cluster.
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: "kube-system"))
        let spec = try c.h.tmp.read("dep/spec.yml")
        try c.h.tmp.write(
            "dep/spec.yml",
            spec.replacingOccurrences(
                of: "network:\n",
                with: """
                    network:
                      http-proxy:
                        - host-name: example.localhost
                          routes:
                            - path: /
                              proxy-to: web:80

                    """))
        return c
    }

    func start(_ c: ClusterHarness, image: String? = nil) async throws {
        var options = c.options
        options.performClusterManagement = true
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: options, timeout: 30, progress: .plain))
    }

    @Test func installsOnceWhenAnIngressNeedsIt() async throws {
        let c = try await Self.withProxy()
        try await start(c)
        let controller = try #require(
            c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system"))
        #expect(
            controller.at("spec", "template", "spec", "containers")?.array.first?["image"]?.string
                == "ghcr.io/laconicnetwork/caddy-ingress:latest")
        let cls = try #require(c.cluster.object("IngressClass", "caddy"))
        #expect(cls.annotations["ingressclass.kubernetes.io/is-default-class"] == "true")
        #expect(c.cluster.object("ClusterRoleBinding", "so:caddy-ingress-controller") != nil)
        // The controller is installed before the deployment's own objects.
        let applies = c.cluster.calls.filter { $0.hasPrefix("apply ") }
        #expect(
            applies.firstIndex { $0.contains("caddy-ingress-controller") }! < applies.firstIndex {
                $0.contains("Ingress \(c.id)") || $0.hasPrefix("apply Ingress")
            }!)
        let before = c.cluster.calls.count
        try await start(c)
        // A ready controller is left alone.
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("apply") && $0.contains("caddy") })
        #expect(c.h.console.stdout.contains("controller caddy-system/caddy-ingress-controller is ready"))
    }

    /// A cluster whose default IngressClass is another controller's (ingress-nginx installed per kind's docs):
    /// the Ingress names that class and Caddy is not installed beside it.
    @Test func theClustersDefaultClassIsUsedAndCaddyIsNotInstalledBesideIt() async throws {
        let c = try await Self.withProxy()
        try c.cluster.seed(
            KubeObject(
                apiVersion: "networking.k8s.io/v1", kind: "IngressClass", name: "nginx",
                annotations: [("ingressclass.kubernetes.io/is-default-class", "true")],
                body: [("spec", .map([("controller", .string("k8s.io/ingress-nginx"))]))]))
        try await start(c)
        #expect(c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system") == nil)
        let ingress = try #require(c.cluster.object("Ingress", "\(c.id)-ingress", namespace: c.id))
        #expect(ingress.at("spec", "ingressClassName")?.string == "nginx")
        #expect(!c.h.console.stderr.contains("does not have"), "\(c.h.console.stderr)")
    }

    /// A class the cluster does not have is warned about, naming the classes it has; a TLS Secret the spec names
    /// that does not exist is warned about too.
    @Test func aMissingClassAndAMissingTLSSecretAreWarned() async throws {
        let c = try await Self.withProxy()
        try c.cluster.seed(
            KubeObject(
                apiVersion: "networking.k8s.io/v1", kind: "IngressClass", name: "nginx",
                body: [("spec", .map([("controller", .string("k8s.io/ingress-nginx"))]))]))
        let spec = try c.h.tmp.read("dep/spec.yml")
        try c.h.tmp.write(
            "dep/spec.yml",
            spec.replacingOccurrences(of: "network:\n", with: "network:\n  tls: {secret: example-cert}\n")
                + "ingress-class: traefik\n")
        try await start(c)
        let warnings = c.ctx.diagnostics.all.map(\.message)
        #expect(
            warnings.contains {
                $0.contains("names the class 'traefik', which this cluster does not have (it has nginx)")
            }, "\(warnings)")
        #expect(
            warnings.contains { $0.contains("TLS Secret \(c.id)/example-cert does not exist") },
            "\(warnings) \(c.cluster.calls.filter { $0.contains("Secret") })")
        #expect(c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system") == nil)
        // An issuer where cert-manager is not installed; then installed, without that issuer.
        try c.h.tmp.write(
            "dep/spec.yml",
            try c.h.tmp.read("dep/spec.yml").replacingOccurrences(
                of: "tls: {secret: example-cert}", with: "tls: {issuer: staging}"))
        try await start(c)
        #expect(
            c.ctx.diagnostics.all.contains {
                $0.message.contains("ClusterIssuer staging for its certificate, but this cluster has no cert-manager")
            })
        try c.cluster.seed(
            KubeObject(
                apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition",
                name: "certificates.cert-manager.io"))
        try await start(c)
        #expect(
            c.ctx.diagnostics.all.contains {
                $0.message.contains(
                    "asks cert-manager's ClusterIssuer staging for its certificate, which does not exist")
            })
    }

    @Test func notInstalledWithoutIngressOrClusterManagement() async throws {
        let plain = try await ClusterHarness()
        try await start(plain)
        #expect(plain.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system") == nil)
        let c = try await Self.withProxy()
        _ = try await c.start()  // --skip-cluster-management
        #expect(c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system") == nil)
        #expect(c.cluster.object("Ingress", "\(c.id)-ingress", namespace: c.id) != nil)
    }

    @Test func specImageRollsTheController() async throws {
        let c = try await Self.withProxy()
        try await start(c)
        let spec = try c.h.tmp.read("dep/spec.yml")
        try c.h.tmp.write("dep/spec.yml", spec + "caddy-ingress-image: example.org/caddy-ingress:2\n")
        try await start(c)
        let controller = try #require(
            c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system"))
        #expect(
            controller.at("spec", "template", "spec", "containers")?.array.first?["image"]?.string
                == "example.org/caddy-ingress:2")
    }
}
