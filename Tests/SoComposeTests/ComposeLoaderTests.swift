import Foundation
import SoBasics
import SoCompose
import SoSystem
import Testing

// Over 400 lines on purpose: one suite of the loader's behaviour, key by key, with each fixture written
// beside its test; splitting it would separate the cases of one key from one another.

@Suite struct ComposeLoaderTests {
    @Test func topLevel() throws {
        let sink = DiagnosticSink()
        let f = try compose(
            """
            version: "3.7"
            name: demo
            include:
              - other.yml
            x-common: &common
              image: busybox
            services:
              a:
                <<: *common
              b: {image: "nginx:1.27"}
              c:
            volumes:
              data:
              ext:
                external: true
              legacy:
                external: {name: real}
              opts: {driver: local, driver_opts: {type: none}, labels: [a=b], name: x}
            networks:
              front:
              back: {driver: bridge, ipam: {config: [{subnet: 10.0.0.0/24}]}}
            secrets:
              pw: {file: ./pw.txt}
              env: {environment: PW}
              outside: {external: true}
            configs:
              inline:
                content: |
                  hello
              plain:
            models:
              m: {model: ai/x}
            """, sink: sink)
        #expect(sink.all.isEmpty, "\(sink.all)")
        #expect(f.name == "demo")
        #expect(f.directory == ".")
        #expect(f.services.map(\.name) == ["a", "b", "c"])
        #expect(f.services.map(\.line) == [8, 10, 11])
        #expect(f.services.map(\.image) == ["busybox", "nginx:1.27", nil])
        #expect(f.service("b")?.image == "nginx:1.27" && f.service("z") == nil)
        #expect(
            f.volumes == [
                ComposeNamedVolume(name: "data", line: 13), ComposeNamedVolume(name: "ext", external: true, line: 14),
                ComposeNamedVolume(name: "legacy", external: true, line: 16),
                ComposeNamedVolume(name: "opts", line: 18),
            ])
        #expect(f.networks == ["front", "back"])
        #expect(
            f.secrets == [
                ComposeTopLevelResource(name: "pw", file: "./pw.txt", line: 23),
                ComposeTopLevelResource(name: "env", environment: "PW", line: 24),
                ComposeTopLevelResource(name: "outside", external: true, line: 25),
            ])
        #expect(
            f.configs == [
                ComposeTopLevelResource(name: "inline", content: "hello\n", line: 27),
                ComposeTopLevelResource(name: "plain", line: 30),
            ])
    }

    @Test func filesWithoutServicesFail() {
        let e = soError { _ = try compose("version: '3'\nvolumes: {}\n") }
        #expect(e?.message == "compose file has no services")
        #expect(e?.hint != nil)
        #expect(soError { _ = try compose("services:\n") }?.message == "compose file has no services")
        #expect(soError { _ = try compose("- a\n- b\n") }?.message == "compose file must be a mapping, not a list")
        #expect(
            soError { _ = try compose("services:\n  'bad name':\n    image: i\n") }?.line
                == "c.yml:2: invalid service name 'bad name'")
        #expect(soError { _ = try compose("services: [a]\n") }?.location?.line == 1)
    }

    @Test func loadReadsFromTheFileSystem() throws {
        let dir = NSTemporaryDirectory() + "socompose-\(UUID().uuidString)"
        let fs = LocalFileSystem()
        defer { try? fs.removeTree(dir) }
        try fs.writeText("services:\n  web:\n    image: nginx:${TAG:-1}\n", to: dir + "/compose.yml")
        try fs.writeText("# nothing\n", to: dir + "/empty.yml")
        let f = try ComposeLoader.load(
            dir + "/compose.yml", fs: fs, environment: ["TAG": "2"], diagnostics: DiagnosticSink())
        #expect(f.path == dir + "/compose.yml" && f.directory == dir)
        #expect(f.services[0].image == "nginx:2")
        #expect(
            soError {
                _ = try ComposeLoader.load(dir + "/empty.yml", fs: fs, environment: nil, diagnostics: DiagnosticSink())
            }?.message == "compose file is empty")
        #expect(
            soError {
                _ = try ComposeLoader.load(
                    dir + "/missing.yml", fs: fs, environment: nil, diagnostics: DiagnosticSink())
            }?.message.hasPrefix("compose file not found") == true)
    }

    @Test func environmentMapTypesKeepTheirText() throws {
        let s = try service(
            """
            image: i
            environment:
              PORT: 8080
              DEBUG: true
              ANSWER: yes
              RATIO: 0.50
              MODE: '0755'
              OCT: 0755
              T: 22:22
              X:
              TILDE: ~
              EMPTY: ""
              HEX: 0x1F
              BIG: 1e3
            """)
        #expect(
            s.environment.map(\.key) == [
                "PORT", "DEBUG", "ANSWER", "RATIO", "MODE", "OCT", "T", "X", "TILDE", "EMPTY", "HEX", "BIG",
            ])
        #expect(
            s.environment.map(\.value) == [
                "8080", "true", "yes", "0.50", "0755", "0755", "22:22", nil, nil, "", "0x1F", "1e3",
            ])
        #expect(s.environment.map(\.line) == [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16])
    }

    @Test func environmentListForm() throws {
        let s = try service("image: i\nenvironment:\n  - A=1\n  - B\n  - C=\n  - D=x=y\n  - E= spaced \n  - F=22:22")
        #expect(s.environment.map(\.key) == ["A", "B", "C", "D", "E", "F"])
        #expect(s.environment.map(\.value) == ["1", nil, "", "x=y", " spaced", "22:22"])
        #expect(s.environment.map(\.line) == [5, 6, 7, 8, 9, 10])
        #expect(soError { _ = try service("image: i\nenvironment:\n  - =x") }?.location?.line == 5)
    }

    @Test func environmentWrongTypes() {
        #expect(
            soError { _ = try service("image: i\nenvironment: 5") }?.line.hasPrefix(
                "c.yml:4: 'environment' of service 's' must be a mapping or a list") == true)
        #expect(soError { _ = try service("image: i\nenvironment:\n  A: [1, 2]") }?.location?.line == 5)
        #expect(soError { _ = try service("image: i\nenvironment:\n  - {A: 1}") }?.location?.line == 5)
    }

    @Test func envFiles() throws {
        #expect(try service("env_file: .env").envFiles == [ComposeEnvFile(path: ".env")])
        #expect(
            try service("env_file: [a.env, b.env]").envFiles == [
                ComposeEnvFile(path: "a.env"), ComposeEnvFile(path: "b.env"),
            ])
        let s = try service(
            "env_file:\n  - path: ./default.env\n    required: true\n  - path: ./override.env\n    required: false\n  - path: x.env\n    format: raw\n  - plain.env"
        )
        #expect(
            s.envFiles == [
                ComposeEnvFile(path: "./default.env"), ComposeEnvFile(path: "./override.env", required: false),
                ComposeEnvFile(path: "x.env"), ComposeEnvFile(path: "plain.env"),
            ])
        #expect(
            soError { _ = try service("env_file:\n  - required: false") }?.message
                == "an env_file entry is missing 'path'")
    }

    @Test func entrypointAndCommand() throws {
        let s = try service(
            """
            entrypoint: /bin/sh -c
            command: ["echo", "hi there", 5, true]
            """)
        #expect(s.entrypoint == ["/bin/sh", "-c"])
        #expect(s.command == ["echo", "hi there", "5", "true"])
        #expect(try service("command: sh -c 'echo \"a b\" && ls'").command == ["sh", "-c", "echo \"a b\" && ls"])
        #expect(try service("command: |\n  \"/update.sh && /run.sh\"\n").command == ["/update.sh && /run.sh"])
        #expect(try service("command: >\n  sh -c\n  'a && b'\n").command == ["sh", "-c", "a && b"])
        #expect(
            try service("command: '--default-authentication-plugin=mysql_native_password'").command == [
                "--default-authentication-plugin=mysql_native_password"
            ])
        #expect(try service("command: []").command == [])
        #expect(try service("image: i").command == nil)
        #expect(soError { _ = try service("image: i\ncommand: echo 'open") }?.location?.line == 4)
        #expect(soError { _ = try service("image: i\nentrypoint: {a: b}") }?.location?.line == 4)
    }

    @Test func healthchecks() throws {
        let h = try #require(
            try service(
                """
                healthcheck:
                  test: curl -f http://localhost/ || exit 1
                  interval: 30s
                  timeout: 5s
                  retries: 3
                  start_period: 5s
                  start_interval: 1s
                """
            ).healthcheck)
        #expect(
            h
                == ComposeHealthcheck(
                    test: ["CMD-SHELL", "curl -f http://localhost/ || exit 1"], interval: "30s", timeout: "5s",
                    retries: 3,
                    startPeriod: "5s", startInterval: "1s"))
        #expect(
            try service("healthcheck:\n  test: [\"CMD\", \"nc\", \"-vz\", \"localhost\", \"3000\"]").healthcheck?.test
                == ["CMD", "nc", "-vz", "localhost", "3000"])
        #expect(try service("healthcheck:\n  test: [\"NONE\"]").healthcheck?.test == ["NONE"])
        #expect(try service("healthcheck:\n  disable: true").healthcheck == ComposeHealthcheck(disable: true))
        #expect(soError { _ = try service("image: i\nhealthcheck:\n  retries: many") }?.location?.line == 5)
        #expect(soError { _ = try service("image: i\nhealthcheck: curl") }?.location?.line == 4)
    }

    @Test func dependsOn() throws {
        #expect(
            try service("depends_on: [db, cache]").dependsOn == [
                ComposeDependency(service: "db"), ComposeDependency(service: "cache"),
            ])
        let s = try service(
            """
            depends_on:
              db:
                condition: service_healthy
                restart: true
              migrate:
                condition: service_completed_successfully
                required: false
              cache:
            """)
        #expect(
            s.dependsOn == [
                ComposeDependency(service: "db", condition: "service_healthy", restart: true),
                ComposeDependency(service: "migrate", condition: "service_completed_successfully", required: false),
                ComposeDependency(service: "cache"),
            ])
        let e = soError { _ = try service("image: i\ndepends_on:\n  db: {condition: sometimes}") }
        #expect(e?.line == "c.yml:5: unknown depends_on condition 'sometimes'")
        #expect(soError { _ = try service("image: i\ndepends_on: db") }?.location?.line == 4)
    }

    @Test func deploy() throws {
        let s = try service(
            """
            deploy:
              mode: replicated
              replicas: 2
              resources:
                limits: {cpus: 0.5, memory: 512M, pids: 100}
                reservations:
                  cpus: '0.25'
                  memory: 128M
                  devices: [{capabilities: [gpu]}]
              restart_policy: {condition: on-failure}
              placement: {constraints: [node.role==manager]}
              update_config: {parallelism: 1}
            """)
        #expect(
            s.deploy
                == ComposeDeploy(
                    replicas: 2, limits: ComposeResources(cpus: "0.5", memory: "512M"),
                    reservations: ComposeResources(cpus: "0.25", memory: "128M")))
        #expect(try service("deploy: {}").deploy == ComposeDeploy())
        #expect(soError { _ = try service("image: i\ndeploy:\n  replicas: two") }?.location?.line == 5)
    }

    @Test func labelsNetworksHostsAndRefs() throws {
        let s = try service(
            """
            labels:
              - a=b
              - flag
              - c=d=e
            networks:
              front:
                aliases: [web]
              back:
            extra_hosts:
              - "host.docker.internal:host-gateway"
            secrets:
              - pw
              - source: cert
                target: /etc/cert.pem
                uid: "103"
                gid: 103
                mode: 0440
            configs: [conf]
            """)
        #expect(s.labels.map { "\($0.0)=\($0.1)" } == ["a=b", "flag=", "c=d=e"])
        #expect(s.networks == ["front", "back"])
        #expect(s.extraHosts == ["host.docker.internal:host-gateway"])
        #expect(
            s.secrets == [
                ComposeServiceResourceRef(source: "pw"),
                ComposeServiceResourceRef(
                    source: "cert", target: "/etc/cert.pem", mode: "0440", uid: "103", gid: "103"),
            ])
        #expect(s.configs == [ComposeServiceResourceRef(source: "conf")])
        let t = try service(
            "labels: {x: y, n: 1, e: }\nnetworks: [a, b]\nextra_hosts: {db: 10.0.0.2, multi: [\"::1\", 10.0.0.3]}")
        #expect(t.labels.map { "\($0.0)=\($0.1)" } == ["x=y", "n=1", "e="])
        #expect(t.networks == ["a", "b"])
        #expect(t.extraHosts == ["db:10.0.0.2", "multi:::1", "multi:10.0.0.3"])
    }

    @Test func simpleFields() throws {
        let s = try service(
            """
            image: nginx
            build:
              context: ./app
              dockerfile: Dockerfile.dev
              target: builder
              args:
                - VERSION=1
                - BARE
              cache_from: [x]
            user: 1000:1000
            working_dir: /app
            restart: unless-stopped
            network_mode: host
            expose: [3306, "33060"]
            cap_add: [NET_ADMIN]
            cap_drop: [ALL]
            privileged: true
            read_only: false
            profiles: [debug]
            container_name: web
            tty: true
            ulimits: {nofile: {soft: 1, hard: 2}}
            stop_signal: SIGINT
            """, env: [:])
        #expect(
            s.build
                == ComposeBuild(
                    context: "./app", dockerfile: "Dockerfile.dev", args: ["VERSION": "1", "BARE": ""],
                    target: "builder"))
        #expect(s.user == "1000:1000")
        #expect(s.workingDir == "/app" && s.restart == "unless-stopped" && s.networkMode == "host")
        #expect(s.expose.map(\.containerPort) == [3306, 33060])
        #expect(s.capAdd == ["NET_ADMIN"] && s.capDrop == ["ALL"])
        #expect(s.privileged == true && s.readOnly == false)
        #expect(s.profiles == ["debug"])
        #expect(s.otherKeys.map(\.key) == ["container_name", "tty", "ulimits", "stop_signal"])
        #expect(s.otherKeys.map(\.line) == [22, 23, 24, 25])
        #expect(try service("build: .").build == ComposeBuild(context: "."))
        #expect(try service("build: {args: {A: 1}}").build == ComposeBuild(context: ".", args: ["A": "1"]))
        #expect(try service("user: 0").user == "0")
        let bare = try compose("services:\n  s:\n").services[0]
        #expect(bare.image == nil && bare.build == nil && bare.environment.isEmpty)
    }

    @Test func everyComposeSpecServiceKeyIsAccepted() throws {
        let keys = [
            "annotations", "attach", "blkio_config", "build", "cap_add", "cap_drop", "cgroup", "cgroup_parent",
            "command", "configs",
            "container_name", "cpu_count", "cpu_percent", "cpu_period", "cpu_quota", "cpu_rt_period", "cpu_rt_runtime",
            "cpu_shares",
            "cpus", "cpuset", "credential_spec", "depends_on", "deploy", "develop", "device_cgroup_rules", "devices",
            "dns", "dns_opt",
            "dns_search", "domainname", "entrypoint", "env_file", "environment", "expose", "extends", "external_links",
            "extra_hosts",
            "gpus", "group_add", "healthcheck", "hostname", "image", "init", "ipc", "isolation", "label_file", "labels",
            "links",
            "logging", "mac_address", "mem_limit", "mem_reservation", "mem_swappiness", "memswap_limit", "models",
            "network_mode",
            "networks", "oom_kill_disable", "oom_score_adj", "pid", "pids_limit", "platform", "ports", "post_start",
            "pre_stop",
            "privileged", "profiles", "provider", "pull_policy", "pull_refresh_after", "read_only", "restart",
            "runtime", "scale",
            "secrets", "security_opt", "shm_size", "stdin_open", "stop_grace_period", "stop_signal", "storage_opt",
            "sysctls",
            "tmpfs", "tty", "ulimits", "use_api_socket", "user", "userns_mode", "uts", "volumes", "volumes_from",
            "working_dir",
        ]
        let sink = DiagnosticSink()
        let s = try service(keys.map { "\($0): null" }.joined(separator: "\n"), sink: sink)
        #expect(sink.all.isEmpty, "\(sink.all)")
        #expect(keys.count == 92)
        #expect(s.otherKeys.count == 66)  // the other 26 are modelled
        #expect(s.otherKeys.allSatisfy { $0.line != nil })
    }

    @Test func unknownKeysWarnWithSuggestions() throws {
        let sink = DiagnosticSink()
        _ = try compose(
            """
            services:
              s:
                image: i
                enviroment:
                  A: 1
                x-note: ok
                helthcheck:
                  test: x
                deploy:
                  replica: 2
                depends_on:
                  db: {condition: service_started, restarts: true}
            volumes:
              v: {drivr: local}
            servces: {}
            x-top: ok
            """, sink: sink)
        // Nested sections report as they finish; compare without order.
        #expect(
            Set(sink.all.map(\.description)) == [
                "warning: c.yml:4: unknown key 'enviroment' in service 's' (did you mean 'environment'?)",
                "warning: c.yml:7: unknown key 'helthcheck' in service 's' (did you mean 'healthcheck'?)",
                "warning: c.yml:10: unknown key 'replica' in 'deploy' of service 's' (did you mean 'replicas'?)",
                "warning: c.yml:12: unknown key 'restarts' in depends_on 'db' (did you mean 'restart'?)",
                "warning: c.yml:14: unknown key 'drivr' in volumes 'v' (did you mean 'driver'?)",
                "warning: c.yml:15: unknown key 'servces' in compose file (did you mean 'services'?)",
            ])
        #expect(sink.all.count == 6)
    }

    @Test func wrongTypesNameTheLine() {
        let cases: [(String, Int)] = [
            ("image: i\nports: 80", 4),
            ("image: i\nenvironment: 5", 4),
            ("image: [a]", 3),
            ("image: i\nvolumes: /data", 4),
            ("image: i\nprivileged: sometimes", 4),
            ("image: i\ncap_add: {a: b}", 4),
            ("image: i\nlabels: 5", 4),
            ("image: i\nsecrets: pw", 4),
            ("image: i\nsecrets:\n  - target: /x", 5),
            ("image: i\nbuild: [a]", 4),
            ("image: i\nexpose: 80", 4),
            ("image: i\ndeploy:\n  resources:\n    limits: 1", 6),
            ("image: i\nextra_hosts: host:ip", 4),
            ("image: i\nnetworks: front", 4),
            ("image: i\nenv_file: {path: x}", 4),
        ]
        for (body, line) in cases {
            let e = soError { _ = try service(body) }
            #expect(e?.location == SourceLocation(file: "c.yml", line: line), "\(body)")
            #expect(e?.hint != nil, "\(body)")
        }
        #expect(
            soError { _ = try service("image: i\nports: 80") }?.line
                == "c.yml:4: 'ports' of service 's' must be a list, not a scalar")
    }

    @Test func interpolationUsesOnlyTheGivenEnvironment() throws {
        let text = """
            services:
              s:
                image: i:${TAG:-latest}
                environment:
                  H: ${HOME:-fallback}
                  P: ${PATH}
                  E: ${UNSET}
                  R: $${RAW}
                  ${KEY}: kept
                ports:
                  - "${PORT:-8080}:80"
                deploy:
                  replicas: ${REPLICAS:-1}
                command: echo "$$HOME" ${WORD}
            """
        let cooked = try compose(text, env: ["TAG": "1.2", "REPLICAS": "3", "WORD": "two words"]).services[0]
        #expect(cooked.image == "i:1.2")
        #expect(cooked.environment.map(\.key) == ["H", "P", "E", "R", "${KEY}"])
        #expect(cooked.environment.map(\.value) == ["fallback", "", "", "${RAW}", "kept"])
        #expect(cooked.ports[0].hostPort == 8080)
        #expect(cooked.deploy?.replicas == 3)
        #expect(cooked.command == ["echo", "$HOME", "two", "words"])
        let empty = try compose(text, env: [:]).services[0]
        #expect(empty.image == "i:latest")
        #expect(empty.environment[0].value == "fallback")
    }

    @Test func rawLoadKeepsTheText() throws {
        let raw = try service("image: i:${TAG:-latest}\nenvironment:\n  A: ${X}\n  B: $${Y}\n  C: ${BROKEN")
        #expect(raw.image == "i:${TAG:-latest}")
        #expect(raw.environment.map(\.value) == ["${X}", "$${Y}", "${BROKEN"])
    }

    @Test func interpolationErrorsCarryTheLine() {
        let e = soError {
            _ = try compose("services:\n  s:\n    image: i\n    environment:\n      A: ${NEED:?set it}\n", env: [:])
        }
        #expect(e?.line == "c.yml:5: required variable NEED is missing: set it")
        #expect(e?.hint != nil)
        #expect(
            soError { _ = try compose("services:\n  s:\n    image: ${BROKEN\n", env: [:]) }?.location
                == SourceLocation(file: "c.yml", line: 3))
        #expect(
            soError { _ = try compose("services:\n  s:\n    command:\n      - ok\n      - ${}\n", env: [:]) }?.location?
                .line == 5)
    }

    @Test func interpolatedEmptyValuesStayStrings() throws {
        let s = try service("image: ${NONE}\nenvironment:\n  A: ${NONE}\n  B:\n", env: [:])
        #expect(s.image == "")
        #expect(s.environment.map(\.value) == ["", nil])
    }

    /// An unset variable becomes an empty string with one warning naming the first line that uses it.
    @Test func unsetVariablesWarnOncePerName() throws {
        let sink = DiagnosticSink()
        let text =
            "services:\n  s:\n    image: pihole\n    environment:\n      - WEBPASSWORD=${PIHOLE_PW}\n      - TZ=${TZ:-UTC}\n      - AGAIN=$PIHOLE_PW\n"
        let root = try #require(try YAMLFile.parse(text, file: "c.yml"))
        let s = try ComposeLoader.decode(
            root, path: "c.yml", environment: ["X": "1"], diagnostics: sink, warnUnset: true
        ).services[0]
        // Off by default (laconic stacks leave variables to config.env, as laconic-so does).
        let quiet = DiagnosticSink()
        _ = try ComposeLoader.decode(root, path: "c.yml", environment: ["X": "1"], diagnostics: quiet)
        #expect(quiet.all.isEmpty)
        #expect(
            s.environment.map(\.value)
                == ["WEBPASSWORD=", "TZ=UTC", "AGAIN="].map {
                    String($0.split(separator: "=", omittingEmptySubsequences: false)[1])
                })
        let warnings = sink.all.filter { $0.message.contains("is not set") }
        #expect(warnings.map(\.message) == ["variable 'PIHOLE_PW' is not set; it defaults to a blank string"])
        #expect(warnings.first?.location?.line == 5)
        // Without an environment (deploy init reads files as written) nothing is interpolated or reported.
        let raw = DiagnosticSink()
        _ = try service("image: x\nenvironment:\n  - A=${NOPE}", sink: raw)
        #expect(!raw.all.contains { $0.message.contains("is not set") })
    }
}
