import Foundation
import SoBasics
import SoKube
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// spec `image-pull-secret` makes the Secret the pods reference (laconic-so's dockerconfigjson), from the host.
@Suite struct ImagePullSecretTests {
    static let spec =
        "image-pull-secret:\n  server: registry.example.org\n  username: deployer\n  token-env: REGISTRY_TOKEN\n"

    @Test func startCreatesTheSecretThePodsReference() async throws {
        let c = try await ClusterHarness(appendToSpec: Self.spec, environment: ["REGISTRY_TOKEN": "tok-123-not-real"])
        _ = try await c.start()
        let ns = NameRules.dnsLabel(c.id)
        let secret = try #require(c.cluster.object("Secret", "\(c.id)-image-pull-secret", namespace: ns))
        #expect(secret["type"]?.string == "kubernetes.io/dockerconfigjson")
        let encoded = try #require(secret.at("data", ".dockerconfigjson")?.string)
        let config = try JSON.parse(try #require(Data(base64Encoded: encoded)))
        let entry = config.at("auths", "registry.example.org")
        #expect(entry?["username"]?.string == "deployer" && entry?["password"]?.string == "tok-123-not-real")
        #expect(entry?["auth"]?.string == Data("deployer:tok-123-not-real".utf8).base64EncodedString())
        let deployment = try #require(c.cluster.all.first { $0.0.type.kind == "Deployment" }?.1)
        #expect(
            deployment.at("spec", "template", "spec", "imagePullSecrets")?.array.first?["name"]?.string
                == "\(c.id)-image-pull-secret")
        #expect(!c.h.console.stdout.contains("tok-123") && !c.h.console.stderr.contains("tok-123"))
        #expect(try !c.h.listing().contains { (try? c.h.read($0))?.contains("tok-123") == true })
    }

    @Test func aMissingTokenNamesTheSpecLine() async throws {
        let c = try await ClusterHarness(appendToSpec: Self.spec)
        await #expect { _ = try await c.start() } throws: { e in
            guard let e = e as? SoError else { return false }
            return e.message.contains("REGISTRY_TOKEN, which is not set") && e.location?.line != nil
                && e.location?.file.hasSuffix("spec.yml") == true
        }
    }
}
