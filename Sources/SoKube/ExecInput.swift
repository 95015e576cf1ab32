import Foundation

/// What an exec's command reads on standard input: nothing (it sees none), bytes, or what is known only later
/// (`Later`: bytes, then a file's, read as they are sent, not whole): the command starts meanwhile and reads it when it
/// comes (kubectl, which cannot be fed later, starts once it is known).
public enum ExecInput: Sendable, Equatable {
    case none
    case bytes(Data)
    case later(Later)

    /// What an exec's command reads once it is known, made once (an exec run again reads the same).
    public final class Later: Sendable, Equatable {
        let made: Task<Payload, Never>

        /// Bytes alone.
        public init(_ make: @escaping @Sendable () async -> Data) { made = Task { Payload(bytes: await make()) } }

        /// Bytes, then a file's (a large one streamed, never held in memory).
        public init(streaming make: @escaping @Sendable () async -> Payload) { made = Task { await make() } }

        /// What the command reads, once made.
        public var payload: Payload { get async { await made.value } }

        public static func == (a: Later, b: Later) -> Bool { a === b }
    }

    /// What a `Later` sends: `bytes`, then the bytes of `file` when there is one.
    public struct Payload: Sendable, Equatable {
        public var bytes: Data
        public var file: String?

        public init(bytes: Data, file: String? = nil) {
            self.bytes = bytes
            self.file = file
        }
    }
}
