import Foundation
import SoBasics
import SoWorkspace

/// `--issue OWNER/REPO#N`: the GitHub issue a task came from, which `so` comments on.
public struct GitHubIssue: Sendable, Equatable, CustomStringConvertible {
    public var owner: String
    public var name: String
    public var number: Int

    public init(owner: String, name: String, number: Int) {
        self.owner = owner
        self.name = name
        self.number = number
    }

    /// OWNER/REPO#N; nil when it is not that.
    public init?(_ text: String) {
        let hash = text.split(separator: "#", omittingEmptySubsequences: false)
        guard hash.count == 2, let n = Int(hash[1]), n > 0 else { return nil }
        let repo = hash[0].split(separator: "/", omittingEmptySubsequences: false)
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_."))
        guard repo.count == 2,
            repo.allSatisfy({ !$0.isEmpty && $0.unicodeScalars.allSatisfy(allowed.contains) && $0 != "." && $0 != ".." }
            )
        else { return nil }
        owner = String(repo[0])
        name = String(repo[1])
        number = n
    }

    public var description: String { "\(owner)/\(name)#\(number)" }
}
