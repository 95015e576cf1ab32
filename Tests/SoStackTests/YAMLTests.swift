import Foundation
import SoBasics
import SoTestSupport
import Testing
import Yams

@Suite struct YAMLReaderTests {
    @Test func scalarsKeepTheirRawText() throws {
        let n = try #require(try YAMLFile.parse("a: 22:22\nb: 0755\nc: yes\nd: 1.10\ne: 0x1F\n", file: "f.yml"))
        let m = try n.mapping("f")
        #expect(try m.string("a") == "22:22")
        #expect(try m.string("b") == "0755")
        #expect(try m.string("c") == "yes")
        #expect(try m.string("d") == "1.10")
        #expect(try m.string("e") == "0x1F")
    }

    @Test func duplicateKeysAreErrorsWithTheLine() {
        #expect {
            _ = try YAMLFile.parse("a: 1\nb:\n  c: 1\n  c: 2\n", file: "dup.yml")
        } throws: { error in
            let e = error as! SoError
            return e.line.hasPrefix("dup.yml:") && e.message.contains("duplicate key 'c'")
        }
    }

    /// Found by the stack fuzz target (Fuzz/, 2026-11-28): Yams sorts a mapping's duplicate keys with an order that
    /// does not hold between a scalar and a complex key (a mapping as a key), so the keys' order in the message, and
    /// the line it named (of the key sorted first), followed the hash order of the moment: two reads of one spec
    /// said two things. The scalars are named in order, a complex key after them, and the line only when every
    /// duplicate is a scalar.
    @Test func duplicateKeysAreNamedTheSameEveryTime() throws {
        let text = "b: 1\n? {m: 1}\n: x\na: 2\nb: 3\n? {m: 1}\n: y\na: 4\n"
        var messages = Set<String>()
        for _ in 0..<40 {
            do {
                _ = try YAMLFile.parse(text, file: "dup.yml")
            } catch let e as SoError {
                messages.insert(e.line)
            }
        }
        #expect(messages == ["dup.yml: duplicate key 'a', 'b' and a complex key"], "\(messages)")
        // Scalars only: named in order, with the line Yams gives (its first key's).
        #expect {
            _ = try YAMLFile.parse("z: 1\nb: 2\nz: 3\nb: 4\n", file: "dup.yml")
        } throws: { error in
            let e = error as! SoError
            return e.message == "duplicate key 'b', 'z'" && e.location?.line == 2
        }
    }

    @Test func syntaxErrorsNameFileAndLine() {
        #expect {
            _ = try YAMLFile.parse("a: 1\nb: [1, 2\nc: 3\n", file: "bad.yml")
        } throws: { error in
            let e = error as! SoError
            return e.location?.file == "bad.yml" && e.location?.line != nil && e.hint != nil
        }
    }

    // Found by the stack and compose fuzz targets (Fuzz/): libyaml puts an error at the end of a text without a
    // final newline on the line after its last, which the file does not have (the error named line 3 of 2).
    @Test func anErrorAtTheEndOfTheTextNamesItsLastLine() {
        let cases = [
            ("name: y\npods: [d:", 2), ("services:\n  a:\n    image: x\n    expose:\n    \u{FFFD}", 5),
            ("a: [1,\n", 1), ("a: b\r\nc: [\r\n", 2),
        ]
        for (text, last) in cases {
            #expect {
                _ = try YAMLFile.parse(text, file: "end.yml")
            } throws: { error in
                (error as! SoError).location?.line == last
            }
        }
    }

    @Test func aliasBombsAreRefused() {
        var text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for i in 1...9 {
            text += "a\(i): &a\(i) [" + Array(repeating: "*a\(i - 1)", count: 10).joined(separator: ", ") + "]\n"
        }
        #expect {
            _ = try YAMLFile.parse(text, file: "bomb.yml")
        } throws: { error in (error as! SoError).message.contains("alias") }
    }

    @Test func mergeKeysApplyAndExplicitKeysWin() throws {
        let n = try #require(try YAMLFile.parse("base: &b {x: 1, y: 2}\nthing:\n  <<: *b\n  y: 3\n", file: "m.yml"))
        let thing = try #require(try n.mapping("m").value("thing"))
        let entries = try thing.entries("thing")
        #expect(entries.map(\.key) == ["y", "x"])
        #expect(try entries.first { $0.key == "y" }!.value.string("y") == "3")
    }

    @Test func unknownKeysWarnWithSuggestion() throws {
        let n = try #require(try YAMLFile.parse("stack: a\ndeploy_to: k8s\nx-ext: 1\n", file: "s.yml"))
        let m = try n.mapping("spec.yml")
        _ = m.value("stack")
        _ = m.value("deploy-to")
        let sink = DiagnosticSink()
        m.finish(into: sink)
        #expect(sink.all.count == 1)
        #expect(
            sink.all[0].description
                == "warning: s.yml:2: unknown key 'deploy_to' in spec.yml (did you mean 'deploy-to'?)")
    }

    @Test func wrongTypesNameTheLine() throws {
        let n = try #require(try YAMLFile.parse("a: 1\nreplicas: many\n", file: "t.yml"))
        #expect {
            _ = try n.mapping("t").int("replicas")
        } throws: { error in
            let e = error as! SoError
            return e.line == "t.yml:2: 'replicas' must be a whole number, not 'many'"
        }
    }
}

@Suite struct YAMLWriterTests {
    /// Every string written comes back byte-identical through the strict reader.
    @Test func stringsRoundTrip() throws {
        let samples = [
            "plain", "80", "0755", "22:22", "yes", "No", "null", "~", "", " lead", "trail ", "a: b", "a #c", "#x", "-x",
            "- x",
            "'q'", "\"dq\"", "multi\nline\n", "multi\nline", "ends\n\n", "tab\there", "back\\slash", "it's", "1e3",
            ".5", "true",
            "@at", "%p", "*star", "&amp", "!bang", "{b}", "[l]", "x,y", "ünïcode", "\u{7}bell", "  \nindented first",
            "a\n  b\n",
            "http://h:1/p?q=1#f", "$generate:hex:32$", "${VAR:-x}", "key=value",
        ]
        let rng = SeededEntropy(seed: 42)
        var all = samples
        let alphabet = Array(" a1:#-'\"\\\n\t$={}[],&*!|>%@`?~.")
        for _ in 0..<400 {
            let bytes = rng.bytes(12)
            all.append(String(bytes.prefix(Int(bytes[0] % 12)).map { alphabet[Int($0) % alphabet.count] }))
        }
        _ = rng
        for s in all {
            let text = YValue.map([("k", .string(s)), ("l", .list([.string(s)]))]).yaml()
            let n = try #require(try YAMLFile.parse(text, file: "w.yml"), "for \(s.debugDescription)")
            let m = try n.mapping("w")
            #expect(try m.value("k")?.node.string == s, "value \(s.debugDescription) wrote \(text.debugDescription)")
            #expect(try m.value("l")?.sequence("l").first?.node.string == s)
        }
    }

    /// A YAML 1.1 reader (Yams' untyped load, like PyYAML) gets every written string back as that string:
    /// nothing that looks like a number, bool, null, base-60 number or date is left unquoted.
    @Test func yaml11ReadersSeeStrings() throws {
        let samples = [
            "80", "0755", "22:22", "1:30:00", "-1", "+5", "1e3", "1.10", ".5", "0x1F", "0b101", "0o17", "1_000", ".inf",
            "-.Inf", ".NaN",
            "yes", "No", "ON", "off", "y", "n", "true", "False", "null", "~", "", "2024-01-02", "2024-1-2",
            "2001-12-14t21:59:43.10-05:00",
            "1.2.3", "v1", "abc", "8080/tcp", "127.0.0.1:8080:80", "0.0.0.0::5001", "12:345", "1:60", "1-2", "10Gi",
            "512M", "0.5", "-0",
        ]
        for s in samples {
            let text = YValue.map([("k", .string(s))]).yaml()
            let loaded = try Yams.load(yaml: text) as? [String: Any]
            #expect(
                loaded?["k"] as? String == s,
                "\(s.debugDescription) written as \(text.debugDescription) read back as \(String(describing: loaded?["k"]))"
            )
        }
    }

    /// Thousands of seeded random strings, biased towards what YAML treats specially (controls, line and
    /// paragraph separators, NEL, BOM, quotes, `: `, `#`, edge spaces, YAML 1.1 keywords and numbers,
    /// combining marks), written as keys, values, list items and whole documents, come back from Yams
    /// as the same Unicode scalars and as strings.
    @Test func randomStringsRoundTripThroughYams() throws {
        var rng = SplitMix(seed: 0x5eed_2028)
        let nasty: [Unicode.Scalar] = [
            "\u{0}", "\u{1}", "\u{7}", "\u{8}", "\t", "\n", "\u{B}", "\u{C}", "\r", "\u{1B}", "\u{1F}", "\u{7F}",
            "\u{80}", "\u{85}", "\u{9F}", "\u{A0}", "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{FFFE}", "\u{FFFF}",
            "\u{FFFD}", "\u{200B}", "\u{301}", "\u{3000}", "\u{1F600}", "\u{10FFFF}", "\u{E000}", "é", "ß",
        ]
        let tokens = [
            ": ", " #", "#", "'", "\"", "\\", "-", "- ", "? ", "---", "...", "&a", "*a", "!tag", "|", ">", "%", "@",
            "`", "{", "}", "[", "]",
            ",", " ", "  ", "~", "=", "<<", "yes", "No", "ON", "off", "y", "n", "null", "NULL", "true", "False", "0755",
            "1e3", "22:22",
            "1:30:00", ".inf", "-.Inf", ".NaN", "0x1F", "0b101", "0o17", "1_000", "+5", "-0", ".5", "2024-01-02", "12",
            "1.10", "::", "\r\n",
        ]
        let ascii = Array(" !\"#$%&'()*+,-./0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~").map { String($0) }
        func randomString() -> String {
            switch rng.next(20) {
            case 0: return tokens[rng.next(tokens.count)]
            // past libyaml's 1024-character key limit
            case 1: return String(repeating: "k", count: 1001 + rng.next(60)) + String(nasty[rng.next(nasty.count)])
            default: break
            }
            var u = String.UnicodeScalarView()
            for _ in 0..<rng.next(14) {
                switch rng.next(4) {
                case 0: u.append(nasty[rng.next(nasty.count)])
                case 1: u.append(contentsOf: tokens[rng.next(tokens.count)].unicodeScalars)
                default: u.append(contentsOf: ascii[rng.next(ascii.count)].unicodeScalars)
                }
            }
            return String(u)
        }
        // Yams decodes every scalar with Foundation's UTF-8 decoder, which drops a leading U+FEFF whatever the
        // YAML says: the writer escapes it (`"\ufeff…"`, which PyYAML reads back whole), and from Yams the
        // rest of the string must come back exactly.
        func expected(_ s: String) -> [Unicode.Scalar] {
            s.unicodeScalars.first == "\u{FEFF}" ? Array(s.unicodeScalars.dropFirst()) : Array(s.unicodeScalars)
        }
        func same(_ a: Any?, _ s: String) -> Bool {
            (a as? String).map { Array($0.unicodeScalars) == expected(s) } ?? false
        }
        var failures: [String] = []
        for _ in 0..<5000 {
            let s = randomString()
            let doc = YValue.map([
                ("k", .string(s)), ("l", .list([.string(s), .map([(s, .string(s)), ("x", .int(1))])])),
            ]).yaml()
            let top = YValue.string(s).yaml()
            if s.unicodeScalars.first == "\u{FEFF}" && !(doc.contains("k: \"\\ufeff") && top.hasPrefix("\"\\ufeff")) {
                failures.append("\(s.debugDescription): leading BOM not escaped in \(doc.debugDescription)")
            }
            do {
                let m = try Yams.load(yaml: doc) as? [String: Any]
                let list = m?["l"] as? [Any]
                let inner = list?.last as? [String: Any]
                let innerKey = inner?.keys.first { $0 != "x" }
                let back = try Yams.load(yaml: top)
                if !same(m?["k"], s) || !same(list?.first, s) || !same(innerKey, s)
                    || !same(innerKey.flatMap { inner?[$0] }, s) || !same(back, s)
                {
                    failures.append("\(s.debugDescription) wrote \(doc.debugDescription) / \(top.debugDescription)")
                }
            } catch {
                failures.append(
                    "\(s.debugDescription) wrote \(doc.debugDescription) / \(top.debugDescription): \(error)")
            }
            if failures.count >= 5 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test func layoutIsStable() {
        let v = YValue.map([
            ("a", .int(1)), ("b", .list([.string("80"), .map([("x", .bool(true)), ("y", .null)])])), ("c", .map([])),
            ("d", .list([])),
        ])
        #expect(v.yaml() == "a: 1\nb:\n  - '80'\n  - x: true\n    'y':\nc: {}\nd: []\n")
    }
}
