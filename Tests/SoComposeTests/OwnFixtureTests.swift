import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

@testable import SoCompose

/// The repository's own fixtures (Tests/Fixtures) load raw and interpolated with no warnings, and read as
/// written: laconic-layout compose files (pods, jobs, config binds) and plain compose projects (build,
/// secrets, configs, networks, profiles, include, extends, override files, env_file). They run in a fresh clone.
@Suite struct OwnFixtureTests {
    static let fs = LocalFileSystem()
    static let laconic = RepoPaths.laconicFixtures
    static let projects = RepoPaths.composeFixtures

    /// Every compose file of the laconic fixture, and every project's compose.yaml.
    static var paths: [String] {
        var out: [String] = []
        for sub in ["compose", "compose-jobs"] {
            let dir = Path.join(laconic, sub)
            out += ((try? fs.list(dir)) ?? []).filter { $0.hasSuffix(".yml") }.map { Path.join(dir, $0) }
        }
        out += ((try? fs.list(projects)) ?? []).compactMap { dir in
            ["compose.yaml", "docker-compose.yml"].map { Path.join(projects, dir, $0) }.first { fs.isFile($0) }
        }
        return out
    }

    /// A project's files merged as docker compose merges them (include, extends, `-f a -f b`), then loaded.
    func project(_ files: [String], env: [String: String]? = [:], sink: DiagnosticSink = DiagnosticSink()) throws
        -> ComposeFile
    {
        let paths = files.map { Path.join(Self.projects, $0) }
        guard try ComposeFlatten.needed(paths, fs: Self.fs) else {
            return try ComposeLoader.load(paths[0], fs: Self.fs, environment: env, diagnostics: sink)
        }
        let t = try TempDir("so-own-fixture")
        defer { t.cleanup() }
        let flat = Path.join(Path.dirname(paths[0]), "flat.yaml")
        try t.write("flat.yaml", try ComposeFlatten.flatten(paths, fs: Self.fs))
        let root = try #require(try YAMLFile.parse(try t.read("flat.yaml"), file: flat))
        return try ComposeLoader.decode(root, path: flat, environment: env, diagnostics: sink)
    }

    func laconicFile(_ relative: String, env: [String: String]? = [:]) throws -> ComposeFile {
        try ComposeLoader.load(
            Path.join(Self.laconic, relative), fs: Self.fs, environment: env, diagnostics: DiagnosticSink())
    }

    @Test func fixturesArePresent() {
        #expect(Self.paths.count == 13, "\(Self.paths)")
    }

    @Test(arguments: paths) func loadsCleanly(path: String) throws {
        for env in [nil, [:]] as [[String: String]?] {
            let sink = DiagnosticSink()
            let relative = String(path.dropFirst(Self.projects.count + 1))
            let file =
                path.hasPrefix(Self.projects + "/")
                ? try project([relative], env: env, sink: sink)
                : try ComposeLoader.load(path, fs: Self.fs, environment: env, diagnostics: sink)
            #expect(!file.services.isEmpty)
            #expect(sink.all.isEmpty, "\(sink.all)")
        }
    }

    @Test func relayPodAndJob() throws {
        let relay = try laconicFile("compose/docker-compose-relay.yml", env: ["RELAY_MODE": "cluster"]).services[0]
        #expect(relay.environment.map(\.value) == ["", "cluster", "hello from relay", "2"])
        #expect(relay.volumes.map(\.kind) == [.bind, .bind, .volume, .volume, .volume])
        #expect(relay.volumes.map(\.readOnly) == [false, false, false, false, true])
        #expect(relay.ports.map(\.containerPort) == [8080])
        let job = try laconicFile("compose-jobs/docker-compose-relay-migrate.yml").services[0]
        #expect(job.entrypoint == ["/bin/sh"])
        #expect(job.command == ["-c", "echo 'schema up to date'"])
    }

    @Test func observePods() throws {
        let dash = try laconicFile("compose/docker-compose-observe-dash.yml").services[0]
        #expect(dash.entrypoint == ["bash", "-c"])
        #expect(dash.command == ["/prepare.sh && /run.sh"])
        #expect(dash.user == "root")
        #expect(dash.environment.map(\.value) == ["", ""])
        #expect(dash.volumes.map(\.kind) == [.bind, .bind, .bind, .volume])
        #expect(dash.healthcheck?.test == ["CMD", "nc", "-vz", "localhost", "3000"])
        #expect(dash.healthcheck?.retries == 10)
        #expect(dash.extraHosts == ["host.docker.internal:host-gateway"])
        let raw = try laconicFile("compose/docker-compose-observe-dash.yml", env: nil).services[0]
        #expect(raw.environment.map(\.value) == ["${GF_SERVER_ROOT_URL}", "${OBSERVE_ALERT_IDS}"])
        let scrape = try laconicFile("compose/docker-compose-observe-scrape.yml", env: ["OBSERVE_RPC_KEY": "k"])
        #expect(scrape.services.map(\.name) == ["scraper", "prober", "head-exporter"])
        #expect(scrape.service("head-exporter")?.environment.map(\.value) == ["https://rpc.example.org/v1", "k"])
        #expect(scrape.service("head-exporter")?.workingDir == "/app/exporter")
    }

    @Test func gatewayPorts() throws {
        let g = try laconicFile("compose/docker-compose-gateway.yml")
        #expect(g.services[0].ports.map(\.containerPort) == [4001, 8080, 5001])
        #expect(
            g.services[0].ports[2]
                == ComposePort(hostIP: "0.0.0.0", hostPort: 5001, containerPort: 5001, raw: "0.0.0.0:5001:5001"))
        #expect(g.volumes.map(\.name) == ["gateway-import", "gateway-data"])
    }

    @Test func bookstoreSecretsConfigsNetworksBuild() throws {
        let b = try project(["bookstore/compose.yaml"])
        let db = try #require(b.service("db"))
        #expect(db.command == ["--character-set-server=utf8mb4"])
        #expect(
            db.healthcheck?.test?[1]
                == "mariadb-admin ping -h 127.0.0.1 --password=\"$(cat /run/secrets/db-password)\" --silent")
        #expect(db.expose.map(\.containerPort) == [3306])
        #expect(b.service("api")?.dependsOn == [ComposeDependency(service: "db", condition: "service_healthy")])
        #expect(b.service("api")?.build == ComposeBuild(context: "api", target: "builder"))
        #expect(b.service("proxy")?.build == ComposeBuild(context: "proxy"))
        #expect(b.service("proxy")?.configs.map(\.target) == ["/etc/nginx/conf.d/default.conf"])
        #expect(b.secrets == [ComposeTopLevelResource(name: "db-password", file: "db/password.txt", line: 59)])
        #expect(b.configs.map(\.file) == ["proxy/default.conf"])
        #expect(b.networks == ["back", "front"])
        let raw = try project(["bookstore/compose.yaml"], env: nil)
        #expect(raw.service("db")?.healthcheck?.test?[1].contains("$$(cat") == true)
    }

    @Test func dnsPairPortsAndNetworks() throws {
        let d = try project(["dns-pair/compose.yaml"], env: ["TIMEZONE": "UTC"])
        let doh = try #require(d.service("doh"))
        #expect(doh.ports.map(\.proto) == [.tcp, .udp])
        #expect(doh.environment[0] == EnvEntry(key: "TZ", value: "UTC", line: 11))
        #expect(doh.otherKeys.map(\.key) == ["container_name"])
        #expect(doh.networks == ["dns-net"])
        #expect(d.service("filter")?.environment[1].value == "172.28.0.2#5053;9.9.9.9")
        #expect(d.service("filter")?.environment[3].value == "lan")
        #expect(d.service("filter")?.capAdd == ["NET_ADMIN"])
    }

    @Test func counterOverrideAndEnvFile() throws {
        let base = try project(["counter/compose.yaml"])
        let web = try #require(base.service("web"))
        #expect(web.build == ComposeBuild(context: ".", target: "runtime"))
        #expect(web.volumes.first?.kind == .bind)
        #expect(web.envFiles == [ComposeEnvFile(path: "app.env")])
        #expect(web.ports.map(\.hostPort) == [8000])
        let merged = try project(["counter/compose.yaml", "counter/compose.override.yaml"])
        let mweb = try #require(merged.service("web"))
        #expect(mweb.ports.map(\.hostPort) == [8001])
        #expect(mweb.environment.map(\.key) == ["STORE_HOST", "COUNTER_LOG"])
    }

    @Test func layeredIncludeExtendsProfiles() throws {
        let l = try project(["layered/compose.yaml"])
        #expect(Set(l.services.map(\.name)) == ["api", "worker", "debugger", "cache"])
        let api = try #require(l.service("api"))
        #expect(api.restart == "unless-stopped")
        #expect(
            Dictionary(uniqueKeysWithValues: api.environment.map { ($0.key, $0.value ?? "") }) == [
                "LOG_FORMAT": "json", "CACHE_URL": "redis://cache:6379/0", "ROLE": "api",
            ])
        #expect(api.healthcheck?.test == ["CMD", "wget", "-qO-", "http://localhost:9000/ready"])
        #expect(l.service("debugger")?.profiles == ["debug"])
        #expect(l.volumes.map(\.name) == ["cache-data"])
        let prod = try project(["layered/compose.yaml", "layered/compose.prod.yaml"])
        #expect(prod.service("api")?.environment.first { $0.key == "LOG_FORMAT" }?.value == "text")
        #expect(prod.service("api")?.deploy?.replicas == 3)
        #expect(prod.service("worker")?.deploy?.limits != nil)
    }
}
