import Foundation
import SoBasics
import Testing

/// The one JSON writer keeps every output byte-identical: `-o json` and progress lines as Foundation's
/// JSONEncoder wrote them (it is the oracle here), manifests and request bodies as before.
@Suite struct JSONWriterTests {
    struct Row: Encodable {
        enum State: String, Encodable {
            case cloned
            case checkedOut = "checked-out"
        }
        var name = "web/\"api\"\\ \u{8}\u{c}\u{1}\u{1f}\u{7f}\u{2028} é\n\t\r"
        var state = State.checkedOut
        var ref: String? = nil
        var count = -42
        var ready = true
        var empty: [String] = []
        var nested: [Inner] = [Inner(), Inner(z: 2, tags: ["a", "b"])]
        var byName: [String: Int] = ["b": 1, "B": 2, "a10": 3, "a9": 4, "_x": 5, "é": 6, "a-b": 7]
        var none: [String: Int] = [:]
    }
    struct Inner: Encodable {
        var z = 1
        var tags: [String] = []
        var optional: Int? = 7
    }

    func foundation<T: Encodable>(_ v: T, pretty: Bool) throws -> String {
        let e = JSONEncoder()
        e.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try e.encode(v), as: UTF8.self)
    }

    @Test func reportsAreWhatJSONEncoderWrote() throws {
        #expect(JSONWriter.encode(Row(), .report) == (try foundation(Row(), pretty: true)))
        #expect(JSONWriter.encode([Row(), Row()], .report) == (try foundation([Row(), Row()], pretty: true)))
        #expect(JSONWriter.encode([Row](), .report) == (try foundation([Row](), pretty: true)))
    }

    @Test func progressLinesAreWhatJSONEncoderWrote() throws {
        let line = ["event": "phase", "phase": "applying", "detail": "3 Secrets \u{8}\u{7f} \"q\" a/b"]
        #expect(JSONWriter.encode(line, .line) == (try foundation(line, pretty: false)))
        #expect(!JSONWriter.encode(line, .line).contains("\n"))
    }

    @Test func manifestsKeepTheirOrderAndEscapes() {
        let v: YValue = .map([
            ("kind", .string("List")), ("b", .list([])), ("a", .map([])), ("s", .string("\u{8}\u{7f}x")),
            ("n", .int(3)), ("t", .bool(false)), ("z", .null),
        ])
        #expect(
            v.json()
                == "{\n  \"kind\": \"List\",\n  \"b\": [],\n  \"a\": {},\n  \"s\": \"\\u0008\\u007fx\",\n  \"n\": 3,\n  \"t\": false,\n  \"z\": null\n}"
        )
        #expect(
            String(decoding: v.compactJSON(), as: UTF8.self)
                == "{\"kind\":\"List\",\"b\":[],\"a\":{},\"s\":\"\\u0008\\u007fx\",\"n\":3,\"t\":false,\"z\":null}")
        #expect(v.json(pretty: false) == String(decoding: v.compactJSON(), as: UTF8.self))
    }

    @Test func fractionsAreRefusedNotRounded() {
        struct F: Encodable { var x = 1.5 }
        struct W: Encodable { var x = 2.0 }
        #expect(JSONWriter.encode(F()) == "{}")
        #expect(JSONWriter.encode(W(), .line) == "{\"x\":2}")
    }
}
