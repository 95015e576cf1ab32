import Foundation
import SoBasics
import SoCompose

/// A stack found on disk: its stack.yml decoded and the absolute path of every file it names.
public struct ResolvedStack: Sendable {
    public struct Component: Sendable, Equatable {
        public var name: String
        public var composePath: String
        /// Map-form pods: shell commands run on this host before the start applies, and once it is ready.
        public var preStartCommand: String? = nil
        public var postStartCommand: String? = nil
    }

    /// Stack directory basename: names the namespace and labels, as in laconic-so.
    public var name: String
    public var stackDir: String
    public var stackFilePath: String
    /// Where compose/, compose-jobs/, config/ and container-build/ live (the stack dir's grandparent).
    public var root: String
    public var isBuiltIn: Bool
    public var file: StackFile
    public var pods: [Component]
    /// `optional-pods:` of stack.yml, resolved like pods.
    public var optionalPods: [Component] = []
    public var jobs: [Component]

    /// The pods a deployment with this `with:` selection runs.
    public func pods(with: [String], at location: SourceLocation?) throws -> [Component] {
        let names = try file.selectedPods(with: with, at: location)
        return names.compactMap { n in pods.first { $0.name == n } ?? optionalPods.first { $0.name == n } }
    }

    /// A plain compose file used as a stack: its path (the stack.yml is made up, `stackFileText`).
    public var composeFile: String?
    /// Every file of a plain compose stack, merged in order (`-f a -f b`; `compose.override.yaml`).
    public var composeFiles: [String] = []
    /// The stack.yml a deployment directory gets, when it is not a file of the stack.
    public var stackFileText: String?

    /// The value written as `stack:` in a spec: the name of a built-in stack, else the absolute path
    /// (of the stack directory, or of the compose file).
    public var specValue: String {
        isBuiltIn ? name : composeFiles.count > 1 ? composeFiles.joined(separator: ",") : composeFile ?? stackDir
    }

    /// A pod's compose file as deployments see it: several files, `include:` and `extends:` flattened
    /// into one document (its text is what the deployment directory gets); else the file as it is.
    public func compose(_ c: Component, fs: FileSystem, environment: [String: String]?, diagnostics: DiagnosticSink)
        throws -> (file: ComposeFile, data: Data)
    {
        let files = c.composePath == composeFile && !composeFiles.isEmpty ? composeFiles : [c.composePath]
        guard try ComposeFlatten.needed(files, fs: fs) else {
            return (
                try ComposeLoader.load(c.composePath, fs: fs, environment: environment, diagnostics: diagnostics),
                try fs.readData(c.composePath)
            )
        }
        let text = try ComposeFlatten.flatten(files, fs: fs)
        guard let root = try YAMLFile.parse(text, file: c.composePath) else {
            throw SoError("compose files \(files.joined(separator: ", ")) merge to nothing", hint: "check them")
        }
        return (
            try ComposeLoader.decode(root, path: c.composePath, environment: environment, diagnostics: diagnostics),
            Data(text.utf8)
        )
    }
    public var composeDir: String { Path.join(root, "compose") }

    /// Deployments need at least one pod.
    public func requirePods() throws {
        if pods.isEmpty {
            throw SoError(
                "stack has no pods", hint: "add 'pods: [name]' naming compose/docker-compose-<name>.yml",
                at: SourceLocation(file: stackFilePath))
        }
    }
    public var configDir: String { Path.join(root, "config") }
}
