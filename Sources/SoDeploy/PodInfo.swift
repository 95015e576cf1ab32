import Foundation
import SoActions
import SoBasics
import SoCompose
import SoKube
import SoRender
import SoStack

public struct PodInfo: Sendable, Encodable {
    public var name: String
    public var component: String
    public var phase: String
    public var ready: String
    public var restarts: Int
    public var ip: String
    public var node: String
    /// Seconds since the pod was created (nil when the server did not say).
    public var ageSeconds: Int?
    public var containers: [String]
    public var ports: [String]
}
