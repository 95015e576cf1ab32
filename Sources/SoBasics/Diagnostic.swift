import Foundation

/// A warning that does not stop the work (unknown keys, defaults that were filled in …).
public struct Diagnostic: Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var hint: String?
    public var location: SourceLocation?

    public init(_ message: String, hint: String? = nil, at location: SourceLocation? = nil) {
        self.message = message
        self.hint = hint
        self.location = location
    }

    public var description: String {
        var out = "warning: "
        if let location { out += "\(location): " }
        out += message
        if let hint { out += " (\(hint))" }
        return out
    }
}
