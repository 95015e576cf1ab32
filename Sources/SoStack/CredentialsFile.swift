import Foundation
import SoBasics
import SoCompose

/// A spec `credentials-files` entry as the deployment keeps it: where the file is and which keys it
/// holds. Its values are read at start, straight into the deployment's Secret.
public struct CredentialsFile: Sendable, Equatable {
    public var path: String
    public var keys: [String]
    public init(path: String, keys: [String]) {
        self.path = path
        self.keys = keys
    }
}
