import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// One secret value on its way into a Secret's `data`. It prints as `<secret>` (never its value), so a
/// value interpolated into a message by mistake shows nothing.
public struct SecretValue: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The value as a Secret's `data` holds it: base64.
    public let base64: String
    public init(bytes: Data) { base64 = bytes.base64EncodedString() }
    public init(text: String) { self.init(bytes: Data(text.utf8)) }
    /// A value read back from a Secret's `data`, kept exactly as stored.
    public init(base64: String) { self.base64 = base64 }
    public var description: String { "<secret>" }
    public var debugDescription: String { "<secret>" }
    var text: String? { Data(base64Encoded: base64).map { String(decoding: $0, as: UTF8.self) } }
}
