import Foundation
import Testing
import SoBasics
import SoCompose

@Suite struct InterpolationTests {
    let env = ["SET": "value", "EMPTY": "", "NUM": "5"]
    func run(_ s: String) throws -> String { try Interpolation.interpolate(s) { env[$0] } }

    @Test func everyForm() throws {
        #expect(try run("$SET") == "value")
        #expect(try run("${SET}") == "value")
        #expect(try run("${UNSET}") == "")
        #expect(try run("${UNSET:-d}") == "d")
        #expect(try run("${EMPTY:-d}") == "d")
        #expect(try run("${EMPTY-d}") == "")
        #expect(try run("${UNSET-d}") == "d")
        #expect(try run("${SET:+alt}") == "alt")
        #expect(try run("${EMPTY:+alt}") == "")
        #expect(try run("${EMPTY+alt}") == "alt")
        #expect(try run("${UNSET+alt}") == "")
        #expect(try run("${SET:?must}") == "value")
        #expect(try run("$$SET and $${SET}") == "$SET and ${SET}")
        #expect(try run("http://${HOST:-h}:${NUM}/x") == "http://h:5/x")
        #expect(try run("${A:-${B:-${SET}}}") == "value")
        #expect(try run("${UNSET:-a ${SET} b}") == "a value b")
        #expect(try run("cost: $ 5, trailing $") == "cost: $ 5, trailing $")
        #expect(try run("$SET_more") == "")  // the whole name is SET_more
        #expect(try run("${SET}_more") == "value_more")
    }

    @Test func errors() throws {
        #expect { try run("${UNSET:?set UNSET please}") } throws: { ($0 as! SoError).message == "required variable UNSET is missing: set UNSET please" }
        #expect { try run("${EMPTY:?x}") } throws: { ($0 as! SoError).message.contains("EMPTY") }
        #expect(throws: SoError.self) { try run("${UNSET?}") }
        #expect(try run("${EMPTY?x}") == "")
        for bad in ["${", "${SET", "${SET:-x", "${}", "${1X}", "${SET:x}", "${SET!}"] {
            #expect(throws: SoError.self, "\(bad)") { try run(bad) }
        }
    }

    @Test func variablesReferenced() {
        #expect(Interpolation.variables(in: "$A ${B:-${C}} $$D ${A}") == ["A", "B", "C"])
    }
}

@Suite struct DotEnvTests {
    @Test func parsesTheCommonForms() throws {
        let text = """
        # comment
        A=1
        export B=two words   # trailing comment
        C='single # not comment'
        D="line1\\nline2 \\"q\\" \\$HOME"
        E=
        F='multi
        line'
        G=a#b
        """
        let pairs = try DotEnv.parse(text, file: "x.env")
        let d = Dictionary(uniqueKeysWithValues: pairs.map { ($0.key, $0.value) })
        #expect(pairs.map(\.key) == ["A", "B", "C", "D", "E", "F", "G"])
        #expect(d["B"] == "two words")
        #expect(d["C"] == "single # not comment")
        #expect(d["D"] == "line1\nline2 \"q\" $HOME")
        #expect(d["E"] == "")
        #expect(d["F"] == "multi\nline")
        #expect(d["G"] == "a#b")
    }

    @Test func errorsNameTheLine() {
        #expect { try DotEnv.parse("A=1\nnovalue\n", file: "x.env") } throws: { ($0 as! SoError).line == "x.env:2: line without '=': 'novalue'" }
        #expect { try DotEnv.parse("A=1\nB=\"open\n", file: "x.env") } throws: { ($0 as! SoError).location?.line == 2 }
        #expect(throws: SoError.self) { try DotEnv.parse("1BAD=x\n", file: "x.env") }
    }

    /// Any value written by encode reads back identically.
    @Test func roundTripsAnyValue() throws {
        let alphabet = Array("ab Z09_-./:@+,%=#'\"\\$\n\t\r!{}[]ü€ ")
        var state: UInt64 = 0x12345678
        var values = ["", " ", "plain", " lead", "trail ", "it's", "\"dq\"", "#hash", "a #b", "$HOME", "${X}", "back\\slash", "multi\nline\n", "\n", "tab\t", "ü€"]
        for _ in 0..<3000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let len = Int(state >> 59)
            var s = ""
            for k in 0..<len { s.append(alphabet[Int((state >> UInt64(k * 3 % 50)) % UInt64(alphabet.count))]) }
            values.append(s)
        }
        var text = ""
        for (i, v) in values.enumerated() { text += DotEnv.encode(key: "K\(i)", value: v) + "\n" }
        let parsed = try DotEnv.parse(text, file: "rt.env")
        #expect(parsed.count == values.count)
        for (i, v) in values.enumerated() where parsed[i].value != v {
            Issue.record("value \(v.debugDescription) came back as \(parsed[i].value.debugDescription) from \(DotEnv.encode(key: "K", value: v).debugDescription)")
        }
    }
}

@Suite struct ShellWordsTests {
    @Test func splitsLikeAShell() throws {
        #expect(try ShellWords.split("a b  c") == ["a", "b", "c"])
        #expect(try ShellWords.split("sh -c 'echo hi && ls'") == ["sh", "-c", "echo hi && ls"])
        #expect(try ShellWords.split("say \"a \\\"q\\\" b\"") == ["say", "a \"q\" b"])
        #expect(try ShellWords.split("a\\ b c") == ["a b", "c"])
        #expect(try ShellWords.split("''") == [""])
        #expect(try ShellWords.split("\"/a.sh && /run.sh\"\n") == ["/a.sh && /run.sh"])
        #expect(throws: SoError.self) { try ShellWords.split("'open") }
        #expect(throws: SoError.self) { try ShellWords.split("\"open") }
    }
}
