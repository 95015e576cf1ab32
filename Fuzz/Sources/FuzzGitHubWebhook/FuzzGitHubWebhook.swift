import Foundation
import FuzzSupport
import SoBasics
@testable import SoGitHubEvent

/// A GitHub webhook delivery's body, read as each event `so` handles (and as `ping` and an unknown one), and signed
/// and checked as `/github/webhook` checks it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGitHubWebhook(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let body = Fuzz.data(start, count)
    let delivery = "72d3162e-cc78-11e3-81ab-4c9367dc956a"
    for event in GitHubEvent.handledEvents.sorted() {
        let parsed = GitHubEvent.parse(event: event, delivery: delivery, body: body)
        Fuzz.check(GitHubEvent.parse(event: event, delivery: delivery, body: body) == parsed, "two reads differ")
        switch parsed {
        case .event(let e):
            Fuzz.check(e.event == event && e.delivery == delivery, "the event or delivery changed: \(e)")
            Fuzz.check(GitHubEvent.isRepositoryName(e.repository), "a repository's name unchecked: \(e.repository)")
            Fuzz.check(GitHubEvent.isLogin(e.sender), "a sender unchecked: \(e.sender.debugDescription)")
            Fuzz.check(e.number > 0, "a number that is not positive: \(e.number)")
            Fuzz.check(GitHubEvent.associations.contains(e.authorAssociation), "association \(e.authorAssociation)")
            Fuzz.check((e.title?.utf8.count ?? 0) <= GitHubEvent.titleBytes, "a title over its bound")
            for text in [e.body, e.commentBody, e.reviewBody] {
                Fuzz.check((text?.utf8.count ?? 0) <= GitHubEvent.bodyBytes, "a body over its bound")
            }
            Fuzz.check((e.label?.utf8.count ?? 0) <= GitHubEvent.labelBytes, "a label over its bound")
            if let ref = e.headRef {
                Fuzz.check(ref.utf8.count <= GitHubEvent.refBytes && !ref.contains(" "), "a head ref unchecked")
            }
            // What the inbox stores reads back to the same event.
            let written = JSONWriter.encode(e, .compact)
            let back = try? JSONDecoder().decode(GitHubEvent.self, from: Data(written.utf8))
            Fuzz.check(back == e, "the stored event reads back otherwise: \(written)")
        case .refused(let r):
            Fuzz.check(!r.detail.isEmpty && r.detail.utf8.count <= 100, "a refusal without a short reason: \(r)")
            Fuzz.check(r.reason != .badDelivery && r.reason != .badEvent, "a good delivery id or event refused: \(r)")
        case .ping, .unknown:
            Fuzz.check(false, "a handled event read as another: \(parsed)")
        }
    }
    Fuzz.check(GitHubEvent.parse(event: "ping", delivery: nil, body: body) == .ping, "a ping is not read")
    Fuzz.check(GitHubEvent.parse(event: "push", delivery: delivery, body: body) == .unknown("push"), "push read")
    // Signed with a secret, the body is accepted; one byte more, or another secret, is not.
    let secret = Array("a-secret-of-the-fuzzer".utf8)
    let header = "sha256=" + HMAC.sha256Hex(key: secret, message: body)
    Fuzz.check(HMAC.validGitHubSignature(header, body: body, secret: secret), "a good signature refused")
    Fuzz.check(!HMAC.validGitHubSignature(header, body: body + [0], secret: secret), "a longer body accepted")
    // (Not the secret with a NUL after it: HMAC pads a short key with zeros, so that one is the same key.)
    let other = Array("a-secret-of-the-fuzzes".utf8)
    Fuzz.check(!HMAC.validGitHubSignature(header, body: body, secret: other), "another secret accepted")
    return 0
}
