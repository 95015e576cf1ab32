import Foundation
import SoBasics
import Testing

/// A command line in a hint is one line that a shell runs as shown.
@Suite struct CommandTextTests {
    @Test func wordsAreQuotedAndAScriptIsShownAsAnEllipsis() {
        let argv = ["kubectl", "exec", "-n", "ns", "p-1", "--", "sh", "-c", "set -e\ncat > \"$1\"", "so", "it's", "é"]
        let line = CommandText.brief(argv)
        #expect(line == #"kubectl exec -n ns p-1 -- sh -c '…' so 'it'\''s' 'é'"#)
        #expect(!line.contains("\n"))
        #expect(CommandText.brief(["git", String(repeating: "x", count: 81)]) == "git '…'")
    }
}
