import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

public struct RenderRequest: Sendable {
    public enum Format: String, Sendable { case yaml, json }
    public var directory: String
    /// A directory to write one file per object into, or "-" for stdout.
    public var output: String
    public var format: Format
    public var placeholderSecrets: Bool
    /// Write into a directory that holds files render did not write (they are left alone).
    public var force: Bool

    public init(
        directory: String, output: String = "-", format: Format = .yaml, placeholderSecrets: Bool = false,
        force: Bool = false
    ) {
        self.directory = directory
        self.output = output
        self.format = format
        self.placeholderSecrets = placeholderSecrets
        self.force = force
    }
}
