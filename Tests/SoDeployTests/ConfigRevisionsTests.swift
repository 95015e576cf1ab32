import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// Pods roll when a Secret or ConfigMap they read changes, and only then.
@Suite struct ConfigRevisionsTests {
    static func deploymentRevisions(_ c: ClusterHarness) -> String? {
        c.cluster.object("Deployment", "\(c.id)-deployment", namespace: c.id)?.at(
            "spec", "template", "metadata", "annotations", ConfigRevisions.podAnnotation)?.string
    }

    /// A host value copied into the deployment's Secret (`secret-env`) changes: start applies the Secret one
    /// revision up and the Deployment that reads it (its pods roll); the next start sends neither again.
    @Test func aChangedSecretRollsThePodsThatReadIt() async throws {
        let c = try await ClusterHarness(
            appendToSpec: "secret-env: [API_TOKEN]\n", environment: ["API_TOKEN": "first-token-4711"])
        _ = try await c.start()
        let secret = "secret/\(c.id)-generated-secrets"
        let first = try #require(Self.deploymentRevisions(c))
        #expect(first.contains("\(secret)=1") && first.contains("configmap/"), "\(first)")
        #expect(
            c.cluster.object("Secret", "\(c.id)-generated-secrets", namespace: c.id)?.annotations[
                ConfigRevisions.revision] == "1")
        // Unchanged: nothing is applied.
        var before = c.cluster.calls.count
        _ = try await c.start()
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("apply ") }, "\(c.cluster.calls[before...])")
        // The value changes: the Secret goes to revision 2, the Deployment follows (the secret values never appear).
        var ctx = c.ctx
        ctx.environment["API_TOKEN"] = "second-token-4712"
        let changed = ClusterHarness(copying: c, ctx: ctx)
        before = c.cluster.calls.count
        _ = try await changed.start()
        let applied = c.cluster.calls[before...].filter { $0.hasPrefix("apply ") }
        #expect(
            Array(applied) == [
                "apply Secret \(c.id)/\(c.id)-generated-secrets", "apply Deployment \(c.id)/\(c.id)-deployment",
            ], "\(applied)")
        let second = try #require(Self.deploymentRevisions(c))
        #expect(second == first.replacingOccurrences(of: "\(secret)=1", with: "\(secret)=2"), "\(second)")
        #expect(!second.contains("token") && !c.h.console.stdout.contains("4712"))
        before = c.cluster.calls.count
        _ = try await changed.start()
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("apply ") }, "\(c.cluster.calls[before...])")
    }

    /// What a pod template reads: env refs, envFrom, secret and configMap volumes and projected sources.
    @Test func theRefsAPodReads() throws {
        let pod = YValue.map([
            (
                "spec",
                .map([
                    (
                        "template",
                        .map([
                            (
                                "spec",
                                .map([
                                    (
                                        "containers",
                                        .list([
                                            .map([
                                                (
                                                    "envFrom",
                                                    .list([
                                                        .map([("secretRef", .map([("name", .string("s1"))]))]),
                                                        .map([("configMapRef", .map([("name", .string("c1"))]))]),
                                                    ])
                                                ),
                                                (
                                                    "env",
                                                    .list([
                                                        .map([
                                                            ("name", .string("K")),
                                                            (
                                                                "valueFrom",
                                                                .map([
                                                                    (
                                                                        "secretKeyRef",
                                                                        .map([
                                                                            ("name", .string("s2")),
                                                                            ("key", .string("K")),
                                                                        ])
                                                                    )
                                                                ])
                                                            ),
                                                        ])
                                                    ])
                                                ),
                                            ])
                                        ])
                                    ),
                                    (
                                        "volumes",
                                        .list([
                                            .map([
                                                ("name", .string("a")),
                                                ("secret", .map([("secretName", .string("s3"))])),
                                            ]),
                                            .map([
                                                ("name", .string("b")), ("configMap", .map([("name", .string("c2"))])),
                                            ]),
                                            .map([
                                                ("name", .string("p")),
                                                (
                                                    "projected",
                                                    .map([
                                                        (
                                                            "sources",
                                                            .list([.map([("secret", .map([("name", .string("s4"))]))])])
                                                        )
                                                    ])
                                                ),
                                            ]),
                                        ])
                                    ),
                                ])
                            )
                        ])
                    )
                ])
            )
        ])
        #expect(
            ConfigRevisions.reads(pod) == [
                "configmap/c1", "configmap/c2", "secret/s1", "secret/s2", "secret/s3", "secret/s4",
            ])
    }
}
