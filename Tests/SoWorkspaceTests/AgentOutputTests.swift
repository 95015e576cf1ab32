import Foundation
import SoBasics
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoWorkspace

/// Claude Code's `stream-json` output (the claude agent's default task command) as a person reads it, and its cost
/// in the task's report.
@Suite struct AgentOutputTests {
    /// A run as `claude -p … --output-format stream-json --verbose` prints it (one JSON event a line): the session,
    /// what the assistant says and the tools it calls, their answers (one an error), and the result with its cost.
    static let sample = [
        #"{"type":"system","subtype":"init","cwd":"/workspace","session_id":"9d1c2e4a","tools":["Task","Bash","Glob","Grep","Read","Edit","Write"],"mcp_servers":[],"model":"claude-sonnet-4-5-20250929","permissionMode":"acceptEdits","apiKeySource":"ANTHROPIC_API_KEY"}"#,
        #"{"type":"assistant","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"I'll look at the login test first."}],"stop_reason":null,"usage":{"input_tokens":4,"cache_creation_input_tokens":1200,"cache_read_input_tokens":0,"output_tokens":3}},"parent_tool_use_id":null,"session_id":"9d1c2e4a"}"#,
        #"{"type":"assistant","message":{"id":"msg_01","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"the test fails on empty input"},{"type":"tool_use","id":"toolu_01","name":"Bash","input":{"command":"npm test -- login","description":"Run the login test"}}],"usage":{"input_tokens":4,"output_tokens":60}},"parent_tool_use_id":null,"session_id":"9d1c2e4a"}"#,
        #"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":"FAIL src/login.test.ts\n  ✕ rejects an empty password (5 ms)\n\nTests: 1 failed, 11 passed","is_error":false}]},"parent_tool_use_id":null,"session_id":"9d1c2e4a"}"#,
        #"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_02","name":"Edit","input":{"file_path":"/workspace/src/login.ts","old_string":"if (password)","new_string":"if (password.length > 0)"}}],"usage":{"input_tokens":8,"output_tokens":90}},"session_id":"9d1c2e4a"}"#,
        #"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_02","type":"tool_result","content":[{"type":"text","text":"The file /workspace/src/login.ts has been updated."}]}]},"session_id":"9d1c2e4a"}"#,
        #"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_03","name":"TodoWrite","input":{"todos":[{"content":"fix login","status":"completed"}]}}]},"session_id":"9d1c2e4a"}"#,
        #"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_03","type":"tool_result","content":"Permission to use TodoWrite has been denied.","is_error":true}]},"session_id":"9d1c2e4a"}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"Fix"}}}"#,
        #"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Fixed: empty passwords are refused.\nAll 12 tests pass."}],"usage":{"input_tokens":10,"output_tokens":187}},"session_id":"9d1c2e4a"}"#,
        #"{"type":"result","subtype":"success","is_error":false,"duration_ms":12345,"duration_api_ms":11020,"num_turns":4,"result":"Fixed: empty passwords are refused.\nAll 12 tests pass.","session_id":"9d1c2e4a","total_cost_usd":0.0123,"usage":{"input_tokens":1200,"cache_creation_input_tokens":1200,"cache_read_input_tokens":300,"output_tokens":340,"server_tool_use":{"web_search_requests":0}}}"#,
    ]

    @Test func aStreamJsonRunReadsAsText() {
        #expect(
            Self.sample.flatMap(AgentOutput.render) == [
                "● session started (claude-sonnet-4-5-20250929) in /workspace",
                "I'll look at the login test first.",
                "→ Bash npm test -- login",
                "  ← FAIL src/login.test.ts (+2 lines)",
                "→ Edit /workspace/src/login.ts",
                "  ← The file /workspace/src/login.ts has been updated.",
                #"→ TodoWrite {"todos":[{"content":"fix login","status":"completed"}]}"#,
                "  ✗ Permission to use TodoWrite has been denied.",
                "Fixed: empty passwords are refused.",
                "All 12 tests pass.",
                "■ done: 4 turns · 12.3 s · 1200 in · 340 out · 300 cache read · $0.0123",
            ])
    }

    @Test func anErrorEndSaysWhyAndOtherLinesAreShownAsTheyAre() {
        let end =
            #"{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":30,"result":"Reached the maximum number of turns\nstopping","total_cost_usd":0.5}"#
        #expect(
            AgentOutput.render(end) == [
                "■ error_max_turns: 30 turns · $0.5000", "  Reached the maximum number of turns",
            ])
        #expect(AgentOutput.render("npm WARN deprecated x@1") == ["npm WARN deprecated x@1"])
        #expect(
            AgentOutput.render(#"{"type":"turn.completed","usage":{"input_tokens":5}}"#) == [
                #"{"type":"turn.completed","usage":{"input_tokens":5}}"#
            ])
        #expect(AgentOutput.render("{not json") == ["{not json"])
        let long =
            #"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":""#
            + String(repeating: "x", count: 300) + #""}}]}}"#
        let shown = AgentOutput.render(long)
        #expect(shown.count == 1 && shown[0].count == AgentOutput.width && shown[0].hasSuffix("…"), "\(shown)")
    }

    /// Agent output is hostile: escape sequences (a window title, a clear screen, colours) never reach the terminal,
    /// and other control characters and bidirectional overrides are shown, not obeyed — in JSON events and plain lines.
    @Test func nothingTheAgentPrintsControlsTheTerminal() {
        let title =
            #"{"type":"assistant","message":{"content":[{"type":"text","text":"ok\u001b]0;pwned\u0007\u001b[2Jdone\u202e!\r"}]}}"#
        #expect(AgentOutput.render(title) == [#"okdone\u{202e}!\u{d}"#])
        let tool =
            #"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash\u001b[8m","input":{"command":"ls\u0000"}}]}}"#
        #expect(AgentOutput.render(tool) == [#"→ Bash ls\u{0}"#])
        #expect(AgentOutput.render("plain \u{1B}[31mred\u{1B}[0m\u{07} \u{9B}1mx") == [#"plain red\u{7} x"#])
        #expect(TerminalText.safe("tabs\tstay, ünïcode ✓ stays") == "tabs\tstay, ünïcode ✓ stays")
        #expect(TerminalText.safe("a\u{1B}]8;;http://evil\u{1B}\\link\u{1B}]8;;\u{1B}\\b") == "alinkb")
    }
}

/// The runner keeps Claude Code's result line as the task's cost (not every message's usage), and `tasks logs`
/// renders the log.
@Suite(.serialized) struct AgentOutputTaskTests {
    @Test func theDefaultAgentsStreamJsonIsReportedWithItsCost() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        try g.w.h.tmp.write("events.jsonl", AgentOutputTests.sample.joined(separator: "\n") + "\n")
        var req = TaskRequest(directory: g.dir, text: "fix the login")
        req.command = "cat '\(g.w.h.path("events.jsonl"))'"
        req.push = false
        req.cluster = g.w.clusterOptions
        let q = TaskQueueAction(g.w.ctx)
        let id = try await q.submit(req).id
        let t = try await q.wait(g.dir, cluster: g.w.clusterOptions, id: id, follow: false)
        #expect(t.state == "succeeded", "\(t)")
        #expect(
            t.cost.reported && t.cost.usd == 0.0123 && t.cost.inputTokens == 1200 && t.cost.outputTokens == 340
                && t.cost.cacheReadTokens == 300 && t.cost.problem == nil, "\(t.cost)")
        let cost = try String(
            contentsOfFile: Path.join(g.checkout, ".git/so/tasks/\(id)/cost"), encoding: .utf8)
        #expect(cost.split(separator: "\n").count == 1 && cost.hasPrefix(#"{"type":"result""#), "\(cost)")
        _ = try await q.logs(g.dir, cluster: g.w.clusterOptions, id: id, follow: false)
        let out = g.w.h.console.stdout
        #expect(out.contains("→ Bash npm test -- login\n") && out.contains("■ done: 4 turns · 12.3 s"), "\(out)")
        #expect(!out.contains(#""type":"assistant""#), "\(out)")
    }
}
