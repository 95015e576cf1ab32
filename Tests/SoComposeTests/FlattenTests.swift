import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

@testable import SoCompose

/// `-f a -f b`, `include:` and `extends:` as docker compose merges them.
@Suite struct FlattenTests {
    func flat(_ files: [String: String], _ order: [String]) throws -> ComposeFile {
        let t = try TempDir("so-flatten")
        defer { t.cleanup() }
        for (k, v) in files { try t.write(k, v) }
        let text = try ComposeFlatten.flatten(order.map { t.file($0) }, fs: LocalFileSystem())
        try t.write("flat.yaml", text)
        return try ComposeLoader.load(
            t.file("flat.yaml"), fs: LocalFileSystem(), environment: [:], diagnostics: DiagnosticSink())
    }

    @Test func overrideFilesMergeWithResetAndOverride() throws {
        let c = try flat(
            [
                "compose.yaml": """
                services:
                  web:
                    image: nginx:1
                    command: [nginx, -g, daemon off;]
                    ports: ["8080:80"]
                    environment: {A: "1", B: "2"}
                    volumes: ["./html:/usr/share/nginx/html:ro"]
                    labels: [team=web]
                  db:
                    image: postgres:16
                    ports: ["5432:5432"]
                """,
                "compose.prod.yaml": """
                services:
                  web:
                    image: nginx:2
                    command: [nginx-debug]
                    ports: ["8443:443"]
                    environment: [B=3, C=4]
                    volumes: ["./prod-html:/usr/share/nginx/html:ro"]
                  db:
                    ports: !reset []
                    environment: !override {ONLY: "1"}
                """,
            ], ["compose.yaml", "compose.prod.yaml"])
        let web = try #require(c.service("web"))
        #expect(web.image == "nginx:2")
        #expect(web.command == ["nginx-debug"])
        #expect(web.ports.map(\.raw) == ["8080:80", "8443:443"])
        #expect(web.environment.map { "\($0.key)=\($0.value ?? "")" } == ["A=1", "B=3", "C=4"])
        #expect(web.volumes.map(\.raw) == ["./prod-html:/usr/share/nginx/html:ro"])
        let db = try #require(c.service("db"))
        #expect(db.ports.isEmpty)
        #expect(db.environment.map(\.key) == ["ONLY"])
    }

    @Test func includeAndExtendsRebasePaths() throws {
        let c = try flat(
            [
                "app/compose.yaml": """
                include:
                  - ../shared/db.yaml
                services:
                  api:
                    extends: {file: ../shared/base.yaml, service: base}
                    image: acme/api:1
                    depends_on: [db]
                  worker:
                    extends: api
                    command: [work]
                """,
                "shared/db.yaml": """
                services:
                  db:
                    image: postgres:16
                    volumes: ["./init.sql:/docker-entrypoint-initdb.d/init.sql:ro"]
                """,
                "shared/base.yaml": """
                services:
                  base:
                    build: ./base-image
                    environment: {LOG: debug}
                    depends_on: [nothing]
                """,
            ], ["app/compose.yaml"])
        #expect(c.services.map(\.name).sorted() == ["api", "db", "worker"])
        #expect(c.service("db")?.volumes.first?.source == "../shared/init.sql")
        let api = try #require(c.service("api"))
        #expect(api.image == "acme/api:1" && api.build?.context == "../shared/base-image")
        #expect(api.environment.map(\.key) == ["LOG"])
        #expect(api.dependsOn.map(\.service) == ["db"])  // the parent's depends_on is not inherited
        let worker = try #require(c.service("worker"))
        #expect(worker.command == ["work"] && worker.image == "acme/api:1")
    }

    @Test func missingIncludeAndUnknownExtendsAreErrors() throws {
        #expect(throws: SoError.self) {
            try flat(["c.yaml": "include: [nope.yaml]\nservices: {a: {image: x}}\n"], ["c.yaml"])
        }
        #expect(throws: SoError.self) { try flat(["c.yaml": "services:\n  a:\n    extends: ghost\n"], ["c.yaml"]) }
    }
}
