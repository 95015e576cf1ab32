import Foundation
import SoBasics
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// `deploy create` writes kind-config.yml with a mapping for every port the deployment publishes, from
/// the spec's network.ports (which replace the compose file's).
@Suite struct KindPortsTests {
    @Test func publishedPortsOfTheSpecAreMappedByKind() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write(
            "app/compose.yaml",
            "services:\n  web:\n    image: nginx:1.27\n    ports: [\"80\"]\n  dns:\n    image: coredns\n    ports: [\"53/udp\"]\n"
        )
        try await InitAction(h.ctx).run(InitRequest(stack: "./app", output: "app.yml"))
        let spec = try h.read("app.yml")
        #expect(spec.contains("network:\n  ports:\n    web:\n      - '80'\n    dns:\n      - 53/udp\n"))
        try h.tmp.write(
            "app.yml",
            spec.replacingOccurrences(of: "      - '80'\n", with: "      - '30080:80'\n      - 127.0.0.1:8080:80\n")
                .replacingOccurrences(of: "      - 53/udp\n", with: "      - 30053:53/udp\n      - 30053:53\n")
                + "security:\n  pod-security: privileged\n")
        try await CreateAction(h.ctx).run(CreateRequest(specFile: "app.yml", deploymentDir: "dep"))
        let kind = try h.read("dep/kind-config.yml")
        #expect(
            kind.contains(
                """
                      - containerPort: 443
                        hostPort: 443
                      - containerPort: 30080
                        hostPort: 30080
                      - containerPort: 8080
                        hostPort: 8080
                        listenAddress: 127.0.0.1
                      - containerPort: 30053
                        hostPort: 30053
                        protocol: UDP
                      - containerPort: 30053
                        hostPort: 30053

                """), "\(kind)")
    }
}
