import Foundation
import SoBasics

/// A task's report, as the runner's files in the container hold it (`TaskRunner`'s header), read back by any `so`.
public struct TaskRecord: Sendable {
    public struct Step: Sendable, Equatable {
        public var time: Date?
        public var text: String
    }
    public struct Commit: Sendable, Encodable, Equatable {
        public var sha: String
        public var subject: String
        public init(sha: String, subject: String) {
            self.sha = sha
            self.subject = subject
        }
    }
    public struct File: Sendable, Encodable, Equatable {
        public var path: String
        /// created, modified or deleted
        public var change: String
    }

    public var id: Int
    public var text = ""
    public var command = ""
    /// The GitHub issue (OWNER/REPO#N) it comments on.
    public var issue: String?
    /// A detached task given with --pr: the pull request's title and base (empty: the branch it was cloned from).
    public var pullRequestTitle: String?
    public var pullRequestBase: String?
    /// queued, running, succeeded, failed or cancelled
    public var state = ""
    public var queuedAt: Date?
    public var startedAt: Date?
    public var endedAt: Date?
    public var exitCode: Int?
    /// The step the agent said last ($SO_TASK_STEP).
    public var step: String?
    public var progress: [Step] = []
    /// HEAD when the task began, and the branch it ran on.
    public var base: String?
    public var branch: String?
    public var commits: [Commit] = []
    public var files: [File] = []
    /// The branch pushed to origin, when it was.
    public var pushed: String?
    /// The pull request opened for it (an attached task with --pr).
    public var pullRequest: String?
    public var cost = TaskCost()
    /// Files of the report that were written badly: what is wrong (a warning; the rest of the record stands).
    public var problems: [String] = []

    public init(id: Int) { self.id = id }

    public var ended: Bool { ["succeeded", "failed", "cancelled"].contains(state) }

    static let states: Set<String> = ["queued", "running", "succeeded", "failed", "cancelled"]

    /// The runner's `report` output: "@@ ID NAME BYTES", the file's bytes, a newline; records in the order given.
    public static func parse(_ output: String) -> [TaskRecord] {
        var records: [TaskRecord] = []
        let bytes = Array(output.utf8)
        var i = 0
        while i < bytes.count {
            guard let eol = bytes[i...].firstIndex(of: UInt8(ascii: "\n")) else { break }
            let header = String(decoding: bytes[i..<eol], as: UTF8.self).split(separator: " ")
            guard header.count == 4, header[0] == "@@", let id = Int(header[1]), let size = Int(header[3]),
                size >= 0, size <= bytes.count - eol - 1  // a size near Int.max would overflow eol + 1 + size
            else { break }
            let body = String(decoding: bytes[(eol + 1)..<(eol + 1 + size)], as: UTF8.self)
            i = eol + 1 + size + 1
            if records.last?.id != id { records.append(TaskRecord(id: id)) }
            records[records.count - 1].read(String(header[2]), body)
        }
        return records
    }

    mutating func read(_ name: String, _ body: String) {
        let line = body.trimmingCharacters(in: .whitespacesAndNewlines)
        func time() -> Date? {
            guard let s = Double(line) else {
                problems.append("its '\(name)' time is not a number: \(line.prefix(40))")
                return nil
            }
            return Date(timeIntervalSince1970: s)
        }
        switch name {
        case "text": text = body
        case "command": command = body
        case "issue": issue = line.isEmpty ? nil : line
        case "pr_title": pullRequestTitle = line.isEmpty ? nil : line
        case "pr_base": pullRequestBase = line.isEmpty ? nil : line
        case "queued": queuedAt = time()
        case "started": startedAt = time()
        case "ended": endedAt = time()
        case "state":
            state = line
            if !Self.states.contains(line) { problems.append("its state '\(line.prefix(40))' is not one so knows") }
        case "exit":
            exitCode = Int(line)
            if exitCode == nil { problems.append("its exit code is not a number: \(line.prefix(40))") }
        case "step": step = line.isEmpty ? nil : String(line.split(separator: "\n").last ?? "")
        case "progress":
            progress = body.split(separator: "\n").map { l in
                let parts = l.split(separator: " ", maxSplits: 1)
                if parts.count == 2, let t = Double(parts[0]) {
                    return Step(time: Date(timeIntervalSince1970: t), text: String(parts[1]))
                }
                return Step(time: nil, text: String(l))
            }
        case "base": base = line.isEmpty ? nil : line
        case "branch": branch = line.isEmpty ? nil : line
        case "pushed": pushed = line.isEmpty ? nil : line
        case "pull_request": pullRequest = line.isEmpty ? nil : line
        case "commits":
            commits = body.split(separator: "\n").map { l in
                let parts = l.split(separator: " ", maxSplits: 1)
                return Commit(sha: String(parts.first ?? ""), subject: parts.count > 1 ? String(parts[1]) : "")
            }
        case "files":
            files = body.split(separator: "\n").compactMap { l in
                let parts = l.split(separator: "\t", maxSplits: 1)
                guard parts.count == 2 else { return nil }
                let change = ["A": "created", "D": "deleted"][String(parts[0].prefix(1))] ?? "modified"
                return File(path: String(parts[1]), change: change)
            }
        case "cost":
            cost = TaskCost.parse(body)
            if let p = cost.problem { problems.append("its cost: \(p)") }
        default: break
        }
    }

    /// The first line of the text, for one-line listings.
    public var title: String {
        let first = text.split(separator: "\n").first.map(String.init) ?? ""
        return first.count > 60 ? String(first.prefix(57)) + "…" : first
    }
}
