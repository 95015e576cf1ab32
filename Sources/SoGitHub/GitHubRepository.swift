import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack
import SoWorkspace

/// OWNER/NAME of a git remote URL: https://host/OWNER/NAME(.git), git@host:OWNER/NAME, ssh:// and git://.
public struct GitHubRepository: Sendable, Equatable {
    public var owner: String
    public var name: String

    public init?(url: String) {
        var path = url.trimmedSpaces
        if let scheme = path.range(of: "://") {
            path = String(path[scheme.upperBound...])
            guard let slash = path.firstIndex(of: "/") else { return nil }
            path = String(path[path.index(after: slash)...])
        } else if let colon = path.firstIndex(of: ":"), path[..<colon].contains("@") || !path.hasPrefix("/") {
            path = String(path[path.index(after: colon)...])
        } else {
            return nil
        }
        let parts = path.trimmingSuffix("/").trimmingSuffix(".git").split(separator: "/").map(String.init)
        guard parts.count >= 2, !parts[parts.count - 2].isEmpty, !parts[parts.count - 1].isEmpty else { return nil }
        owner = parts[parts.count - 2]
        name = parts[parts.count - 1]
    }
}
