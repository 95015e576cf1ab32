import Foundation
import SoBasics
import SoCompose
import SoTestSupport
import Testing

@Suite struct ShellWordsTests {
    @Test func splitsLikeAShell() throws {
        #expect(try ShellWords.split("a b  c") == ["a", "b", "c"])
        #expect(try ShellWords.split("  \t lead and trail \n") == ["lead", "and", "trail"])
        #expect(try ShellWords.split("") == [])
        #expect(try ShellWords.split("sh -c 'echo hi && ls'") == ["sh", "-c", "echo hi && ls"])
        #expect(try ShellWords.split("say \"a \\\"q\\\" b\"") == ["say", "a \"q\" b"])
        #expect(try ShellWords.split(#""\$HOME \\ \x \`""#) == [#"$HOME \ \x `"#])
        #expect(try ShellWords.split(#"'no \escapes \' here"#) == [#"no \escapes \"#, "here"])
        #expect(try ShellWords.split("a\\ b c") == ["a b", "c"])
        #expect(try ShellWords.split("''") == [""])
        #expect(try ShellWords.split("a\"\"b ''c") == ["ab", "c"])
        #expect(try ShellWords.split("pre'mid dle'post") == ["premid dlepost"])
        #expect(try ShellWords.split("line \\\ncontinued") == ["line", "continued"])
        #expect(try ShellWords.split("a\r\nb") == ["a", "b"])
        #expect(try ShellWords.split("$HOME ${X:-y} `cmd`") == ["$HOME", "${X:-y}", "`cmd`"])
        #expect(try ShellWords.split("\"/a.sh && /run.sh\"\n") == ["/a.sh && /run.sh"])
        #expect(try ShellWords.split("'\u{301}x'") == ["\u{301}x"])
        #expect(try ShellWords.split("trailing\\") == ["trailing\\"])
    }

    @Test func unterminatedQuotesFail() {
        #expect(soError { _ = try ShellWords.split("'open") }?.message == "unterminated single quote in ''open'")
        #expect(
            soError { _ = try ShellWords.split("echo \"open") }?.message == "unterminated double quote in 'echo \"open'"
        )
        #expect(soError { _ = try ShellWords.split("\"ends with backslash\\") } != nil)
    }

    /// Words joined by `ShellWords.join` split back to the same words.
    @Test func quoteRoundTrips() throws {
        let alphabet: [String] = ["a", "-", "/", " ", "'", "\"", "\\", "$", "\n", "\t", "#", "*", "ü", "\u{301}", "`"]
        var rng = SplitMix(state: 42)
        for _ in 0..<1000 {
            let words = (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                (0..<Int.random(in: 0...6, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }.joined()
            }
            #expect(try ShellWords.split(ShellWords.join(words)) == words, "\(words)")
        }
    }
}
