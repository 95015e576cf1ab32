import Foundation
import SoBasics
import SoCompose
import SoSystem
import Testing

/// Real-world compose files from the shared fixtures load raw and interpolated, with no warnings.
/// This suite is about that corpus: it is reported skipped when ../shared is not beside the checkout
/// (the same shapes are covered by OwnFixtureTests over Tests/Fixtures).
@Suite(
    .enabled(
        if: Fixtures.present, "../shared/fixtures is absent (a fresh clone): the suite over laconic's corpus is skipped"
    ))
struct FixtureTests {
    static let fs = LocalFileSystem()

    static var paths: [String] {
        let real = (try? fs.list(Fixtures.composeReal)) ?? []
        var out = real.map { Path.join(Fixtures.composeReal, $0, "compose.yaml") }.filter { fs.isFile($0) }
        for sub in ["compose", "compose-jobs"] {
            let dir = Path.join(Fixtures.laconic, sub)
            out += ((try? fs.list(dir)) ?? []).filter { $0.hasSuffix(".yml") }.map { Path.join(dir, $0) }
        }
        return out
    }

    func load(_ relative: String, env: [String: String]? = [:]) throws -> ComposeFile {
        try ComposeLoader.load(
            Path.join(Fixtures.shared, relative), fs: Self.fs, environment: env, diagnostics: DiagnosticSink())
    }

    @Test func fixturesArePresent() {
        #expect(Self.paths.count >= 13, "\(Self.paths)")
    }

    @Test(arguments: paths) func loadsCleanly(path: String) throws {
        for env in [nil, [:]] as [[String: String]?] {
            let sink = DiagnosticSink()
            let file = try ComposeLoader.load(path, fs: Self.fs, environment: env, diagnostics: sink)
            #expect(!file.services.isEmpty)
            #expect(sink.all.isEmpty, "\(sink.all)")
        }
    }

    @Test func grafana() throws {
        let g = try load("laconic-stacks/compose/docker-compose-grafana.yml").services[0]
        #expect(g.entrypoint == ["bash", "-c"])
        #expect(g.command == ["/update-grafana-alerts-config.sh && /run.sh"])
        #expect(g.user == "root")
        #expect(g.environment.map(\.value) == ["", ""])
        #expect(g.volumes.map(\.kind) == [.bind, .bind, .bind, .volume])
        #expect(g.healthcheck?.test == ["CMD", "nc", "-vz", "localhost", "3000"])
        #expect(g.healthcheck?.retries == 10)
        #expect(g.extraHosts == ["host.docker.internal:host-gateway"])
        let raw = try load("laconic-stacks/compose/docker-compose-grafana.yml", env: nil).services[0]
        #expect(raw.environment.map(\.value) == ["${GF_SERVER_ROOT_URL}", "${CERC_GRAFANA_ALERTS_SUBGRAPH_IDS}"])
    }

    @Test func kubo() throws {
        let k = try load("laconic-stacks/compose/docker-compose-kubo.yml")
        #expect(k.services[0].ports.map(\.containerPort) == [4001, 8080, 5001])
        #expect(
            k.services[0].ports[2]
                == ComposePort(hostIP: "0.0.0.0", hostPort: 5001, containerPort: 5001, raw: "0.0.0.0:5001:5001"))
        #expect(k.volumes.map(\.name) == ["ipfs-import", "ipfs-data"])
    }

    @Test func laconicTestStack() throws {
        let withConfig = try load(
            "laconic-stacks/compose/docker-compose-test.yml", env: ["CERC_TEST_PARAM_1": "PASSED"]
        ).services[0]
        #expect(withConfig.environment.map(\.value) == ["", "PASSED", "CERC_TEST_PARAM_2_VALUE", "FAILED"])
        #expect(withConfig.volumes.map(\.readOnly) == [false, false, false, false, true])
        let job = try load("laconic-stacks/compose-jobs/docker-compose-test-job.yml").services[0]
        #expect(job.entrypoint == ["/bin/sh"])
        #expect(job.command == ["-c", "echo 'Job completed successfully'"])
        let prom = try load("laconic-stacks/compose/docker-compose-prom-server.yml", env: ["CERC_INFURA_KEY": "k"])
        #expect(
            prom.service("ethereum-chain-head-exporter")?.environment.map(\.value) == [
                "https://mainnet.infura.io/v3", "k",
            ])
    }

    @Test func awesomeCompose() throws {
        let mysql = try load("compose-real/nginx-flask-mysql/compose.yaml")
        let db = try #require(mysql.service("db"))
        #expect(db.command == ["--default-authentication-plugin=mysql_native_password"])
        #expect(
            db.healthcheck?.test?[1]
                == "mysqladmin ping -h 127.0.0.1 --password=\"$(cat /run/secrets/db-password)\" --silent")
        #expect(db.expose.map(\.containerPort) == [3306, 33060])
        #expect(mysql.service("backend")?.dependsOn == [ComposeDependency(service: "db", condition: "service_healthy")])
        #expect(mysql.service("proxy")?.build == ComposeBuild(context: "proxy"))
        #expect(mysql.secrets == [ComposeTopLevelResource(name: "db-password", file: "db/password.txt", line: 57)])
        #expect(mysql.networks == ["backnet", "frontnet"])
        let rawMysql = try load("compose-real/nginx-flask-mysql/compose.yaml", env: nil)
        #expect(rawMysql.service("db")?.healthcheck?.test?[1].contains("$$(cat") == true)

        let pihole = try load("compose-real/pihole-cloudflared-DoH/compose.yaml", env: ["TIMEZONE": "UTC"])
        let cf = try #require(pihole.service("cloudflared"))
        #expect(cf.ports.map(\.proto) == [.tcp, .udp])
        #expect(cf.environment[0] == EnvEntry(key: "TZ", value: "UTC", line: 10))
        #expect(cf.otherKeys.map(\.key) == ["container_name"])
        #expect(pihole.service("pihole")?.environment[1].value == "172.20.0.2#5054;1.1.1.1")
        #expect(pihole.service("pihole")?.capAdd == ["NET_ADMIN"])

        let flask = try load("compose-real/flask-redis/compose.yaml")
        #expect(flask.service("web")?.volumes.first?.kind == .bind)
        #expect(flask.service("web")?.build == ComposeBuild(context: ".", target: "builder"))
        let gitea = try load("compose-real/gitea-postgres/compose.yaml")
        #expect(gitea.service("gitea")?.environment.first == EnvEntry(key: "DB_TYPE", value: "postgres", line: 5))
        #expect(gitea.volumes.map(\.name) == ["db_data", "git_data"])
    }
}
