import Foundation
import SoBasics
import SoCompose

/// One `config:` entry of a spec, with its value as text (bools as `true`/`false`).
/// Read from a spec only (its memberwise initializer is internal).
public struct ConfigEntry: Sendable, Equatable {
    public var key: String
    public var value: String
    public var line: Int?
    /// The value's `$generate` token, parsed once when the spec is read (nil when it holds none).
    public var token: GenerateToken?
    /// Whether the value holds a `$generate` token: its key is generated (`Spec.generatedKeys`), never in config.env.
    public var isGenerated: Bool { token != nil }
}
