import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// The objects `start` applies, in apply order, plus what rendering noticed.
public struct Manifest: Sendable {
    public var objects: [KubeObject]
    public var warnings: [Diagnostic]
    /// Every port decision the objects were rendered from (the mapping report and port-forward read it).
    public var ports: PortPlan

    public func yaml() -> String { objects.map { $0.yaml() }.joined(separator: "---\n") }
    public func json() -> String {
        YValue.map([("apiVersion", .string("v1")), ("kind", .string("List")), ("items", .list(objects.map(\.value)))])
            .json() + "\n"
    }
}
