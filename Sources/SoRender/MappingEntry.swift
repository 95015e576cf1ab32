import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// What each compose key of each service became: mapped, approximated (and how) or ignored (and why).
public struct MappingEntry: Sendable, Encodable, Equatable {
    public enum Status: String, Sendable, Encodable { case mapped, approximated, ignored }
    public var file: String
    public var service: String
    public var key: String
    public var line: Int?
    public var status: Status
    public var detail: String
}
