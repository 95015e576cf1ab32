import Foundation
import SoBasics

/// What reading credentials touches besides the network: exec plugins run as programs, token files
/// are read, the terminal and the clock are asked. Live in the CLI; fakes in tests.
public struct CredentialEffects: Sendable {
    public var processes: ProcessRunner
    public var fs: FileSystem
    /// What plugins inherit, and where `CI` is read.
    public var environment: [String: String]
    public var stdinIsTerminal: Bool
    public var clock: Clock
    public var execCache: ExecCredentialCache

    public init(
        processes: ProcessRunner, fs: FileSystem, environment: [String: String], stdinIsTerminal: Bool, clock: Clock,
        execCache: ExecCredentialCache = .shared
    ) {
        self.processes = processes
        self.fs = fs
        self.environment = environment
        self.stdinIsTerminal = stdinIsTerminal
        self.clock = clock
        self.execCache = execCache
    }
}
