import Foundation

/// What an exec's command reads on standard input: nothing (it sees none), bytes, a file's bytes (read as they
/// are sent, not whole), or bytes known only later (`Later`): the command starts meanwhile and reads them when they
/// come (kubectl, which cannot be fed later, starts once they are known).
public enum ExecInput: Sendable, Equatable {
    case none
    case bytes(Data)
    case file(String)
    case later(Later)

    /// Bytes an exec's command reads once they are known, made once (an exec run again reads the same ones).
    public final class Later: Sendable, Equatable {
        let made: Task<Data, Never>

        public init(_ make: @escaping @Sendable () async -> Data) { made = Task { await make() } }

        /// The bytes, once made.
        public var bytes: Data { get async { await made.value } }

        public static func == (a: Later, b: Later) -> Bool { a === b }
    }
}
