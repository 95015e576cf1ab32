import Foundation
import SoBasics

/// What a directory written from the cluster's record remembers of it (`RecordFiles.Step.made`): where the revision
/// was found and the hash of each file as written, so a later start checks again what is still the record's (a
/// file edited by hand since is the reader's own). Cleared by the first start, which makes its files this machine's.
public struct RecordMark: Sendable, Equatable, Codable {
    public var namespace: String
    public var podSecurity: String?
    /// Who the revision says wrote it (a label, never a credential), and which revision it was.
    public var writer: String
    public var revision: Int
    /// Path → SHA-256 of the file as the record wrote it.
    public var files: [String: String]

    public init(_ record: DeploymentRecord, origin: RecordOrigin) {
        namespace = origin.namespace
        podSecurity = origin.podSecurity
        writer = record.writer.description
        revision = record.revision
        files = Dictionary(record.files.map { ($0.path, SHA256.hex($0.data)) }) { a, _ in a }
    }
}
