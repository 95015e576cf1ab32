import Foundation
import SoBasics
import SoCompose
import SoTestSupport
import Testing

@Suite struct DotEnvTests {
    func parse(_ text: String) throws -> [String: String] {
        Dictionary(try DotEnv.parse(text, file: "x.env").map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
    }

    @Test func parsesTheCommonForms() throws {
        let text = """
            # comment
              # indented comment

            A=1
            export B=two words   # trailing comment
            C='single # not comment'
            D="line1\\nline2 \\"q\\" \\$HOME \\t\\\\ \\r"
            E=
            F='multi
            line'
            G=a#b
            H = spaced
            I="multi
            line too" # comment after the quote
            export\tJ=tab
            K=${NOT_EXPANDED}
            L='$HOME'
            M=x=y
            N=\ttabbed\t
            """
        let pairs = try DotEnv.parse(text, file: "x.env")
        #expect(pairs.map(\.key) == ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N"])
        let d = try parse(text)
        #expect(d["A"] == "1")
        #expect(d["B"] == "two words")
        #expect(d["C"] == "single # not comment")
        #expect(d["D"] == "line1\nline2 \"q\" $HOME \t\\ \r")
        #expect(d["E"] == "")
        #expect(d["F"] == "multi\nline")
        #expect(d["G"] == "a#b")
        #expect(d["H"] == "spaced")
        #expect(d["I"] == "multi\nline too")
        #expect(d["J"] == "tab")
        #expect(d["K"] == "${NOT_EXPANDED}")
        #expect(d["L"] == "$HOME")
        #expect(d["M"] == "x=y")
        #expect(d["N"] == "tabbed")
    }

    @Test func laterEntriesWinInPlace() throws {
        let pairs = try DotEnv.parse("A=1\nB=2\nA=3\n", file: "x.env")
        #expect(pairs.map(\.key) == ["A", "B"])
        #expect(pairs.map(\.value) == ["3", "2"])
    }

    @Test func crlfLineEnds() throws {
        let d = try parse("A=1\r\nB='x'\r\n# c\r\nC=\"m\r\nn\"\r\n")
        #expect(d == ["A": "1", "B": "x", "C": "m\nn"])
    }

    @Test func unknownEscapesKeepTheBackslash() throws {
        #expect(try parse(#"A="a\qb""#)["A"] == #"a\qb"#)
        #expect(try parse(#"A='a\nb'"#)["A"] == #"a\nb"#)
        #expect(try parse(#"A=a\nb"#)["A"] == #"a\nb"#)
    }

    @Test func errorsNameTheLine() {
        #expect(
            soError { _ = try DotEnv.parse("A=1\nnovalue\n", file: "x.env") }?.line
                == "x.env:2: line without '=': 'novalue'")
        #expect(
            soError { _ = try DotEnv.parse("A=1\n\nB=\"open\nmore\n", file: "x.env") }?.line
                == "x.env:3: unterminated double quote in the value of B")
        #expect(soError { _ = try DotEnv.parse("A='open\n", file: "x.env") }?.location?.line == 1)
        #expect(
            soError { _ = try DotEnv.parse("A='x\ny'\n1BAD=x\n", file: "x.env") }?.line
                == "x.env:3: invalid variable name '1BAD'")
        #expect(soError { _ = try DotEnv.parse("A='x' trailing\n", file: "x.env") }?.location?.line == 1)
        #expect(soError { _ = try DotEnv.parse("=x\n", file: "x.env") }?.hint != nil)
        #expect(soError { _ = try DotEnv.parse("MY KEY=x\n", file: "x.env") } != nil)
    }

    @Test func encodePrefersTheSimplestForm() {
        #expect(DotEnv.encode(key: "K", value: "plain-1.2_/x:y@z+%,=") == "K=plain-1.2_/x:y@z+%,=")
        #expect(DotEnv.encode(key: "K", value: "") == "K=")
        #expect(DotEnv.encode(key: "K", value: "two words") == "K='two words'")
        #expect(DotEnv.encode(key: "K", value: "$HOME #x \"q\" \\") == "K='$HOME #x \"q\" \\'")
        #expect(DotEnv.encode(key: "K", value: "it's") == "K=\"it's\"")
        #expect(DotEnv.encode(key: "K", value: "a\nb$c\"\\\t") == "K=\"a\\nb\\$c\\\"\\\\\\t\"")
    }

    static let nasty = [
        "", " ", "  ", "plain", " lead", "trail ", "\tboth\t", "it's", "'", "''", "\"", "\"dq\"", "#", "#hash", "a #b",
        "a\t#b",
        "$HOME", "${X}", "$$", "back\\slash", "\\", "\\n", "multi\nline\n", "\n", "\n\n", "\r", "\r\n", "a\r\nb",
        "tab\t",
        "=", "==", "a=b", ",", "ü€", "😀", "\u{301}", "'\u{301}", "\"\u{301}", "e\u{301}'", "\u{200D}", "x\u{0}y",
        "\u{7f}",
        "'quoted'", "\"it's\"", "export", "export A=1", "# not a comment", "A=1\nB=2",
    ]

    /// Any value written by encode reads back identically, also next to other entries.
    @Test func roundTripsAnyValue() throws {
        let alphabet: [String] = [
            "a", "Z", "0", "_", "-", ".", "/", ":", "@", "+", ",", "%", "=", " ", "  ", "\t", "\n", "\r",
            "\r\n", "#", " #", "'", "\"", "\\", "$", "${", "}", "!", "`", "ü", "€", "😀", "\u{301}",
            "\u{200D}", "\u{A0}", "\u{2028}", "\u{0}", "\u{7}", "export ",
        ]
        var rng = SplitMix(state: 0x5EED)
        var values = Self.nasty
        for _ in 0..<4000 {
            values.append(
                (0..<Int.random(in: 0...12, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }.joined())
        }
        var text = "# generated\n"
        for (i, v) in values.enumerated() { text += DotEnv.encode(key: "K\(i)", value: v) + "\n" }
        let parsed = try DotEnv.parse(text, file: "rt.env")
        #expect(parsed.count == values.count)
        for (i, v) in values.enumerated() where i < parsed.count && (parsed[i].key != "K\(i)" || parsed[i].value != v) {
            Issue.record(
                "value \(v.debugDescription) came back as \(parsed[i].value.debugDescription) from \(DotEnv.encode(key: "K", value: v).debugDescription)"
            )
        }
        // Each entry alone, without a trailing newline, reads back too.
        for v in values.prefix(500) {
            #expect(
                try DotEnv.parse(DotEnv.encode(key: "K", value: v), file: "one.env").first?.value == v,
                "\(v.debugDescription)")
        }
    }
}
