import Foundation
import Testing
import SoBasics
import SoCompose
import SoTestSupport

func compose(_ text: String, env: [String: String]? = nil, sink: DiagnosticSink = DiagnosticSink()) throws -> ComposeFile {
    let root = try #require(try YAMLFile.parse(text, file: "c.yml"))
    return try ComposeLoader.decode(root, path: "/x/c.yml", environment: env, diagnostics: sink)
}

@Suite struct ComposeLoaderTests {
    @Test func environmentFormsAndTypes() throws {
        let map = try compose("services:\n  s:\n    image: i\n    environment:\n      PORT: 8080\n      DEBUG: true\n      MODE: '0755'\n      OCT: 0755\n      T: 22:22\n      X:\n").services[0]
        #expect(map.environment.map(\.key) == ["PORT", "DEBUG", "MODE", "OCT", "T", "X"])
        #expect(map.environment.map(\.value) == ["8080", "true", "0755", "0755", "22:22", nil])
        let list = try compose("services:\n  s:\n    image: i\n    environment:\n      - A=1\n      - B\n      - C=\n      - D=x=y\n").services[0]
        #expect(list.environment.map(\.value) == ["1", nil, "", "x=y"])
    }

    @Test func interpolationUsesOnlyTheGivenEnvironment() throws {
        let text = "services:\n  s:\n    image: i:${TAG:-latest}\n    environment:\n      H: ${HOME:-fallback}\n      E: ${UNSET}\n      R: $${RAW}\n"
        let cooked = try compose(text, env: ["TAG": "1.2"]).services[0]
        #expect(cooked.image == "i:1.2")
        #expect(cooked.environment.map(\.value) == ["fallback", "", "${RAW}"])
        let raw = try compose(text).services[0]
        #expect(raw.image == "i:${TAG:-latest}")
        #expect(raw.environment[0].value == "${HOME:-fallback}")
    }

    @Test func interpolationErrorsCarryTheLine() {
        #expect { try compose("services:\n  s:\n    image: i\n    environment:\n      A: ${NEED:?set it}\n", env: [:]) } throws: {
            ($0 as! SoError).line == "/x/c.yml:5: required variable NEED is missing: set it"
        }
    }

    @Test func ports() throws {
        let s = try compose("""
        services:
          s:
            image: i
            ports:
              - "80"
              - 8443
              - "53/udp"
              - "8080:80"
              - "127.0.0.1:9000:9000"
              - "127.0.0.1::7000"
              - "[::1]:6000:6000"
              - "3000-3002:4000-4002"
              - target: 5000
                published: "5001"
                host_ip: 0.0.0.0
                protocol: udp
        """).services[0]
        #expect(s.ports.map(\.containerPort) == [80, 8443, 53, 80, 9000, 7000, 6000, 4000, 4001, 4002, 5000])
        #expect(s.ports[2].proto == "udp")
        #expect(s.ports[3].hostPort == "8080" && s.ports[3].hostIP == nil)
        #expect(s.ports[4].hostIP == "127.0.0.1" && s.ports[4].hostPort == "9000")
        #expect(s.ports[5].hostIP == "127.0.0.1" && s.ports[5].hostPort == nil)
        #expect(s.ports[6].hostIP == "::1")
        #expect(s.ports[8].hostPort == "3001")
        #expect(s.ports[10].raw == "0.0.0.0:5001:5000/udp")
        for bad in ["\"a:b\"", "\"1:2:3:4\"", "\"80/xyz\"", "\"70000\"", "\"1-3:1-2\""] {
            #expect(throws: SoError.self, "\(bad)") { try compose("services:\n  s:\n    image: i\n    ports:\n      - \(bad)\n") }
        }
    }

    @Test func volumes() throws {
        let s = try compose("""
        services:
          s:
            image: i
            volumes:
              - data:/data
              - ./conf:/etc/conf:ro
              - ../config/x/f.sh:/f.sh:ro,z
              - /scratch
              - type: bind
                source: ./site
                target: /srv
                read_only: true
              - type: tmpfs
                target: /tmp
        """).services[0]
        #expect(s.volumes.map(\.kind) == [.volume, .bind, .bind, .volume, .bind, .tmpfs])
        #expect(s.volumes.map(\.readOnly) == [false, true, true, false, true, false])
        #expect(s.volumes[3].source == nil)
        #expect(s.volumes[0].line == 5)
    }

    @Test func commandsHealthDependsDeployLabels() throws {
        let s = try compose("""
        services:
          s:
            image: i
            entrypoint: /bin/sh -c
            command: ["echo", "hi there"]
            healthcheck:
              test: curl -f http://localhost/
              interval: 30s
              retries: 3
              start_period: 5s
            depends_on:
              db:
                condition: service_healthy
            deploy:
              replicas: 2
              resources:
                limits: {cpus: 0.5, memory: 512M}
            labels:
              - a=b
            user: 1000
          t:
            image: i
            command: |
              "/update.sh && /run.sh"
            depends_on: [s]
            labels: {x: y}
        """).services
        #expect(s[0].entrypoint == ["/bin/sh", "-c"])
        #expect(s[0].command == ["echo", "hi there"])
        #expect(s[0].healthcheck == ComposeHealthcheck(test: ["CMD-SHELL", "curl -f http://localhost/"], interval: "30s", retries: 3, startPeriod: "5s"))
        #expect(s[0].dependsOn == [ComposeDependency(service: "db", condition: "service_healthy")])
        #expect(s[0].deploy == ComposeDeploy(replicas: 2, limits: ComposeResources(cpus: "0.5", memory: "512M")))
        #expect(s[0].labels.map { "\($0.0)=\($0.1)" } == ["a=b"])
        #expect(s[0].user == "1000")
        #expect(s[1].command == ["/update.sh && /run.sh"])
        #expect(s[1].dependsOn == [ComposeDependency(service: "s")])
    }

    @Test func unknownKeysWarnAndWrongTypesFail() throws {
        let sink = DiagnosticSink()
        _ = try compose("services:\n  s:\n    image: i\n    enviroment:\n      A: 1\n    x-note: ok\n", sink: sink)
        #expect(sink.all.map(\.description) == ["warning: c.yml:4: unknown key 'enviroment' in service 's' (did you mean 'environment'?)"])
        #expect { try compose("services:\n  s:\n    image: i\n    ports: 80\n") } throws: { ($0 as! SoError).line.hasPrefix("c.yml:4:") }
        #expect { try compose("services:\n  s:\n    image: i\n    environment: 5\n") } throws: { ($0 as! SoError).line.hasPrefix("c.yml:4:") }
        #expect(throws: SoError.self) { try compose("version: '3'\n") }
        #expect(throws: SoError.self) { try compose("services:\n  s:\n    depends_on:\n      db: {condition: sometimes}\n") }
    }

    /// Real files: every compose file of the shared fixtures loads raw and interpolated, with no unknown keys.
    @Test func sharedFixturesLoadCleanly() throws {
        let fs = LocalFileSystem()
        var paths: [String] = []
        for dir in try fs.list(RepoPaths.composeReal) where fs.isDirectory(Path.join(RepoPaths.composeReal, dir)) {
            paths.append(Path.join(RepoPaths.composeReal, dir, "compose.yaml"))
        }
        for sub in ["compose", "compose-jobs"] {
            paths += try fs.list(Path.join(RepoPaths.laconicStacks, sub)).map { Path.join(RepoPaths.laconicStacks, sub, $0) }
        }
        #expect(paths.count >= 13)
        for p in paths {
            let sink = DiagnosticSink()
            _ = try ComposeLoader.load(p, fs: fs, environment: nil, diagnostics: sink)
            _ = try ComposeLoader.load(p, fs: fs, environment: [:], diagnostics: sink)
            #expect(sink.all.isEmpty, "\(p): \(sink.all)")
        }
        let grafana = try ComposeLoader.load(Path.join(RepoPaths.laconicStacks, "compose/docker-compose-grafana.yml"), fs: fs, environment: [:], diagnostics: DiagnosticSink())
        #expect(grafana.services[0].command == ["/update-grafana-alerts-config.sh && /run.sh"])
        let kubo = try ComposeLoader.load(Path.join(RepoPaths.laconicStacks, "compose/docker-compose-kubo.yml"), fs: fs, environment: nil, diagnostics: DiagnosticSink())
        #expect(kubo.services[0].ports[2] == ComposePort(hostIP: "0.0.0.0", hostPort: "5001", containerPort: 5001, raw: "0.0.0.0:5001:5001"))
    }
}
