import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

@testable import SoCompose

/// Compose's version-1 layout (services at the top level, as kompose still converts) reads as the current
/// one; `links` aliases and `volumes_from` are modelled in either layout.
@Suite struct LegacyLayoutTests {
    static var fixture: String { Path.join(RepoPaths.composeFixtures, "legacy-v1/docker-compose.yml") }

    @Test func aVersion1FileReadsAsTheCurrentLayout() throws {
        let sink = DiagnosticSink()
        let f = try ComposeLoader.load(Self.fixture, fs: LocalFileSystem(), environment: [:], diagnostics: sink)
        #expect(f.version1)
        #expect(f.services.map(\.name) == ["web", "redis", "store", "backup"])
        let web = try #require(f.service("web"))
        #expect(web.build?.context == "./web" && web.build?.dockerfile == "Dockerfile.web")
        #expect(web.keys.map(\.key).contains("logging") && !web.keys.map(\.key).contains("log_driver"))
        #expect(web.links.map { "\($0.service)>\($0.alias)" } == ["redis>cache", "store>store"])
        #expect(f.service("store")?.networkMode == "bridge")
        // Version 1 made named volumes on first use: they are declared as the current layout would.
        #expect(f.volumes.map(\.name) == ["uploads"])
        // The file's line numbers are kept.
        #expect(web.line == 3 && f.service("backup")?.line == 28)
        #expect(sink.all.isEmpty, "\(sink.all)")
    }

    @Test func volumesFromMountsTheNamedServicesVolumesAtTheirPaths() throws {
        let f = try ComposeLoader.load(
            Self.fixture, fs: LocalFileSystem(), environment: [:], diagnostics: DiagnosticSink())
        let backup = try #require(f.service("backup"))
        #expect(backup.volumesFrom == ["web:ro"])
        let inherited = backup.volumes.filter { $0.inheritedFrom == "web" }
        #expect(inherited.map(\.target) == ["/srv/static", "/srv/uploads"] && inherited.allSatisfy(\.readOnly))
        #expect(inherited.map(\.source) == ["./static", "uploads"])
        // Its own anonymous volume stays; a path the service mounts itself is not taken from the other.
        let own = try service("image: x\nvolumes_from: [other, 'container:abc']\nvolumes: [mine:/data]")
        #expect(own.volumes.map(\.target) == ["/data"])
        let both = try compose(
            "services:\n  a:\n    image: x\n    volumes: [shared:/data, /cache, ./conf:/etc/conf]\n"
                + "  b:\n    image: y\n    volumes_from: [a]\n    volumes: [mine:/etc/conf]\n", env: [:])
        let b = try #require(both.service("b"))
        #expect(b.volumes.map { "\($0.target)<\($0.inheritedFrom ?? "own")" } == ["/etc/conf<own", "/data<a"])
        #expect(b.volumes.allSatisfy { !$0.readOnly })
    }

    @Test func onlyATopLevelMappingOfServicesIsVersion1() throws {
        // The current layout's own keys, or an extension, mean the file is not version 1.
        for text in [
            "version: '2'\nweb: {image: x}\n", "x-common: {image: x}\n", "volumes:\n  data: {}\n", "web: nginx\n",
        ] {
            #expect(throws: SoError.self, "\(text)") { _ = try compose(text, env: [:]) }
            let root = try #require(try YAMLFile.parse(text, file: "c.yml"))
            #expect(!ComposeLayout.isVersion1(root), "\(text)")
        }
        let v1 = try compose("db:\n  image: postgres\n  net: host\n", env: [:])
        #expect(v1.version1 && v1.services.first?.networkMode == "host")
        #expect(try !compose("services:\n  db: {image: postgres}\n", env: [:]).version1)
    }
}
