import Foundation
import Testing
import SoBasics
import SoKube
@testable import SoRender
import SoStack
import SoTestSupport

/// A one-pod laconic-layout deployment directory written by hand; `files` are extra files inside it.
private func deployment(compose: String, spec extra: String = "", deployTo: String = "k8s-kind", files: [String: String] = [:],
                        _ body: (TempDir, DeploymentModel) throws -> Void) throws {
    let t = try TempDir("so-hosts")
    defer { t.cleanup() }
    try t.write("deployment.yml", "cluster-id: laconic-c\ndeployment-id: laconic-d\n")
    try t.write("stack.yml", "name: s\npods: [p]\n")
    try t.write("spec.yml", "stack: /x/stacks/s\ndeploy-to: \(deployTo)\n" + (deployTo == "k8s" ? "kube-config: /x/kc\n" : "") + extra)
    try t.write("config.env", "")
    try t.write("compose/docker-compose-p.yml", compose)
    for (rel, text) in files { try t.write(rel, text) }
    let model = try DeploymentLoader.load(t.path, fs: LocalFileSystem(), diagnostics: DiagnosticSink(), displayDirectory: "/d")
    try body(t, model)
}

private func podSpec(_ m: Manifest) -> YValue? { m.object("Deployment")?["spec"]?["template"]?["spec"] }

@Suite struct HostGatewayTests {
    static let compose = """
    services:
      app:
        image: x
        extra_hosts:
          - "host.docker.internal:host-gateway"
          - "metadata.internal:169.254.169.254"
    """

    @Test func theAddressGivenToRenderIsUsed() throws {
        try deployment(compose: Self.compose) { _, model in
            let m = try Renderer.render(model, options: RenderOptions(hostGateway: "172.18.0.1"))
            let aliases = podSpec(m)?["hostAliases"]
            #expect(aliases?[0]?["ip"]?.string == "172.18.0.1")
            #expect(aliases?[0]?["hostnames"]?[0]?.string == "host.docker.internal")
            #expect(aliases?[1]?["ip"]?.string == "169.254.169.254")
            #expect(m.warnings.isEmpty, "\(m.warnings)")
            let e = MappingReport.build(model, options: RenderOptions(hostGateway: "172.18.0.1")).first { $0.key == "extra_hosts" }
            #expect(e?.detail == "hostAliases: host.docker.internal → 172.18.0.1 (host-gateway: kind's docker network gateway); metadata.internal → 169.254.169.254")
            #expect(e?.status == .approximated)
        }
    }

    @Test func theSpecKeyWinsOverWhatStartFound() throws {
        try deployment(compose: Self.compose, spec: "host-gateway: 10.1.2.3\n") { _, model in
            #expect(model.spec.hostGateway == "10.1.2.3")
            let m = try Renderer.render(model, options: RenderOptions(hostGateway: "172.18.0.1"))
            #expect(podSpec(m)?["hostAliases"]?[0]?["ip"]?.string == "10.1.2.3")
            let e = MappingReport.build(model).first { $0.key == "extra_hosts" }
            #expect(e?.detail.contains("host.docker.internal → 10.1.2.3 (host-gateway: the spec's host-gateway)") == true, "\(e?.detail ?? "")")
        }
    }

    /// `render` without a cluster and without the spec key: the alias is left out, with a warning at the
    /// compose file's extra_hosts line and the hint to set the key; literal addresses stay.
    @Test func withoutAnAddressTheAliasIsLeftOutAndReported() throws {
        try deployment(compose: Self.compose) { t, model in
            let m = try Renderer.render(model)
            let aliases = podSpec(m)?["hostAliases"]
            #expect(aliases?[0]?["ip"]?.string == "169.254.169.254")
            #expect(aliases?[1] == nil)
            #expect(!m.yaml().contains("host-gateway"))
            let w = try #require(m.warnings.first { $0.message.contains("host.docker.internal:host-gateway") })
            #expect(w.location == SourceLocation(file: t.file("compose/docker-compose-p.yml"), line: 4))
            #expect(w.message == "extra_hosts 'host.docker.internal:host-gateway' of service 'app' is left out: no address for host-gateway here")
            #expect(w.hint?.contains("'host-gateway: IP' in the spec") == true)
            let e = MappingReport.build(model).first { $0.key == "extra_hosts" }
            #expect(e?.status == .approximated)
            #expect(e?.detail.contains("host.docker.internal:host-gateway left out: no address for host-gateway here (set host-gateway: IP in the spec") == true, "\(e?.detail ?? "")")
        }
    }

    @Test func onlyHostGatewayAndNoAddressMeansNoHostAliasesAtAll() throws {
        try deployment(compose: "services:\n  app:\n    image: x\n    extra_hosts: {host.docker.internal: host-gateway}\n") { _, model in
            let m = try Renderer.render(model)
            #expect(podSpec(m)?["hostAliases"] == nil)
            #expect(MappingReport.build(model).first { $0.key == "extra_hosts" }?.status == .ignored)
        }
    }

    @Test func valuesThatAreNotAddressesAreLeftOut() {
        let r = HostAliases.resolve(["a:10.0.0.1", "b=10.0.0.1", "c:[::1]", "d:not-an-ip", "e:${UNSET}", "nonsense", "f:host-gateway"], gateway: nil)
        #expect(r.aliases == [.init(ip: "10.0.0.1", hostnames: ["a", "b"]), .init(ip: "::1", hostnames: ["c"])])
        #expect(r.leftOut.map(\.entry) == ["d:not-an-ip", "e:${UNSET}", "nonsense", "f:host-gateway"])
        #expect(r.leftOut[0].reason == "'not-an-ip' is not an IP address")
    }

    @Test func ipAddressLiterals() {
        for good in ["172.18.0.1", "0.0.0.0", "::1", "fc00:f853:ccd:e793::1", "::ffff:10.0.0.1"] { #expect(IPAddress.isValid(good), "\(good)") }
        for bad in ["host-gateway", "", "172.18.0", "172.18.0.256", "10.0.0.1/8", "example.org", " 10.0.0.1", "fe80::1%eth0"] { #expect(!IPAddress.isValid(bad), "\(bad)") }
    }
}
