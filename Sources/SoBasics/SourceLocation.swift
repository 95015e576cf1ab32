import Foundation

/// Where something came from: a file and, when known, a line (1-based) and column.
public struct SourceLocation: Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var column: Int?

    public init(file: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String {
        if let line { return "\(file):\(line)" }
        return file
    }
}
