import Foundation
import SoBasics
import SoCompose
import Testing

@Suite struct PortsTests {
    func ports(_ items: String) throws -> [ComposePort] { try service("image: i\nports:\n" + items, env: [:]).ports }
    func port(_ text: String) throws -> ComposePort { try #require(try ComposePorts.parseShort(text).first) }

    @Test func shortSyntax() throws {
        #expect(try port("80") == ComposePort(containerPort: 80, raw: "80"))
        #expect(try port("80/udp") == ComposePort(containerPort: 80, proto: .udp, raw: "80/udp"))
        #expect(try port("8080:80") == ComposePort(hostPort: 8080, containerPort: 80, raw: "8080:80"))
        #expect(
            try port("127.0.0.1:8080:80")
                == ComposePort(hostIP: "127.0.0.1", hostPort: 8080, containerPort: 80, raw: "127.0.0.1:8080:80"))
        #expect(try port("127.0.0.1::80") == ComposePort(hostIP: "127.0.0.1", containerPort: 80, raw: "127.0.0.1::80"))
        #expect(
            try port("[::1]:80:80") == ComposePort(hostIP: "::1", hostPort: 80, containerPort: 80, raw: "[::1]:80:80"))
        #expect(
            try port("[::1]::80/sctp")
                == ComposePort(hostIP: "::1", containerPort: 80, proto: .sctp, raw: "[::1]::80/sctp"))
        #expect(try port("5054:5054/TCP").proto == .tcp)
    }

    @Test func ranges() throws {
        let both = try ComposePorts.parseShort("8000-8002:9000-9002/udp")
        #expect(both.map(\.hostPort) == [8000, 8001, 8002])
        #expect(both.map(\.containerPort) == [9000, 9001, 9002])
        #expect(both.allSatisfy { $0.proto == .udp && $0.raw == "8000-8002:9000-9002/udp" })
        #expect(try ComposePorts.parseShort("3000-3002").map(\.containerPort) == [3000, 3001, 3002])
        #expect(try ComposePorts.parseShort("3000-3002").allSatisfy { $0.hostPort == nil })
        #expect(
            try ComposePorts.parseShort("127.0.0.1:3000-3001:3000-3001").map(\.hostIP) == ["127.0.0.1", "127.0.0.1"])
        // A host range for one container port stays a range: the runtime picks a free one.
        #expect(
            try ComposePorts.parseShort("8000-8010:80") == [
                ComposePort(hostRange: 8000...8010, containerPort: 80, raw: "8000-8010:80")
            ])
    }

    @Test func inComposeFiles() throws {
        let p = try ports(
            """
              - "80"
              - 8443
              - 22:22
              - "53/udp"
              - "127.0.0.1:9000:9000"
              - "3000-3001:4000-4001"
              - target: 5000
                published: "5001"
                host_ip: 0.0.0.0
                protocol: udp
                mode: host
                name: web
                app_protocol: http
              - target: "6000"
                published: 6000-6010
              - target: 7000
                host_ip: "::1"
            """)
        #expect(p.map(\.containerPort) == [80, 8443, 22, 53, 9000, 4000, 4001, 5000, 6000, 7000])
        #expect(p[1].raw == "8443" && p[1].hostPort == nil)
        #expect(p[2].hostPort == 22)  // YAML 1.1 would read 22:22 as the number 1342
        #expect(
            p[7]
                == ComposePort(
                    hostIP: "0.0.0.0", hostPort: 5001, containerPort: 5000, proto: .udp, raw: "0.0.0.0:5001:5000/udp"))
        #expect(p[8].hostPort == nil && p[8].hostRange == 6000...6010 && p[8].raw == "6000-6010:6000")
        #expect(p[9].raw == "[::1]::7000")
    }

    @Test func invalidPorts() throws {
        for bad in [
            "a:b", "1:2:3:4", "80/xyz", "70000", "1-3:1-2", "80:1000-1002", "-1", "1-", "[::1", "[::1]80", "80:", "+80",
            "٨٠",
            "3-1", "127.0.0.1:",
        ] {
            let e = soError { _ = try ports("  - \"\(bad)\"") }
            #expect(e?.location == SourceLocation(file: "c.yml", line: 5), "\(bad)")
            #expect(e?.message.hasPrefix("invalid port '\(bad)'") == true, "\(bad): \(e?.message ?? "")")
        }
        #expect(soError { _ = try ports("  - published: 80") }?.message == "a port is missing 'target'")
        #expect(soError { _ = try ports("  - target: http") }?.location?.line == 5)
        #expect(soError { _ = try ports("  - target: 80\n    protocol: icmp") }?.location?.line == 6)
        #expect(soError { _ = try ports("  - [80]") }?.message == "a port must be a string, not a list")
    }

    @Test func longSyntaxWarnsAboutUnknownKeys() throws {
        let sink = DiagnosticSink()
        _ = try service("image: i\nports:\n  - target: 80\n    publised: 8080", env: [:], sink: sink)
        #expect(
            sink.all.map(\.description) == [
                "warning: c.yml:6: unknown key 'publised' in a port (did you mean 'published'?)"
            ])
    }
}

@Suite struct VolumesTests {
    @Test func shortSyntax() throws {
        let v = try service(
            """
            image: i
            volumes:
              - data:/data
              - ./conf:/etc/conf:ro
              - ../config/x/f.sh:/f.sh:z,ro
              - /scratch
              - /host/logs:/logs:rw
              - ~/cache:/cache
              - .:/code
              - named:/n:nocopy
            """
        ).volumes
        #expect(v.map(\.kind) == [.volume, .bind, .bind, .volume, .bind, .bind, .bind, .volume])
        #expect(v.map(\.readOnly) == [false, true, true, false, false, false, false, false])
        #expect(v.map(\.source) == ["data", "./conf", "../config/x/f.sh", nil, "/host/logs", "~/cache", ".", "named"])
        #expect(v.map(\.target) == ["/data", "/etc/conf", "/f.sh", "/scratch", "/logs", "/cache", "/code", "/n"])
        #expect(v.map(\.options) == [nil, "ro", "z,ro", nil, "rw", nil, nil, "nocopy"])
        #expect(v[1].raw == "./conf:/etc/conf:ro")
        #expect(v.map(\.line) == [5, 6, 7, 8, 9, 10, 11, 12])
        #expect(v[1].isHostPath && !v[0].isHostPath)
    }

    @Test func longSyntax() throws {
        let v = try service(
            """
            image: i
            volumes:
              - type: bind
                source: ./site
                target: /srv
                read_only: true
                bind:
                  create_host_path: true
              - type: tmpfs
                target: /tmp
                tmpfs:
                  size: 1000
              - type: volume
                source: data
                target: /data
                volume:
                  nocopy: true
              - type: volume
                target: /anon
              - target: /default
                source: v
            """
        ).volumes
        #expect(
            v[0]
                == ComposeVolumeMount(
                    kind: .bind, source: "./site", target: "/srv", readOnly: true, options: "ro", raw: "./site:/srv:ro",
                    line: 5))
        #expect(v[1].kind == .tmpfs && v[1].source == nil && v[1].target == "/tmp")
        #expect(v[2].kind == .volume && v[2].source == "data" && !v[2].readOnly)
        #expect(v[3].source == nil && v[3].raw == "/anon")
        #expect(v[4].kind == .volume && v[4].source == "v")
    }

    @Test func invalidVolumes() throws {
        func fails(
            _ items: String, line: Int, _ message: String? = nil,
            sourceLocation: Testing.SourceLocation = #_sourceLocation
        ) {
            let e = soError(sourceLocation) { _ = try service("image: i\nvolumes:\n" + items) }
            #expect(e?.location?.line == line, sourceLocation: sourceLocation)
            if let message { #expect(e?.message == message, sourceLocation: sourceLocation) }
        }
        fails("  - a:b:c:d", line: 5, "invalid volume 'a:b:c:d'")
        fails("  - :/x", line: 5)
        fails("  - /x:", line: 5)
        fails("  - type: weird\n    target: /x", line: 5, "unsupported volume type 'weird'")
        fails("  - type: bind\n    target: /x", line: 5, "bind mount of '/x' has no source")
        fails("  - type: volume\n    source: x", line: 5, "a volume is missing 'target'")
        fails("  - type: bind\n    source: .\n    target: /x\n    read_only: maybe", line: 8)
        let sink = DiagnosticSink()
        _ = try service(
            "image: i\nvolumes:\n  - type: bind\n    source: .\n    target: /x\n    bind:\n      propagaton: shared",
            sink: sink)
        #expect(sink.all.first?.message == "unknown key 'propagaton' in 'bind' options of volume '/x'")
        #expect(sink.all.first?.hint == "did you mean 'propagation'?")
    }
}

/// A port is parsed once, after interpolation: a file read as written keeps its entries (their text may
/// hold `${VAR}`), and they are parsed with the deployment's values.
@Suite struct PortInterpolationTests {
    @Test func aPortIsParsedAfterInterpolation() throws {
        let text =
            "image: i\nports:\n  - \"${WEB_PORT:-30080}:80\"\n  - {target: 53, published: \"${DNS_PORT:-30053}\", protocol: udp}\n"
            + "expose: [\"${METRICS:-9100}\"]"
        let raw = try service(text)
        #expect(raw.ports.isEmpty && raw.expose.isEmpty)
        #expect(raw.portEntries.map(\.written) == ["${WEB_PORT:-30080}:80", "${DNS_PORT:-30053}:53/udp"])
        let ports = try ComposePorts.parse(raw.portEntries, environment: ["DNS_PORT": "31053"])
        #expect(ports.map(\.hostPort) == [30080, 31053])
        #expect(ports.map(\.containerPort) == [80, 53])
        #expect(ports.map(\.proto) == [.tcp, .udp])
        let cooked = try service(text, env: ["WEB_PORT": "31080", "METRICS": "9200"])
        #expect(cooked.ports.map(\.hostPort) == [31080, 30053])
        #expect(cooked.expose.map(\.containerPort) == [9200])
        let e = soError { _ = try ComposePorts.parse(raw.portEntries, environment: ["WEB_PORT": "x"]) }
        #expect(e?.message.hasPrefix("invalid port 'x:80'") == true, "\(e?.message ?? "")")
        #expect(e?.location == SourceLocation(file: "c.yml", line: 5))
        // The shape is still checked when the file is read as written.
        #expect(soError { _ = try service("image: i\nports: 80") }?.location?.line == 4)
    }

    @Test func serviceAndForwardedPorts() {
        #expect(ServicePort("web:8080") == ServicePort(service: "web", port: 8080))
        for bad in ["web", "web:", ":80", "web:0", "web:70000", "web:+80", "a:b:80", "web:8o", "web: 80"] {
            #expect(ServicePort(bad) == nil, "\(bad)")
        }
        #expect(ForwardedPort("8080:80") == ForwardedPort(local: 8080, remote: 80))
        #expect(ForwardedPort("80") == ForwardedPort(local: nil, remote: 80))
        #expect(ForwardedPort(":80") == ForwardedPort(local: nil, remote: 80))
        for bad in ["x:80", "80:", "1:2:3", "-1", "80:70000", "", "0"] {
            #expect(ForwardedPort(bad) == nil, "\(bad)")
        }
    }
}
