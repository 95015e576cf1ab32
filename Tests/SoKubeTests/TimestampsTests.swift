import Foundation
import SoBasics
import SoTestSupport
import Testing

/// `Timestamps` against Foundation's ISO8601DateFormatter (the oracle it replaced) on random dates.
@Suite struct TimestampsTests {
    static func oracle(fraction: Bool) -> ISO8601DateFormatter {
        let f = ISO8601DateFormatter()
        if fraction { f.formatOptions = [.withInternetDateTime, .withFractionalSeconds] }
        return f
    }

    @Test func formatsLikeFoundationOnRandomDates() {
        // Seeded: the same dates every run (a system generator made this test fail one run in many, on a date of
        // the 1600s where Foundation's own rounding to the millisecond lands on the next second).
        var rng = SplitMix(state: 20_261_125)
        let f = Self.oracle(fraction: false)
        // 1600 to 2400: leap centuries, the epoch, negative times.
        let edges: [Double] = [
            0, -1, 86399, 86400, 951_782_400, 951_868_800, 4_107_542_400, -11_644_473_600, 1_795_392_145.999_999,
        ]
        for t in edges + (0..<3000).map({ _ in Double.random(in: -11_676_096_000...13_569_465_600, using: &rng) }) {
            let d = Date(timeIntervalSince1970: t)
            #expect(Timestamps.rfc3339(d) == f.string(from: d), "\(t)")
            #expect(Timestamps.parse(Timestamps.rfc3339(d)) == f.date(from: f.string(from: d)), "\(t)")
        }
    }

    @Test func microTimeKeepsMicroseconds() {
        let d = Date(timeIntervalSince1970: 1_795_392_145.123_456_7)
        #expect(Timestamps.microTime(d) == "2026-11-23T00:02:25.123456Z")
        let back = Timestamps.parse("2026-11-23T00:02:25.123456Z")!
        #expect(abs(back.timeIntervalSince1970 - 1_795_392_145.123_456) < 1e-6)
        #expect(Timestamps.microTime(Date(timeIntervalSince1970: 5)) == "1970-01-01T00:00:05.000000Z")
    }

    @Test func parsesOffsetsAndFractionsLikeFoundation() {
        let f = Self.oracle(fraction: false)
        for text in [
            "2026-11-22T14:40:35+02:00", "2026-11-22T14:40:35-05:30", "2024-02-29T00:00:00Z",
            "1999-12-31T23:59:59+00:00",
        ] {
            #expect(Timestamps.parse(text) == f.date(from: text), "\(text)")
        }
        let ms = Self.oracle(fraction: true)
        #expect(Timestamps.parse("2026-11-22T14:40:35.250Z") == ms.date(from: "2026-11-22T14:40:35.250Z"))
    }

    @Test func rejectsMalformedText() {
        for text in [
            "", "2026-11-22", "2026-11-22T14:40:35", "2026-13-01T00:00:00Z", "2023-02-29T00:00:00Z",
            "2026-11-22T24:00:00Z",
            "2026-11-22T14:40:35.Z", "2026-11-22T14:40:35+0200", "2026-11-22 14:40:35Z", "2026-11-22T14:40:35Zjunk",
            "x026-11-22T14:40:35Z",
        ] {
            #expect(Timestamps.parse(text) == nil, "\(text)")
        }
    }
}
