import Foundation
import SoBasics
import SoKube

/// A task's log as a person reads it (`task`, `tasks logs`, with `-f` as it comes): Claude Code's `stream-json`
/// events (`claude -p … --output-format stream-json --verbose`, the default task of the claude agent) become text —
/// what the agent says, each tool it uses on one line, a tool's answer in one line, and the end with its turns,
/// time and cost — and any other line is shown as it is. Agent text is hostile: every piece of it goes through
/// `TerminalText.safe` (no escape sequence or control character reaches the terminal). Pure: one line in, the
/// lines to print out.
public enum AgentOutput {
    /// The widest a one-line summary (a tool's input or answer) is shown.
    static let width = 160

    public static func render(_ line: String) -> [String] {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("{"), let event = try? JSON.parse(Data(trimmed.utf8)),  // not JSON: shown as it is
            let type = event["type"]?.string
        else { return [TerminalText.safe(line)] }
        switch type {
        case "system":
            guard event["subtype"]?.string == "init" else { return [] }
            let model = event["model"]?.string.map { " (\($0))" } ?? ""
            return [TerminalText.safe("● session started\(model) in \(event["cwd"]?.string ?? "?")")]
        case "assistant": return assistant(event.at("message", "content")?.array ?? [])
        case "user": return toolResults(event.at("message", "content")?.array ?? [])
        case "result": return result(event, line: trimmed)
        case "stream_event": return []
        default: return [TerminalText.safe(line)]
        }
    }

    /// What the agent says (its lines), and one line per tool it calls; its thinking is not shown.
    static func assistant(_ content: [JSON]) -> [String] {
        content.flatMap { item -> [String] in
            switch item["type"]?.string {
            case "text":
                return (item["text"]?.string ?? "").split(separator: "\n", omittingEmptySubsequences: false).map {
                    TerminalText.safe(String($0))
                }
            case "tool_use":
                let name = item["name"]?.string ?? "tool"
                return [clip("→ \(name) \(summary(item["input"]))")]
            default: return []
            }
        }
    }

    /// A tool's input in a few words: the command, path, pattern or URL it names, else its JSON.
    static func summary(_ input: JSON?) -> String {
        guard let input else { return "" }
        for key in ["command", "file_path", "path", "pattern", "url", "query", "description"] {
            if let v = input[key]?.string { return v }
        }
        return String(decoding: input.yValue.compactJSON(), as: UTF8.self)
    }

    /// Each tool's answer in one line: its first line, and how many more there are; an error says so.
    static func toolResults(_ content: [JSON]) -> [String] {
        content.compactMap { item -> String? in
            guard item["type"]?.string == "tool_result" else { return nil }
            let text: String
            if let s = item["content"]?.string {
                text = s
            } else {
                text = (item["content"]?.array ?? []).compactMap { $0["text"]?.string }.joined(separator: "\n")
            }
            let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                !$0.isEmpty
            }
            let more = lines.count > 1 ? " (+\(lines.count - 1) lines)" : ""
            let mark = item["is_error"]?.bool == true ? "  ✗ " : "  ← "
            return clip(mark + (lines.first ?? "(no output)"), suffix: more)
        }
    }

    /// The end: how it ended, its turns and time, and its cost as the task's report reads it (TaskCost).
    static func result(_ event: JSON, line: String) -> [String] {
        let subtype = event["subtype"]?.string ?? "ended"
        var parts: [String] = []
        if let turns = event["num_turns"]?.int { parts.append("\(turns) turn\(turns == 1 ? "" : "s")") }
        if let ms = event["duration_ms"]?.double { parts.append(String(format: "%.1f s", ms / 1000)) }
        let cost = TaskCost.parse(line)
        if cost.reported { parts.append(cost.text) }
        var out = [TerminalText.safe("■ \(subtype == "success" ? "done" : subtype): " + parts.joined(separator: " · "))]
        if event["is_error"]?.bool == true, let text = event["result"]?.string,
            let first = text.split(separator: "\n").first
        {
            out.append(clip("  " + first))
        }
        return out
    }

    /// One line, made safe, cut to `width` (with `…`), then `suffix`.
    static func clip(_ text: String, suffix: String = "") -> String {
        let flat = text.replacingOccurrences(of: "\n", with: " ")
        let cut = flat.count > width ? String(flat.prefix(width - 1)) + "…" : flat
        return TerminalText.safe(cut) + suffix
    }
}
