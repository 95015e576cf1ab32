import Foundation
import SoBasics
import SoCompose

/// Secret values never enter the model: a compose reference to a generated key interpolates to this
/// marker, which rendering turns into a `secretKeyRef` or a Kubernetes `$(KEY)` reference.
public enum SecretMarker {
    static let open = "\u{1}so-secret:"
    static let close = "\u{1}"

    public static func marker(_ key: String) -> String { open + key + close }

    /// The pieces of a value: literal text and secret keys, in order.
    public enum Piece: Equatable {
        case text(String)
        case secret(String)
    }

    public static func split(_ value: String) -> [Piece] {
        var pieces: [Piece] = []
        var rest = Substring(value)
        while let r = rest.range(of: open) {
            if r.lowerBound > rest.startIndex { pieces.append(.text(String(rest[..<r.lowerBound]))) }
            let after = rest[r.upperBound...]
            guard let end = after.range(of: close) else {
                pieces.append(.text(String(rest[r.lowerBound...])))
                return pieces
            }
            pieces.append(.secret(String(after[..<end.lowerBound])))
            rest = after[end.upperBound...]
        }
        if !rest.isEmpty { pieces.append(.text(String(rest))) }
        return pieces
    }

    public static func contains(_ value: String) -> Bool { value.contains(open) }
}
