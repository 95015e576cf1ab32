import Foundation
import SoBasics

/// `$generate:TYPE:LEN$` tokens in spec `config:` values (reference §6), parsed and validated.
/// `hex` and `base64` take LEN random bytes (hex:32 → 64 characters, as laconic-so); `alnum` takes LEN characters.
public struct GenerateToken: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable { case hex, base64, alnum }
    public var kind: Kind
    public var length: Int
    /// Text before and after the token in the value (kept, unlike laconic-so).
    public var prefix: String
    public var suffix: String

    static let marker = "$generate:"
    static let pattern = #"\$generate:([A-Za-z0-9_]*):([0-9]*)\$"#

    public static func contains(_ value: String) -> Bool { value.contains(marker) }

    /// The token in `value`, nil when there is none; an error when it is malformed. The only parser of tokens:
    /// a spec's entries keep theirs (`ConfigEntry.token`), so nothing parses a value twice.
    public static func parse(_ value: String, at location: SourceLocation? = nil) throws -> GenerateToken? {
        guard let start = value.range(of: marker) else { return nil }
        guard let r = value.range(of: pattern, options: .regularExpression), r.lowerBound == start.lowerBound else {
            throw SoError(
                "malformed secret token in '\(redact(value))'",
                hint: "write $generate:TYPE:LEN$ with TYPE hex, base64 or alnum, e.g. $generate:hex:32$", at: location)
        }
        let body = value[r].dropFirst(marker.count).dropLast()
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        let typeText = String(parts[0])
        let lenText = String(parts[1])
        guard let kind = Kind(rawValue: typeText) else {
            let close = Suggest.closest(to: typeText, in: Kind.allCases.map(\.rawValue))
            throw SoError(
                "unknown secret type '\(typeText)' in $generate token",
                hint: (close.map { "did you mean '\($0)'? " } ?? "") + "use hex, base64 or alnum", at: location)
        }
        guard let len = Int(lenText), (1...1024).contains(len) else {
            throw SoError(
                "secret length '\(lenText)' in $generate token is outside 1…1024", hint: "use a length such as 32",
                at: location)
        }
        let suffix = String(value[r.upperBound...])
        if suffix.contains(marker) {
            throw SoError(
                "more than one $generate token in one value", hint: "use one token per config key", at: location)
        }
        return GenerateToken(kind: kind, length: len, prefix: String(value[..<r.lowerBound]), suffix: suffix)
    }

    /// Makes a value from `entropy`: the generated part with prefix and suffix kept.
    public func generate(using entropy: Entropy) -> String {
        let secret: String
        switch kind {
        case .hex:
            secret = entropy.bytes(length).map { String(format: "%02x", $0) }.joined()
        case .base64:
            secret = Data(entropy.bytes(length)).base64EncodedString()
        case .alnum:
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
            var out = ""
            while out.count < length {
                // Rejection sampling: 62 * 4 = 248, so bytes ≥ 248 are dropped to keep the choice uniform.
                for b in entropy.bytes(length - out.count) where b < 248 { out.append(alphabet[Int(b) % 62]) }
            }
            secret = out
        }
        return prefix + secret + suffix
    }

    /// The value with any token shown as written and nothing else that could be secret.
    static func redact(_ value: String) -> String { value.count > 80 ? String(value.prefix(80)) + "…" : value }
}
