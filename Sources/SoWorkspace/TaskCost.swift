import Foundation
import SoKube

/// What a task cost, read from the agent CLI's own output (its usage lines, kept by the runner as the file `cost`),
/// never estimated: Claude Code's `result` line (`--output-format json` or `stream-json`: `total_cost_usd` and
/// `usage`, for the whole run), else Codex's `turn.completed` lines (`exec --json`: `usage` per turn, summed; no
/// price), else aider's usage reports (`Tokens: 2.3k sent, 56 received. Cost: $0.0063 message, $0.0063 session.`, one
/// per message: the last one's session figure is the run's; its counts past 999 are rounded, "2.3k", so a count is
/// read only when every report printed it whole). Nothing read: `reported` is false.
public struct TaskCost: Sendable, Equatable {
    public var reported = false
    public var inputTokens: Int?
    public var outputTokens: Int?
    /// Input tokens read from, and written to, the agent's prompt cache (counted apart from inputTokens, as the CLI does).
    public var cacheReadTokens: Int?
    public var cacheWriteTokens: Int?
    public var usd: Double?
    /// Why the lines could not be read (a warning; the task's record stays).
    public var problem: String?

    public init() {}

    public static func parse(_ text: String) -> TaskCost {
        var cost = TaskCost()
        var objects: [JSON] = []
        var bad = 0
        var aider = AiderUsage()
        for line in text.split(separator: "\n") where !line.allSatisfy(\.isWhitespace) {
            // A line that is neither JSON nor aider's is counted and named below (the record keeps the rest).
            guard let o = try? JSON.parse(Data(line.utf8)), case .object = o else {
                if !aider.read(line) { bad += 1 }
                continue
            }
            objects.append(o)
        }
        if let result = objects.last(where: { $0["type"]?.string == "result" }) {
            cost.add(result["usage"])
            cost.usd = result["total_cost_usd"]?.double ?? result["cost_usd"]?.double
            cost.reported = cost.usd != nil || cost.inputTokens != nil || cost.outputTokens != nil
        } else if objects.contains(where: { $0["type"]?.string == "turn.completed" }) || aider.reports == 0 {
            for turn in objects where turn["type"]?.string == "turn.completed" { cost.add(turn["usage"]) }
            cost.reported = cost.inputTokens != nil || cost.outputTokens != nil
        } else {
            cost.inputTokens = aider.sent.value
            cost.outputTokens = aider.received.value
            cost.cacheReadTokens = aider.cacheHit.value
            cost.cacheWriteTokens = aider.cacheWrite.value
            cost.usd = aider.session
            cost.reported = true
        }
        if bad > 0 && !cost.reported {
            cost.problem = "\(bad) usage \(bad == 1 ? "line does" : "lines do") not parse as JSON"
        } else if !cost.reported && !objects.isEmpty {
            cost.problem =
                "the output has usage lines, but no Claude 'result' line, Codex 'turn.completed' line or aider report"
        }
        return cost
    }

    /// aider's usage reports, added up: `Tokens: N sent[, N cache write][, N cache hit], N received.` and
    /// `Cost: $M message, $S session.` (on the same line or the next).
    struct AiderUsage {
        /// A count summed over the reports; nil once one report printed it rounded ("2.3k") or none printed it.
        struct Count {
            var sum: Int?
            var rounded = false
            var value: Int? { rounded ? nil : sum }
            mutating func add(_ text: Substring?) {
                guard let text else { return }
                guard let n = Int(text) else {
                    rounded = true
                    return
                }
                sum = TaskCost.plus(sum ?? 0, n)
            }
        }
        var sent = Count(), received = Count(), cacheWrite = Count(), cacheHit = Count()
        var session: Double?
        var reports = 0

        /// Whether the line is one of aider's (a report's tokens, its cost, or both). Read by hand, not with a
        /// Swift `Regex`: the standard library's regex compiler leaks its tree (LeakSanitizer stops the fuzzer on it).
        mutating func read(_ line: Substring) -> Bool {
            var known = false
            if let m = Self.tokens(line) {
                sent.add(m.sent)
                cacheWrite.add(m.cacheWrite)
                cacheHit.add(m.cacheHit)
                received.add(m.received)
                reports += 1
                known = true
            }
            if let usd = Self.session(line).flatMap({ Double($0) }) {
                session = usd
                if !known { reports += 1 }
                known = true
            }
            return known
        }

        /// `Tokens: N sent[, N cache write][, N cache hit], N received.` anywhere in the line, each N digits and
        /// dots with an optional `k`.
        static func tokens(_ line: Substring)
            -> (sent: Substring, cacheWrite: Substring?, cacheHit: Substring?, received: Substring)?
        {
            for start in Cursor.starts(of: "Tokens: ", in: line) {
                var c = Cursor(rest: line[start...])
                guard c.literal("Tokens: "), let sent = c.number(k: true), c.literal(" sent") else { continue }
                let write = c.optional(", ", then: " cache write")
                let hit = c.optional(", ", then: " cache hit")
                guard c.literal(", "), let received = c.number(k: true), c.literal(" received.") else { continue }
                return (sent, write, hit, received)
            }
            return nil
        }

        /// The session's dollars of `Cost: $M message, $S session.` anywhere in the line.
        static func session(_ line: Substring) -> Substring? {
            for start in Cursor.starts(of: "Cost: $", in: line) {
                var c = Cursor(rest: line[start...])
                guard c.literal("Cost: $"), c.number(k: false) != nil, c.literal(" message, $"),
                    let usd = c.number(k: false), c.literal(" session.")
                else { continue }
                return usd
            }
            return nil
        }

        /// A reading position in a line.
        struct Cursor {
            var rest: Substring

            /// Where `marker` begins in `line`, each place it does.
            static func starts(of marker: String, in line: Substring) -> [Substring.Index] {
                var found: [Substring.Index] = []
                var from = line.startIndex
                while let r = line[from...].range(of: marker) {
                    found.append(r.lowerBound)
                    from = line.index(after: r.lowerBound)
                }
                return found
            }

            mutating func literal(_ text: String) -> Bool {
                guard rest.hasPrefix(text) else { return false }
                rest = rest.dropFirst(text.count)
                return true
            }

            /// One or more ASCII digits and dots, then a `k` when `k` allows it.
            mutating func number(k: Bool) -> Substring? {
                var end = rest.startIndex
                while end < rest.endIndex, rest[end].isASCII, rest[end].isNumber || rest[end] == "." {
                    end = rest.index(after: end)
                }
                guard end > rest.startIndex else { return nil }
                if k, end < rest.endIndex, rest[end] == "k" { end = rest.index(after: end) }
                defer { rest = rest[end...] }
                return rest[..<end]
            }

            /// The number between `before` and `after`, or nothing read at all when the text there is otherwise.
            mutating func optional(_ before: String, then after: String) -> Substring? {
                var trial = self
                guard trial.literal(before), let value = trial.number(k: true), trial.literal(after) else { return nil }
                self = trial
                return value
            }
        }
    }

    mutating func add(_ usage: JSON?) {
        guard let usage, case .object = usage else { return }
        func sum(_ into: inout Int?, _ keys: String...) {
            for k in keys { if let v = usage[k]?.int { into = Self.plus(into ?? 0, v) } }
        }
        sum(&inputTokens, "input_tokens")
        sum(&outputTokens, "output_tokens")
        sum(&cacheReadTokens, "cache_read_input_tokens", "cached_input_tokens")
        sum(&cacheWriteTokens, "cache_creation_input_tokens")
    }

    /// Dollars as the decimal the agent meant, at most 6 places and no float noise: a CLI's own sums reach
    /// `0.012799999999999999`, which is written "0.0128".
    public static func decimal(_ usd: Double) -> String {
        guard usd.isFinite else { return "0" }
        var s = String(format: "%.6f", usd)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s == "-0" ? "0" : s
    }

    /// Token counts added up, held at Int's bounds: an agent's output is outside input, and a count past the range
    /// (`9e18` twice) would trap.
    static func plus(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? Int.max : Int.min) : sum
    }

    /// Tasks' costs added up (a workspace's): what any of them reported.
    public static func total(_ costs: [TaskCost]) -> TaskCost {
        var t = TaskCost()
        for c in costs where c.reported {
            t.reported = true
            func plus(_ a: Int?, _ b: Int?) -> Int? { a == nil && b == nil ? nil : Self.plus(a ?? 0, b ?? 0) }
            t.inputTokens = plus(t.inputTokens, c.inputTokens)
            t.outputTokens = plus(t.outputTokens, c.outputTokens)
            t.cacheReadTokens = plus(t.cacheReadTokens, c.cacheReadTokens)
            t.cacheWriteTokens = plus(t.cacheWriteTokens, c.cacheWriteTokens)
            if let u = c.usd { t.usd = (t.usd ?? 0) + u }
        }
        return t
    }

    /// "12,345 in · 678 out · $0.0123", or "not reported by the agent".
    public var text: String {
        guard reported else { return problem.map { "unreadable (\($0))" } ?? "not reported by the agent" }
        var parts: [String] = []
        if let i = inputTokens { parts.append("\(i) in") }
        if let o = outputTokens { parts.append("\(o) out") }
        if let r = cacheReadTokens, r > 0 { parts.append("\(r) cache read") }
        if let u = usd { parts.append(String(format: "$%.4f", u)) }
        return parts.joined(separator: " · ")
    }
}
