import Foundation
import SoBasics
import SoCompose
import SoTestSupport
import Testing

@Suite struct InterpolationTests {
    let env = ["SET": "value", "EMPTY": "", "NUM": "5", "B": "bee"]
    func run(_ s: String) throws -> String { try Interpolation.interpolate(s) { env[$0] } }

    @Test func plainReferences() throws {
        #expect(try run("$SET") == "value")
        #expect(try run("${SET}") == "value")
        #expect(try run("${UNSET}") == "")
        #expect(try run("$UNSET") == "")
        #expect(try run("http://${HOST:-h}:${NUM}/x") == "http://h:5/x")
        #expect(try run("$SET_more") == "")  // the whole name is SET_more
        #expect(try run("${SET}_more") == "value_more")
        #expect(try run("$SET-more $SET.x") == "value-more value.x")
        #expect(try run("no dollars {here}") == "no dollars {here}")
        #expect(try run("closing } alone") == "closing } alone")
    }

    /// Bare references without a value are reported (docker compose warns); defaults, `?` forms and
    /// unused alternatives are not.
    @Test func unsetBareReferencesAreReported() throws {
        var unset: [String] = []
        let out = try Interpolation.interpolate(
            "$A ${G} ${C:-c} ${D-d} ${E:+e} ${SET} $A ${EMPTY} ${UNSET:-${F}}", lookup: { env[$0] },
            unset: { unset.append($0) })
        #expect(out == "  c d  value   ")
        #expect(unset == ["A", "G", "F"])
    }

    @Test func defaults() throws {
        #expect(try run("${UNSET:-d}") == "d")
        #expect(try run("${EMPTY:-d}") == "d")
        #expect(try run("${SET:-d}") == "value")
        #expect(try run("${UNSET-d}") == "d")
        #expect(try run("${EMPTY-d}") == "")
        #expect(try run("${SET-d}") == "value")
        #expect(try run("${UNSET:-}") == "")
        #expect(try run("${UNSET:-a b: c}") == "a b: c")
        #expect(try run("${UNSET:-http://x:80/p?q=1}") == "http://x:80/p?q=1")
    }

    @Test func alternatives() throws {
        #expect(try run("${SET:+alt}") == "alt")
        #expect(try run("${EMPTY:+alt}") == "")
        #expect(try run("${UNSET:+alt}") == "")
        #expect(try run("${SET+alt}") == "alt")
        #expect(try run("${EMPTY+alt}") == "alt")
        #expect(try run("${UNSET+alt}") == "")
        #expect(try run("${SET:+[$SET]}") == "[value]")
    }

    @Test func nested() throws {
        #expect(try run("${A:-${B:-x}}") == "bee")
        #expect(try run("${A:-${C:-x}}") == "x")
        #expect(try run("${A:-${C:-${SET}}}") == "value")
        #expect(try run("${UNSET:-a ${SET} b}") == "a value b")
        #expect(try run("${UNSET:-$SET}") == "value")
        #expect(try run("${UNSET:-${EMPTY:+no}yes}") == "yes")
        #expect(try run("pre ${A:-${B}} mid ${C:-${D:-d}} post") == "pre bee mid d post")
    }

    @Test func dollarEscapesAndLoneDollars() throws {
        #expect(try run("$$SET and $${SET}") == "$SET and ${SET}")
        #expect(try run("$$") == "$")
        #expect(try run("$$$SET") == "$value")
        #expect(try run("cost: $ 5, trailing $") == "cost: $ 5, trailing $")
        #expect(try run("$1 $- $.") == "$1 $- $.")
        #expect(try run("${UNSET:-$$}") == "$")
        #expect(
            try run("mysqladmin --password=\"$$(cat /run/secrets/p)\"")
                == "mysqladmin --password=\"$(cat /run/secrets/p)\"")
    }

    @Test func requiredVariables() throws {
        #expect(try run("${SET:?must}") == "value")
        #expect(try run("${SET?must}") == "value")
        #expect(try run("${EMPTY?x}") == "")
        let e = soError { _ = try run("${UNSET:?set UNSET please}") }
        #expect(e?.message == "required variable UNSET is missing: set UNSET please")
        #expect(e?.hint != nil)
        #expect(soError { _ = try run("${EMPTY:?x}") }?.message == "required variable EMPTY is missing: x")
        #expect(soError { _ = try run("${UNSET?}") }?.message == "required variable UNSET is missing a value")
        #expect(
            soError { _ = try run("${UNSET?need ${SET}}") }?.message == "required variable UNSET is missing: need value"
        )
    }

    @Test func unusedDefaultsAreNotEvaluated() throws {
        #expect(try run("${SET:-${UNSET:?never}}") == "value")
        #expect(try run("${UNSET:+${UNSET:?never}}") == "")
        #expect(
            soError { _ = try run("${UNSET:-${MISSING:?now}}") }?.message == "required variable MISSING is missing: now"
        )
        // …but they must still be well formed.
        #expect(throws: SoError.self) { try run("${SET:-${}}") }
    }

    @Test func malformedExpressions() throws {
        for bad in [
            "${", "${SET", "${SET:-x", "${}", "${1X}", "${SET:x}", "${SET!}", "${SET x}", "${ SET}", "${A:-${B}",
            "${-x}",
        ] {
            let e = soError { _ = try run(bad) }
            #expect(e?.hint != nil, "\(bad)")
            #expect(e?.message.first?.isLowercase == true, "\(bad)")
        }
        #expect(soError { _ = try run("${SET:x}") }?.message.contains("SET") == true)
        #expect(soError { _ = try run("abc ${NAME:-open") }?.message == "unterminated '${NAME:-open'")
    }

    @Test func lookupIsTheOnlySource() throws {
        // HOME and PATH are set in any process environment; interpolation must not see them.
        #expect(try Interpolation.interpolate("${HOME:-fallback} [$PATH]") { _ in nil } == "fallback []")
        var asked: [String] = []
        _ = try Interpolation.interpolate("$A ${B:-x} $$C") {
            asked.append($0)
            return nil
        }
        #expect(asked == ["A", "B"])
    }

    @Test func unicodeSurvives() throws {
        #expect(try run("ü€ ${SET}😀 $SET\u{301}") == "ü€ value😀 value\u{301}")
        #expect(try run("$\u{301}") == "$\u{301}")
    }

    @Test func variablesReferenced() {
        #expect(
            Interpolation.variables(in: "$A ${B:-${C}} $$D ${A} ${E:?msg ${F}} ${G:+${H}}") == [
                "A", "B", "C", "E", "F", "G", "H",
            ])
        #expect(Interpolation.variables(in: "plain text") == [])
        #expect(Interpolation.variables(in: "$A ${") == ["A"])
    }

    @Test func textWithoutReferencesIsUnchanged() throws {
        var rng = SplitMix(state: 7)
        let alphabet = Array("ab {}:-?+\"'\\\n#ü")
        for _ in 0..<500 {
            let s = String((0..<Int.random(in: 0...20, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            #expect(try Interpolation.interpolate(s) { _ in "X" } == s)
        }
    }
}
