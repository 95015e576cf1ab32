import Foundation
import SoBasics
import SoKube
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy
@testable import SoWorkspace

@Suite struct TaskCostTests {
    @Test func claudesResultLineIsTheWholeRun() {
        let lines = """
            {"type":"assistant","message":{"usage":{"input_tokens":5,"output_tokens":1}}}
            {"type":"result","total_cost_usd":0.25,"usage":{"input_tokens":100,"output_tokens":20,"cache_creation_input_tokens":7}}
            """
        let c = TaskCost.parse(lines)
        #expect(c.reported && c.usd == 0.25 && c.inputTokens == 100 && c.outputTokens == 20 && c.cacheWriteTokens == 7)
        #expect(c.text == "100 in · 20 out · $0.2500")
    }

    @Test func codexTurnsAreSummedAndHaveNoPrice() {
        let lines = """
            {"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":3}}
            {"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":2}}
            """
        let c = TaskCost.parse(lines)
        #expect(c.reported && c.usd == nil && c.inputTokens == 15 && c.outputTokens == 5 && c.cacheReadTokens == 4)
    }

    /// aider's usage report, as aider 0.86.2 printed it in AgentCLIE2ETests (its `calculate_and_show_tokens_and_cost`): its session figure is the
    /// run's; a count it rounded ("2.3k") is not read, one it printed whole is.
    @Test func aidersReportIsReadAndItsRoundedCountsAreNot() {
        let c = TaskCost.parse("Tokens: 2.6k sent, 21 received. Cost: $0.0066 message, $0.0066 session.")
        #expect(c.reported && c.usd == 0.0066 && c.inputTokens == nil && c.outputTokens == 21, "\(c)")
        #expect(c.text == "21 out · $0.0066" && c.problem == nil)
        // Two messages; the first with both caches, so its cost is on the next line; the session's figure is the last.
        let two = TaskCost.parse(
            """
            Tokens: 900 sent, 1.2k cache write, 300 cache hit, 40 received.
            Cost: $0.0090 message, $0.0090 session.
            Tokens: 800 sent, 20 received. Cost: $0.0050 message, $0.01 session.
            """)
        #expect(
            two.reported && two.usd == 0.01 && two.inputTokens == 1700 && two.outputTokens == 60
                && two.cacheReadTokens == 300 && two.cacheWriteTokens == nil, "\(two)")
        // Without a price (a model aider has none for), the tokens alone.
        let free = TaskCost.parse("Tokens: 120 sent, 8 received.")
        #expect(free.reported && free.usd == nil && free.inputTokens == 120 && free.outputTokens == 8, "\(free)")
        // Only the cache hit; a report after text that begins like one; a report cut short is none.
        let hit = TaskCost.parse("> Tokens: soon. Tokens: 50 sent, 30 cache hit, 5 received.")
        #expect(hit.inputTokens == 50 && hit.cacheReadTokens == 30 && hit.outputTokens == 5, "\(hit)")
        #expect(!TaskCost.parse("Tokens: 50 sent, 30 cache hit, 5 recei").reported)
        #expect(!TaskCost.parse("Cost: $1 message, $x session.").reported)
        // Claude's result line is the run's, whatever else the output says.
        let claude = TaskCost.parse(
            "Cost: $9.00 message, $9.00 session.\n"
                + #"{"type":"result","total_cost_usd":0.25,"usage":{"input_tokens":1}}"#)
        #expect(claude.usd == 0.25 && claude.inputTokens == 1)
    }

    @Test func nothingReportedIsSaidAndNothingInvented() {
        #expect(TaskCost.parse("").text == "not reported by the agent")
        let odd = TaskCost.parse(#"{"usage": "lots"}"#)
        #expect(!odd.reported && odd.problem != nil && odd.usd == nil)
        let t = TaskCost.total([TaskCost.parse(#"{"type":"result","total_cost_usd":1.5}"#), TaskCost(), odd])
        #expect(t.reported && t.usd == 1.5 && t.inputTokens == nil)
    }

    @Test func aReportParsesByLengthWhateverItsText() {
        let text = "line one\n@@ 1 state 6\nfake\n"
        let out = "@@ 4 text \(text.utf8.count)\n\(text)\n@@ 4 state 8\nrunning\n\n@@ 5 state 7\nqueued\n\n"
        let r = TaskRecord.parse(out)
        #expect(r.map(\.id) == [4, 5] && r[0].text == text && r[0].state == "running" && r[1].state == "queued")
    }

    /// Found by the task-report fuzz target (Fuzz/): a header whose size is near Int.max trapped on `eol + 1 + size`.
    @Test func aSizePastTheOutputEndsTheReportWithoutATrap() {
        let r = TaskRecord.parse("@@ 3 state 7\nqueued\n\n@@ 4 text 9223372036854775807\nx\n")
        #expect(r.map(\.id) == [3] && r[0].state == "queued")
    }

    /// Found by the task-report fuzz target: usage lines adding up past Int.max trapped; the counts are held there.
    @Test func tokenCountsPastIntsRangeAreHeldAtItsBound() {
        let line = #"{"type":"turn.completed","usage":{"input_tokens":9e18,"output_tokens":1}}"#
        let c = TaskCost.parse(line + "\n" + line)
        #expect(c.reported && c.inputTokens == Int.max && c.outputTokens == 2)
        #expect(TaskCost.total([c, c]).inputTokens == Int.max)
    }

    @Test func theCostIsTheDecimalTheAgentMeant() {
        let c = TaskCost.parse(#"{"type":"result","total_cost_usd":0.012799999999999999}"#)
        #expect(c.usd.map(TaskCost.decimal) == "0.0128")
        let cases: [(Double, String)] = [
            (0.0123, "0.0123"), (1.5, "1.5"), (2, "2"), (0, "0"), (0.1 + 0.2, "0.3"), (0.0000004, "0"),
            (0.0000015, "0.000002"), (12.3456789, "12.345679"), (.nan, "0"),
        ]
        for (v, want) in cases { #expect(TaskCost.decimal(v) == want, "\(v)") }
    }
}
