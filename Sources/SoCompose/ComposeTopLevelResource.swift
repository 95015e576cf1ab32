import Foundation
import SoBasics

/// Top-level `secrets:` / `configs:` entry: from a file, an environment variable or inline content.
public struct ComposeTopLevelResource: Sendable, Equatable {
    public var name: String
    public var file: String?
    public var environment: String?
    public var content: String?
    public var external: Bool
    public var line: Int?
    public init(
        name: String, file: String? = nil, environment: String? = nil, content: String? = nil, external: Bool = false,
        line: Int? = nil
    ) {
        self.name = name
        self.file = file
        self.environment = environment
        self.content = content
        self.external = external
        self.line = line
    }
}
