import Foundation

/// Who a workspace's commits are by (`GIT_USER_NAME`, `GIT_USER_EMAIL`): handed to a claimed pool member's clone,
/// which writes it into the checkout's git config, and kept in the workspace's config.
struct GitIdentity: Sendable, Equatable {
    var name: String
    var email: String

    static let none = GitIdentity(name: "", email: "")

    /// From `--config` pairs as init reads them (the last of a key wins); empty where a key is not given.
    init(config: [(String, String)]) {
        var name = ""
        var email = ""
        for (k, v) in config {
            if k == "GIT_USER_NAME" { name = v }
            if k == "GIT_USER_EMAIL" { email = v }
        }
        self.init(name: name, email: email)
    }

    init(name: String, email: String) {
        self.name = name
        self.email = email
    }

    /// A value as one line of the clone's ready file: a line break or other control character (which would end the
    /// line and let the rest read as another key) becomes a space.
    func line(_ key: KeyPath<GitIdentity, String>) -> String {
        String(
            String.UnicodeScalarView(
                self[keyPath: key].unicodeScalars.map { CharacterSet.controlCharacters.contains($0) ? " " : $0 })
        ).trimmingCharacters(in: .whitespaces)
    }

    /// The config keys it sets (none for an empty value).
    var config: [(String, String)] {
        [("GIT_USER_NAME", line(\.name)), ("GIT_USER_EMAIL", line(\.email))].filter { !$0.1.isEmpty }
    }
}
