import Foundation
import SoBasics
import Testing

/// Edits through the YAML tree: what is kept, what is written anew, and what cannot be edited.
@Suite struct YAMLDocumentTests {
    @Test func aDocumentTheWriterWroteComesBackByteForByte() throws {
        let text = YValue.map([
            ("stack", .string("/abs/stacks/web")), ("deploy-to", .string("k8s-kind")),
            (
                "config",
                .map([
                    ("PORT", .int(8080)), ("MODE", .string("0755")), ("ON", .string("yes")), ("ADDR", .string("22:22")),
                    ("DEBUG", .bool(false)), ("NOTE", .string("two\nlines\n")), ("EMPTY", .null),
                ])
            ),
            ("network", .map([("ports", .map([("web", .list([.string("80"), .string("8080:80")]))]))])),
            ("volumes", .map([("data", .null)])),
        ]).yaml()
        #expect(try YAMLDocument(text: text, file: "spec.yml").text == text)
    }

    /// The head's comments are lines as YAML reads them: a file saved with CRLF, or a lone CR (YAML's old Mac
    /// break) inside a comment, is written back as `\n` lines, and the text reads back to the same tree (a lone
    /// CR kept inside a written comment line once turned what followed it into content: found by FuzzStack).
    @Test(arguments: [
        ("# head\r\n# more\r\nstack: x\r\n", "# head\n# more\nstack: x\n"),
        ("# a\rtail: 1\n", "# a\ntail: 1\n"),
        ("# a\rword\n", nil),
        ("# one\u{2028}two: 2\n", "# one\ntwo: 2\n"),
    ])
    func theHeadSplitsOnEveryLineBreakYAMLKnows(text: String, written: String?) throws {
        let doc = try YAMLDocument(text: text, file: "spec.yml")
        if let written { #expect(doc.text == written) }
        let back = try YAMLDocument(text: doc.text, file: "spec.yml")
        #expect(back.root == doc.root)
        #expect(back.text == doc.text)
    }

    @Test func setReplacesInPlaceOrAppends() throws {
        var doc = try YAMLDocument(
            text: "# header\n\n# more\nstack: x\nnamespace: a\nconfig: {K: v}\n", file: "spec.yml")
        try doc.set(["namespace"], .string("b"))
        try doc.set(["config", "NEW"], .string("n"))
        try doc.set(["network", "http-proxy"], .list([]))
        #expect(
            doc.text
                == "# header\n\n# more\nstack: x\nnamespace: b\nconfig:\n  K: v\n  NEW: 'n'\nnetwork:\n  http-proxy: []\n"
        )
    }

    @Test func insertMakesOrExtendsAList() throws {
        var doc = try YAMLDocument(text: "network:\n  http-proxy:\n    - host-name: a", file: "spec.yml")
        try doc.insert(.map([("host-name", .string("b"))]), intoListAt: ["network", "http-proxy"])
        try doc.insert(.map([("host-name", .string("c"))]), intoListAt: ["network", "http-proxy"], at: 0)
        #expect(doc.text == "network:\n  http-proxy:\n    - host-name: c\n    - host-name: a\n    - host-name: b\n")
        var empty = try YAMLDocument(text: "", file: "spec.yml")
        try empty.insert(.string("x"), intoListAt: ["a", "b"])
        #expect(empty.text == "a:\n  b:\n    - x\n")
    }

    @Test func aStepThatIsNotAMappingIsAnError() throws {
        var doc = try YAMLDocument(text: "network: none\nlist: [1]\n", file: "spec.yml")
        #expect { try doc.set(["network", "http-proxy"], .null) } throws: { e in
            let s = e as? SoError
            return s?.message == "network is not a mapping, so 'http-proxy' cannot be set in it" && s?.hint != nil
        }
        #expect(throws: SoError.self) { try doc.insert(.null, intoListAt: ["network"]) }
    }
}
