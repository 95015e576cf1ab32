import Foundation
import SoBasics
import Testing

@testable import SoRender

/// `so`'s default requests and limits never contradict what a compose file or spec gives: every combination
/// of limit-only, reservation-only, both and neither, for CPU and memory, from compose's deploy.resources
/// and from the spec's resources (per container and global).
@Suite struct ResourceDefaultsTests {
    /// One dimension's setting: what is reserved and what is limited (nil: not given).
    struct Given: CustomStringConvertible {
        var reservation: String?
        var limit: String?
        var description: String { "reservation \(reservation ?? "-") limit \(limit ?? "-")" }
    }

    /// For CPU: small (under the 50m default request), large (over the 1-CPU default limit).
    static let cpuCases: [Given] = [
        Given(), Given(limit: "0.01"), Given(limit: "2"), Given(reservation: "0.001"), Given(reservation: "3"),
        Given(reservation: "0.001", limit: "0.01"), Given(reservation: "0.5", limit: "0.5"),
    ]
    /// For memory: under the 64Mi default request (kompose's 50M), over the 512Mi default limit.
    static let memoryCases: [Given] = [
        Given(), Given(limit: "50M"), Given(limit: "2G"), Given(reservation: "20M"), Given(reservation: "1G"),
        Given(reservation: "20M", limit: "50M"), Given(reservation: "256M", limit: "256M"),
    ]

    /// A Kubernetes quantity as a number, read independently of the renderer's own comparison.
    static func value(_ q: String) -> Double {
        let units: [(String, Double)] = [("m", 0.001), ("Ki", 1024), ("Mi", 1024 * 1024), ("Gi", 1024 * 1024 * 1024)]
        for (u, f) in units where q.hasSuffix(u) { return Double(q.dropLast(u.count))! * f }
        return Double(q)!
    }

    static func block(_ key: String, cpu: String?, memory: String?, indent: String) -> String {
        guard cpu != nil || memory != nil else { return "" }
        return "\(indent)\(key):\n" + (cpu.map { "\(indent)  cpus: '\($0)'\n" } ?? "")
            + (memory.map { "\(indent)  memory: \($0)\n" } ?? "")
    }

    enum Source: CaseIterable { case compose, specContainer, specGlobal }

    static func render(cpu: Given, memory: Given, from source: Source) throws -> YValue? {
        var compose = "services:\n  a:\n    image: x\n"
        var spec = ""
        let given =
            block("reservations", cpu: cpu.reservation, memory: memory.reservation, indent: "")
            + block("limits", cpu: cpu.limit, memory: memory.limit, indent: "")
        if !given.isEmpty {
            switch source {
            case .compose:
                compose +=
                    "    deploy:\n      resources:\n"
                    + given.split(separator: "\n").map { "        " + $0 }.joined(separator: "\n") + "\n"
            case .specContainer:
                spec =
                    "resources:\n  containers:\n    a:\n"
                    + given.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n") + "\n"
            case .specGlobal:
                spec =
                    "resources:\n  containers:\n"
                    + given.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n") + "\n"
            }
        }
        let m = try renderSnippet(compose: compose, spec: spec)
        return m.object("Deployment")?["spec"]?["template"]?["spec"]?["containers"]?[0]?["resources"]
    }

    @Test(arguments: Source.allCases)
    func requestsNeverExceedLimits(source: Source) throws {
        for cpu in Self.cpuCases {
            for memory in Self.memoryCases {
                let r = try #require(
                    try Self.render(cpu: cpu, memory: memory, from: source), "cpu \(cpu), memory \(memory)")
                for (key, given, defaults) in [("cpu", cpu, ("50m", "1")), ("memory", memory, ("64Mi", "512Mi"))] {
                    let request = try #require(r["requests"]?[key]?.string)
                    let limit = try #require(r["limits"]?[key]?.string)
                    let what = "\(source) \(key) \(given)"
                    #expect(
                        Self.value(request) <= Self.value(limit), "\(what): request \(request) above limit \(limit)")
                    // What was given is kept; what was not is the default, bounded by what was given.
                    let normal: (String) -> String = {
                        key == "cpu" ? Quantity.cpu($0)! : Quantity.bytes($0, binaryLetters: true)!
                    }
                    if let reserved = given.reservation {
                        #expect(request == normal(reserved), "\(what): request \(request)")
                    }
                    if let limited = given.limit { #expect(limit == normal(limited), "\(what): limit \(limit)") }
                    switch (given.reservation, given.limit) {
                    case (nil, nil):
                        #expect(request == defaults.0 && limit == defaults.1, "\(what): \(request)/\(limit)")
                    case (nil, let l?):
                        #expect(
                            Self.value(request) == min(Self.value(defaults.0), Self.value(normal(l))),
                            "\(what): request \(request)")
                    case (let q?, nil):
                        #expect(
                            Self.value(limit) == max(Self.value(defaults.1), Self.value(normal(q))),
                            "\(what): limit \(limit)")
                    default: break
                    }
                }
            }
        }
    }

    /// kompose's docker-compose-memcpu-partial.yaml: a memory limit under the default request, beside a CPU reservation.
    @Test func aMemoryLimitBesideACPUReservationBoundsTheMemoryRequest() throws {
        let r = try Self.render(cpu: Given(reservation: "0.001"), memory: Given(limit: "50M"), from: .compose)
        #expect(r?["requests"]?["memory"]?.string == "50Mi" && r?["limits"]?["memory"]?.string == "50Mi")
        #expect(r?["requests"]?["cpu"]?.string == "1m" && r?["limits"]?["cpu"]?.string == "1")
    }

    @Test func aReservationAboveItsLimitIsRefusedAtRender() throws {
        #expect {
            _ = try Self.render(cpu: Given(), memory: Given(reservation: "1G", limit: "50M"), from: .compose)
        } throws: { error in
            let e = error as? SoError
            return e?.message == "memory reservation 1G is above its limit 50M in deploy.resources of service 'a'"
                && e?.hint?.contains("lower reservations.memory or raise limits.memory") == true
        }
        #expect(throws: SoError.self) {
            _ = try Self.render(cpu: Given(reservation: "2", limit: "1"), memory: Given(), from: .specContainer)
        }
    }
}
