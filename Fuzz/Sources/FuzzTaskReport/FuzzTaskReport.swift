import Foundation
import FuzzSupport
import SoBasics
import SoWorkspaceReports

/// A task's report as the runner prints it ("@@ ID NAME BYTES", the bytes, a newline), whose `cost` file and
/// log lines are the agent's JSON output.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTaskReport(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = Fuzz.text(start, count)
    report(text)
    cost(text)
    for line in text.split(separator: "\n") { log(String(line)) }
    return 0
}

/// Each record's files, framed again as the runner frames them, read back to the same text and command.
func report(_ output: String) {
    let records = TaskRecord.parse(output)
    var framed = ""
    for r in records {
        for (name, body) in [("text", r.text), ("command", r.command)] {
            framed += "@@ \(r.id) \(name) \(body.utf8.count)\n\(body)\n"
        }
    }
    let back = TaskRecord.parse(framed)
    Fuzz.check(
        back.map(\.id) == records.map(\.id), "ids read back otherwise: \(records.map(\.id)) -> \(back.map(\.id))")
    for (a, b) in zip(records, back) {
        Fuzz.check(a.text == b.text && a.command == b.command, "task \(a.id)'s text reads back otherwise")
    }
}

/// The agent's usage lines: read the same twice; one task's total is itself.
func cost(_ text: String) {
    let c = TaskCost.parse(text)
    Fuzz.check(c == TaskCost.parse(text), "two reads differ")
    let total = TaskCost.total([c])
    Fuzz.check(total.reported == c.reported, "total reported \(total.reported), task \(c.reported)")
    if c.reported {
        Fuzz.check(
            total.inputTokens == c.inputTokens && total.outputTokens == c.outputTokens
                && total.cacheReadTokens == c.cacheReadTokens && total.cacheWriteTokens == c.cacheWriteTokens,
            "one task's total differs from it: \(c) -> \(total)")
    }
    _ = c.text
}

/// A log line as `task` shows it: nothing that reaches the terminal is a control character (tab aside), DEL,
/// a C1 control or a bidirectional override, whatever the agent printed.
func log(_ line: String) {
    for shown in AgentOutput.render(line) {
        let bad = shown.unicodeScalars.first {
            switch $0.value {
            case 0x09: return false
            case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: return true
            default: return false
            }
        }
        Fuzz.check(bad == nil, "a control character U+\(String(bad?.value ?? 0, radix: 16)) reaches the terminal")
    }
}
