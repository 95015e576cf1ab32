import Foundation

/// What an exec's command reads on standard input: nothing (it sees none), bytes, or a file's bytes (read as they
/// are sent, not whole).
public enum ExecInput: Sendable, Equatable {
    case none
    case bytes(Data)
    case file(String)
}
