import Foundation
import SoBasics

public struct ExternalService: Sendable, Equatable {
    public var name: String
    public var host: String?
    public var ip: String?
    public var port: Int
    public var service: String?
    public var namespace: String?
}
