import Foundation
import SoActions
import SoBasics
import SoStack

/// `[host/]org/repo[@ref]`; two parts mean github.com.
public struct RepoLocator: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var org: String
    public var repo: String
    public var ref: String?

    public static func parse(_ text: String) throws -> RepoLocator {
        var body = text.trimmedSpaces
        var ref: String?
        if let at = body.lastIndex(of: "@") {
            ref = String(body[body.index(after: at)...])
            body = String(body[..<at])
            if ref?.isEmpty == true {
                throw SoError(
                    "repository '\(text)' has an empty @ref", hint: "write host/org/repo@branch, @tag or @commit")
            }
        }
        if body.hasSuffix(".git") { body = String(body.dropLast(4)) }
        let parts = body.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 || parts.count == 3 else {
            throw SoError(
                "repository '\(text)' is not [host/]org/repo[@ref]",
                hint: "for example github.com/cerc-io/stack-orchestrator@v1.1.0")
        }
        for p in parts where p.isEmpty || p == "." || p == ".." || !NameRules.isPlain(p, extra: "._-") {
            throw SoError(
                "repository '\(text)' has an invalid part '\(p)'",
                hint: "use letters, digits, '.', '_' and '-' in host, org and repo")
        }
        if let ref, !NameRules.isPlain(ref, extra: "._/-") || ref.hasPrefix("-") || ref.contains("..") {
            throw SoError(
                "repository '\(text)' has an invalid ref '\(ref)'", hint: "a ref is a branch, tag or commit name")
        }
        return parts.count == 2
            ? RepoLocator(host: "github.com", org: parts[0], repo: parts[1], ref: ref)
            : RepoLocator(host: parts[0], org: parts[1], repo: parts[2], ref: ref)
    }

    /// The repo without its ref, as `--include`/`--exclude` match it.
    public var path: String { "\(host)/\(org)/\(repo)" }
    public var description: String { path + (ref.map { "@\($0)" } ?? "") }

    public func cloneURL(ssh: Bool) -> String {
        ssh ? "git@\(host):\(org)/\(repo).git" : "https://\(host)/\(org)/\(repo)"
    }
}
