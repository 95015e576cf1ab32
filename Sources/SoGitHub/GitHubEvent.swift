import Foundation

/// A GitHub webhook delivery, read from its event name (`X-GitHub-Event`), its id (`X-GitHub-Delivery`) and its raw
/// JSON body into the few facts `so` acts on: outside input, read by this file alone (Foundation only, so the fuzz
/// package builds it without the rest of the module). Every string is hostile: names are checked against GitHub's
/// character sets, texts are cut to a bound, and anything else in the payload is left behind.
public struct GitHubEvent: Codable, Sendable, Equatable {
    /// `X-GitHub-Delivery`: GitHub's GUID for this delivery (the same on a redelivery).
    public var delivery: String
    /// `X-GitHub-Event`: one of `handledEvents`.
    public var event: String
    public var action: String
    /// OWNER/NAME, as GitHub spells it.
    public var repository: String
    /// The issue's or pull request's number.
    public var number: Int
    /// Whether `number` is a pull request's (an `issue_comment` on a pull request says so too).
    public var isPullRequest: Bool
    public var title: String?
    public var body: String?
    public var commentID: Int?
    public var commentBody: String?
    /// A `pull_request_review_comment`'s file (`comment.path`: no control character, at most `pathBytes`), its
    /// line (`comment.line`, else `original_line` for a comment on an outdated diff; nil for a comment on the whole
    /// file), its review (`pull_request_review_id`) and the comment it answers in its thread (`in_reply_to_id`).
    public var commentPath: String?
    public var commentLine: Int?
    public var commentReviewID: Int?
    public var inReplyTo: Int?
    /// The association with the repository of whoever acted (the comment's or review's author; the issue's or pull
    /// request's author for `issues` and `pull_request`): one of `associations`, `NONE` for anything else.
    public var authorAssociation: String
    public var sender: String
    /// The label an `issues`/`pull_request` `labeled` or `unlabeled` names.
    public var label: String?
    public var reviewID: Int?
    public var reviewState: String?
    public var reviewBody: String?
    public var headRef: String?
    /// Whether the pull request's head is in a fork (nil: GitHub did not say, e.g. a deleted fork).
    public var headRepoFork: Bool?
    public var merged: Bool?
    public var installationID: Int?
    /// Whether the repository is private (`repository.private`; nil: GitHub did not say).
    public var repositoryPrivate: Bool?
    /// Whether a text was cut to its bound.
    public var truncated: Bool
    /// The event's own time as its body says (Unix seconds): the latest of `issue.updated_at`,
    /// `pull_request.updated_at`, `comment.updated_at` and `review.submitted_at` present. GitHub signs no time of its
    /// own, so this is how old a replayed body is; nil when none reads as a time (`YYYY-MM-DDTHH:MM:SSZ`).
    public var eventTime: Int?

    public static let handledEvents: Set<String> = [
        "issues", "issue_comment", "pull_request", "pull_request_review", "pull_request_review_comment",
    ]
    public static let associations: Set<String> = [
        "OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "FIRST_TIMER", "MANNEQUIN", "NONE",
    ]
    /// Bounds, in UTF-8 bytes, of what is kept of each text (an inbox entry stays far below a Secret's 1 MiB).
    public static let titleBytes = 1024
    public static let bodyBytes = 64 * 1024
    public static let labelBytes = 256
    public static let refBytes = 255
    public static let pathBytes = 4096
    public static let deliveryLength = 64

    /// What a delivery is.
    public enum Parsed: Sendable, Equatable {
        case event(GitHubEvent)
        /// GitHub's `ping` (sent when a hook is made): answered, never stored.
        case ping
        /// An event `so` does not handle (its name if it looks like one, else "?").
        case unknown(String)
        case refused(Refusal)
    }

    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Reason: String, Sendable {
            case malformed
            case missingField = "missing field"
            case invalidField = "invalid field"
            case badDelivery = "bad delivery id"
            case badEvent = "bad event name"
        }
        public var reason: Reason
        /// Which field, or what is wrong: never a value from the payload.
        public var detail: String
        public init(_ reason: Reason, _ detail: String) {
            self.reason = reason
            self.detail = detail
        }
        public var description: String { "\(reason.rawValue): \(detail)" }
    }

    /// Reads a delivery: the event's name first (an unknown one is not read further), then its id, then the JSON.
    public static func parse(event: String?, delivery: String?, body: Data) -> Parsed {
        guard let event, !event.isEmpty else { return .refused(Refusal(.badEvent, "no X-GitHub-Event")) }
        guard isEventName(event) else { return .unknown("?") }
        if event == "ping" { return .ping }
        guard handledEvents.contains(event) else { return .unknown(event) }
        guard let delivery, isDeliveryID(delivery) else {
            return .refused(Refusal(.badDelivery, "X-GitHub-Delivery must be 1 to 64 of A-Z a-z 0-9 -"))
        }
        let payload: Payload
        do {
            payload = try JSONDecoder().decode(Payload.self, from: body)
        } catch let DecodingError.keyNotFound(key, context) {
            return .refused(Refusal(.missingField, path(context.codingPath + [key])))
        } catch let DecodingError.typeMismatch(_, context) where !context.codingPath.isEmpty {
            return .refused(Refusal(.invalidField, path(context.codingPath)))
        } catch let DecodingError.valueNotFound(_, context) where !context.codingPath.isEmpty {
            return .refused(Refusal(.invalidField, path(context.codingPath)))
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            return .refused(Refusal(.invalidField, path(context.codingPath)))
        } catch {
            return .refused(Refusal(.malformed, "the body is not a JSON object"))
        }
        do {
            return .event(try normalize(payload, event: event, delivery: delivery))
        } catch let refusal as Refusal {
            return .refused(refusal)
        } catch {
            return .refused(Refusal(.malformed, "the body could not be read"))
        }
    }

    static func path(_ keys: [any CodingKey]) -> String {
        let p = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        // Key names come from the payload only through the declared keys, so this is one of ours; bound it anyway.
        return p.isEmpty ? "(top)" : String(p.prefix(100))
    }

    static func normalize(_ p: Payload, event: String, delivery: String) throws -> GitHubEvent {
        func need<T>(_ value: T?, _ field: String) throws -> T {
            guard let value else { throw Refusal(.missingField, field) }
            return value
        }
        let action = try need(p.action, "action")
        guard isWord(action, max: 64) else { throw Refusal(.invalidField, "action") }
        let repository = try need(p.repository, "repository").fullName
        guard isRepositoryName(repository) else { throw Refusal(.invalidField, "repository.full_name") }
        let sender = try need(p.sender, "sender").login
        guard isLogin(sender) else { throw Refusal(.invalidField, "sender.login") }
        var cut = false
        func bound(_ s: String?, _ bytes: Int) -> String? {
            guard let s else { return nil }
            let (kept, was) = truncate(s, toBytes: bytes)
            cut = cut || was
            return kept
        }
        func positive(_ n: Int, _ field: String) throws -> Int {
            guard n > 0, n <= Int(Int32.max) else { throw Refusal(.invalidField, field) }
            return n
        }
        func id(_ n: Int?, _ field: String) throws -> Int? {
            guard let n else { return nil }
            guard n >= 0 else { throw Refusal(.invalidField, field) }
            return n
        }
        func association(_ a: String?) -> String { a.flatMap { associations.contains($0) ? $0 : nil } ?? "NONE" }

        var e = GitHubEvent(
            delivery: delivery, event: event, action: action, repository: repository, number: 0, isPullRequest: false,
            authorAssociation: "NONE", sender: sender, truncated: false)
        e.installationID = try id(p.installation?.id, "installation.id")
        e.repositoryPrivate = p.repository?.isPrivate
        e.label = bound(p.label?.name, labelBytes)
        func takeComment() throws {
            let comment = try need(p.comment, "comment")
            e.commentID = try id(comment.id, "comment.id")
            e.commentBody = bound(comment.body, bodyBytes)
            e.authorAssociation = association(comment.authorAssociation)
            if event == "pull_request_review_comment" { try takeReviewComment(comment, into: &e) }
        }
        switch event {
        case "issues", "issue_comment":
            let issue = try need(p.issue, "issue")
            e.number = try positive(issue.number, "issue.number")
            e.isPullRequest = issue.pullRequest != nil
            e.title = bound(issue.title, titleBytes)
            e.body = bound(issue.body, bodyBytes)
            e.authorAssociation = association(issue.authorAssociation)
            if event == "issue_comment" { try takeComment() }
        default:
            let pr = try need(p.pullRequest, "pull_request")
            e.number = try positive(pr.number, "pull_request.number")
            e.isPullRequest = true
            e.title = bound(pr.title, titleBytes)
            e.body = bound(pr.body, bodyBytes)
            e.merged = pr.merged
            e.authorAssociation = association(pr.authorAssociation)
            if let head = pr.head {
                e.headRef = try checkedRef(head.ref)
                e.headRepoFork = head.repo?.fork
            }
            if event == "pull_request_review" {
                let review = try need(p.review, "review")
                e.reviewID = try id(review.id, "review.id")
                if let state = review.state {
                    guard isWord(state.lowercased(), max: 32) else { throw Refusal(.invalidField, "review.state") }
                    e.reviewState = state.lowercased()
                }
                e.reviewBody = bound(review.body, bodyBytes)
                e.authorAssociation = association(review.authorAssociation)
            }
            if event == "pull_request_review_comment" { try takeComment() }
        }
        e.truncated = cut
        e.eventTime = [p.issue?.updatedAt, p.pullRequest?.updatedAt, p.comment?.updatedAt, p.review?.submittedAt]
            .compactMap { $0.flatMap(unixTime) }.max()
        return e
    }

    /// What only a review comment has: its file, line, review and the comment it answers.
    static func takeReviewComment(_ c: Payload.Comment, into e: inout GitHubEvent) throws {
        if let path = c.path {
            guard !path.isEmpty, path.utf8.count <= pathBytes,
                path.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7f && !(0x80...0x9f ~= $0.value) })
            else { throw Refusal(.invalidField, "comment.path") }
            e.commentPath = path
        }
        if let line = c.line ?? c.originalLine {
            guard line > 0, line <= Int(Int32.max) else { throw Refusal(.invalidField, "comment.line") }
            e.commentLine = line
        }
        for (n, field) in [(c.reviewID, "comment.pull_request_review_id"), (c.inReplyTo, "comment.in_reply_to_id")] {
            if let n, n <= 0 { throw Refusal(.invalidField, field) }
        }
        e.commentReviewID = c.reviewID
        e.inReplyTo = c.inReplyTo
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` (GitHub's times in a webhook's body) as Unix seconds; nil for anything else.
    static func unixTime(_ s: String) -> Int? {
        let b = Array(s.utf8)
        guard b.count == 20, b[4] == 0x2d, b[7] == 0x2d, b[10] == 0x54, b[13] == 0x3a, b[16] == 0x3a, b[19] == 0x5a
        else { return nil }
        func n(_ r: Range<Int>) -> Int? {
            var v = 0
            for c in b[r] {
                guard c >= 0x30, c <= 0x39 else { return nil }
                v = v * 10 + Int(c - 0x30)
            }
            return v
        }
        guard let y = n(0..<4), let mo = n(5..<7), let d = n(8..<10), let h = n(11..<13), let mi = n(14..<16),
            let sec = n(17..<19), (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, sec < 61
        else { return nil }
        // Days from 1970-01-01 to y-mo-d (the civil calendar, proleptic Gregorian).
        let yy = mo <= 2 ? y - 1 : y
        let era = yy / 400
        let yoe = yy - era * 400
        let doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return days * 86_400 + h * 3600 + mi * 60 + sec
    }

    /// A pull request's head ref: 1 to `refBytes` bytes, no space, control or DEL.
    static func checkedRef(_ ref: String) throws -> String {
        guard ref.utf8.count <= refBytes, !ref.isEmpty,
            ref.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7f })
        else { throw Refusal(.invalidField, "pull_request.head.ref") }
        return ref
    }

    /// `s` cut at a character's edge to at most `bytes` UTF-8 bytes, and whether it was cut.
    static func truncate(_ s: String, toBytes bytes: Int) -> (String, Bool) {
        guard s.utf8.count > bytes else { return (s, false) }
        var kept = String.UnicodeScalarView()
        var n = 0
        for scalar in s.unicodeScalars {
            n += String(scalar).utf8.count
            if n > bytes { break }
            kept.append(scalar)
        }
        return (String(kept), true)
    }

    static func ascii(_ s: String, max: Int, _ allowed: (UInt8) -> Bool) -> Bool {
        !s.isEmpty && s.utf8.count <= max && s.utf8.allSatisfy(allowed)
    }
    static func isAlnum(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
    }

    /// An event's or action's name: `a-z` and `_`.
    static func isWord(_ s: String, max: Int) -> Bool {
        ascii(s, max: max) { ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x5f }
    }
    static func isEventName(_ s: String) -> Bool { isWord(s, max: 64) }

    /// A delivery's id: GitHub sends a GUID; 1 to 64 of `A-Z a-z 0-9 -`.
    public static func isDeliveryID(_ s: String) -> Bool {
        ascii(s, max: deliveryLength) { isAlnum($0) || $0 == 0x2d }
    }

    /// OWNER/NAME: an owner of 1 to 39 of `A-Z a-z 0-9 - _`, a name of 1 to 100 of `A-Z a-z 0-9 . - _`, not `.` or
    /// `..`.
    public static func isRepositoryName(_ s: String) -> Bool {
        let parts = s.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        let owner = String(parts[0])
        let name = String(parts[1])
        return ascii(owner, max: 39) { isAlnum($0) || $0 == 0x2d || $0 == 0x5f }
            && ascii(name, max: 100) { isAlnum($0) || $0 == 0x2d || $0 == 0x5f || $0 == 0x2e }
            && name != "." && name != ".."
    }

    /// A login: 1 to 39 of `A-Z a-z 0-9 - _`, and `[bot]` after it for an app's.
    public static func isLogin(_ s: String) -> Bool {
        let base = s.hasSuffix("[bot]") ? String(s.dropLast(5)) : s
        return ascii(base, max: 39) { isAlnum($0) || $0 == 0x2d || $0 == 0x5f }
    }

    /// What is read of a payload (every other key is ignored; a declared key of the wrong type refuses it).
    struct Payload: Decodable {
        struct Repository: Decodable {
            var fullName: String
            var isPrivate: Bool?
            enum CodingKeys: String, CodingKey {
                case fullName = "full_name"
                case isPrivate = "private"
            }
        }
        struct User: Decodable { var login: String }
        struct Installation: Decodable { var id: Int }
        struct Label: Decodable { var name: String }
        /// An object's presence, whatever it holds.
        struct Present: Decodable {}
        struct Issue: Decodable {
            var number: Int
            var title: String?
            var body: String?
            var authorAssociation: String?
            var pullRequest: Present?
            var updatedAt: String?
            enum CodingKeys: String, CodingKey {
                case number, title, body
                case authorAssociation = "author_association"
                case pullRequest = "pull_request"
                case updatedAt = "updated_at"
            }
        }
        struct HeadRepo: Decodable { var fork: Bool? }
        struct Head: Decodable {
            var ref: String
            var repo: HeadRepo?
        }
        struct PullRequest: Decodable {
            var number: Int
            var title: String?
            var body: String?
            var authorAssociation: String?
            var merged: Bool?
            var head: Head?
            var updatedAt: String?
            enum CodingKeys: String, CodingKey {
                case number, title, body, merged, head
                case authorAssociation = "author_association"
                case updatedAt = "updated_at"
            }
        }
        struct Comment: Decodable {
            var id: Int
            var body: String?
            var authorAssociation: String?
            /// A review comment's (`pull_request_review_comment`).
            var path: String?
            var line: Int?
            var originalLine: Int?
            var reviewID: Int?
            var inReplyTo: Int?
            var updatedAt: String?
            enum CodingKeys: String, CodingKey {
                case id, body, path, line
                case updatedAt = "updated_at"
                case authorAssociation = "author_association"
                case originalLine = "original_line"
                case reviewID = "pull_request_review_id"
                case inReplyTo = "in_reply_to_id"
            }
        }
        struct Review: Decodable {
            var id: Int
            var state: String?
            var body: String?
            var authorAssociation: String?
            var submittedAt: String?
            enum CodingKeys: String, CodingKey {
                case id, state, body
                case authorAssociation = "author_association"
                case submittedAt = "submitted_at"
            }
        }
        var action: String?
        var repository: Repository?
        var sender: User?
        var installation: Installation?
        var label: Label?
        var issue: Issue?
        var pullRequest: PullRequest?
        var comment: Comment?
        var review: Review?
        enum CodingKeys: String, CodingKey {
            case action, repository, sender, installation, label, issue, comment, review
            case pullRequest = "pull_request"
        }
    }
}
