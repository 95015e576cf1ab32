import Foundation
import SoBasics

/// `username`/`password` of a kubeconfig user (HTTP basic authentication).
public struct BasicAuth: Sendable, Hashable, CustomStringConvertible {
    public var description: String { "BasicAuth(\(username), password redacted)" }
    public var username: String
    public var password: String
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
}
