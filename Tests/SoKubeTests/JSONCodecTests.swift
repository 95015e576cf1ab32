import Foundation
import SoBasics
import Testing

@testable import SoKube

@Suite struct JSONCodecTests {
    /// What `JSON.parse` did before the direct reader: JSONSerialization, then a cast per value.
    static func reference(_ data: Data) throws -> JSON {
        func from(_ any: Any) -> JSON {
            switch any {
            case let d as [String: Any]: return .object(d.mapValues(from))
            case let a as [Any]: return .array(a.map(from))
            case let s as String: return .string(s)
            case let b as Bool where type(of: any) == Bool.self || String(describing: type(of: any)).contains("Bool"):
                return .bool(b)
            case let n as NSNumber: return .number(n.doubleValue)
            default: return .null
            }
        }
        return from(try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]))
    }

    /// Random nested values with awkward strings and numbers.
    static func randomValue(_ rng: inout SystemRandomNumberGenerator, depth: Int) -> Any {
        let strings = [
            "", "plain", "quote \" and \\ backslash", "new\nline\ttab\r", "ünïcödé ✓ 日本", "emoji 🚀 pair",
            "\u{1}\u{1f}\u{7f}", "/slash/", "{\"not\":\"json\"}",
        ]
        switch Int.random(in: 0..<(depth > 3 ? 4 : 7), using: &rng) {
        case 0: return strings.randomElement(using: &rng)!
        case 1: return [0, -1, 42, 1_000_000_007, -3.5, 0.001, 1e21, 6.02e-23].randomElement(using: &rng)!
        case 2: return Bool.random(using: &rng)
        case 3: return NSNull()
        case 4, 5:
            var d: [String: Any] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                d[strings.randomElement(using: &rng)! + String(Int.random(in: 0...9, using: &rng))] = randomValue(
                    &rng, depth: depth + 1)
            }
            return d
        default:
            return (0..<Int.random(in: 0...4, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) }
        }
    }

    @Test func readsWhatJSONSerializationReads() throws {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let value = Self.randomValue(&rng, depth: 0)
            let data = try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])
            #expect(try JSON.parse(data) == Self.reference(data), "\(String(decoding: data, as: UTF8.self))")
        }
    }

    // Found by the task-report fuzz target (Fuzz/Corpus/task-report/found-int-infinite: an agent's usage line with
    // "input_tokens":1e400100): a number past Int's range, or infinite, trapped (Double to Int) wherever `so` reads an
    // int: the tokens in an agent's usage line, a count from the API server.
    @Test func anIntPastItsRangeIsNil() throws {
        let json = try JSON.parse(Data(#"{"a":1e300,"b":-1e19,"c":9.2e18,"d":2.9,"e":-2.9,"f":0,"g":1e400}"#.utf8))
        #expect(json["g"]?.int == nil)
        #expect(json["a"]?.int == nil)
        #expect(json["b"]?.int == nil)
        #expect(json["c"]?.int == 9_200_000_000_000_000_000)
        #expect(json["d"]?.int == 2)
        #expect(json["e"]?.int == -2)
        #expect(json["f"]?.int == 0)
    }

    @Test func escapesSurrogatesAndErrors() throws {
        #expect(
            try JSON.parse(Data(#"{"a":"\u00e9\ud83d\ude80\n\/","b":[1,2.5e3,-0.5,true,false,null]}"#.utf8))
                == .object([
                    "a": .string("é🚀\n/"),
                    "b": .array([.number(1), .number(2500), .number(-0.5), .bool(true), .bool(false), .null]),
                ]))
        #expect(try JSON.parse(Data(" \"x\" ".utf8)) == .string("x"))
        for bad in ["", "{", "[1,]", "{\"a\" 1}", "\"open", "tru", "1.", "01x", "{} {}", "\"bad \\q\"", "\"\u{1}\""] {
            #expect(throws: (any Error).self, "\(bad)") { _ = try JSON.parse(Data(bad.utf8)) }
        }
    }

    /// Read to a shape, a document keeps exactly what the shape names, as a full read has it; what it does not
    /// name is skipped, strings with escaped quotes and brackets included, and is never built.
    @Test func aShapeKeepsWhatItNamesAndSkipsTheRest() throws {
        let text = #"""
            {"kind": "DeploymentList", "metadata": {"continue": "c1"},
             "items": [
               {"metadata": {"name": "a", "namespace": "n1", "generation": 3,
                             "managedFields": [{"f:x": "}]\"{[", "n": -1.5e3, "ok": true, "no": null}]},
                "spec": {"replicas": 2, "template": {"spec": {"containers": [{"args": ["\\", "\u00e9]"]}]}}},
                "status": {"availableReplicas": 2, "conditions": [{"type": "Available"}]}},
               {"metadata": {"name": "b", "namespace": "n2"}, "spec": {}, "extra": [[[]], {}]}
             ]}
            """#
        let data = Data(text.utf8)
        let shape = JSONShape.keys([
            "items": .keys([
                "metadata": .keys(["name": .all, "namespace": .all, "generation": .all]),
                "spec": .keys(["replicas": .all]), "status": .all,
            ]),
            "metadata": .all,
        ])
        let full = try JSON.parse(data)
        let kept = try JSON.parse(data, keeping: shape)
        #expect(kept["kind"] == nil && kept.at("metadata", "continue")?.string == "c1")
        let items = try #require(kept["items"]?.array)
        #expect(items.count == 2)
        #expect(items[0].at("metadata", "managedFields") == nil && items[0].at("spec", "template") == nil)
        #expect(items[0]["status"] == full["items"]?.array[0]["status"])
        #expect(items[0].at("metadata", "generation") == full["items"]?.array[0].at("metadata", "generation"))
        #expect(items[0].at("spec", "replicas")?.int == 2 && items[1].at("metadata", "namespace")?.string == "n2")
        #expect(items[1]["extra"] == nil && items[1]["spec"] == .object([:]))
        // A whole-document shape reads what a full read does.
        #expect(try JSON.parse(data, keeping: .all) == full)
        // What is skipped must still end: an unterminated string or value in it is an error, not a silent cut.
        for bad in [#"{"a": {"skip": "open}"#, #"{"a": 1, "skip": [1, 2"#, #"{"a": 1, "skip": }"#] {
            #expect(throws: (any Error).self) { try JSON.parse(Data(bad.utf8), keeping: .keys(["a": .all])) }
        }
    }

    @Test func compactJSONIsThePrettyJSONWithoutSpaceAndReadsBack() throws {
        let v: YValue = .map([
            ("name", .string("a \"b\"\n\u{1}\u{7f} ✓")), ("n", .int(-7)), ("ok", .bool(true)), ("none", .null),
            ("empty", .map([])), ("list", .list([])), ("items", .list([.int(1), .map([("k", .string("v"))])])),
        ])
        let compact = String(decoding: v.compactJSON(), as: UTF8.self)
        #expect(
            compact
                == #"{"name":"a \"b\"\n\u0001\u007f ✓","n":-7,"ok":true,"none":null,"empty":{},"list":[],"items":[1,{"k":"v"}]}"#
        )
        #expect(try JSON.parse(Data(compact.utf8)) == JSON.parse(Data(v.json(pretty: true).utf8)))
        #expect(try Self.reference(Data(compact.utf8)) == JSON.parse(Data(compact.utf8)))
    }
}
