import Foundation
import SoBasics

/// `stack.yml` as laconic-so reads it (reference §3.1), plus `spec-defaults:`, the declarative
/// stand-in for a plugin's `init()` (a fragment merged into the spec by `deploy init`).
public struct StackFile: Sendable {
    /// The pods a deployment runs: every pod, plus the optional ones its spec selects (`with:`).
    public func selectedPods(with: [String], at location: SourceLocation?) throws -> [String] {
        for w in with where !optionalPods.contains(w) {
            let close = Suggest.closest(to: w, in: optionalPods).map { "did you mean '\($0)'? " } ?? ""
            throw SoError(
                "'\(w)' is not an optional pod of this stack",
                hint: optionalPods.isEmpty
                    ? "this stack has no optional pods"
                    : close + "choose from: " + optionalPods.joined(separator: ", "),
                at: location)
        }
        return pods.map(\.name) + optionalPods.filter { with.contains($0) }
    }

    public struct Pod: Sendable, Equatable {
        public var name: String
        /// Map form only: the repository holding the pod's compose file and its path inside it.
        public var repository: String?
        public var path: String?
        public var preStartCommand: String?
        public var postStartCommand: String?
        public var line: Int?
    }

    public var path: String
    public var version: String?
    public var name: String?
    public var description: String?
    public var repos: [String]
    public var containers: [String]
    public var pods: [Pod]
    /// Pods a deployment includes only when its spec selects them (`with:`, from `deploy init --with`).
    public var optionalPods: [String] = []
    public var jobs: [String]
    public var npms: [String]
    /// Compose-era value passing between containers; parsed, reported as unsupported on Kubernetes.
    public var hasConfigOrchestration: Bool
    /// Spec fragment merged into the spec by `deploy init` (command-line config wins over it).
    public var specDefaults: YNode?
    /// Every compose service runs in a Deployment of its own (plain compose files: services reach each
    /// other by name, and networks can separate them), instead of laconic's one pod per compose file.
    public var podPerService = false
    /// `agents:` — the agent CLIs a workspace of this stack can run (`so up --agent NAME`), extended by a spec's.
    public var agents: [AgentProfile] = []

    /// The stack.yml of a plain compose file used as a stack: one pod, one Deployment per service.
    public static func forComposeFile(name: String) -> String {
        "# made by so for a plain compose file: one pod, each service in a Deployment of its own\n"
            + "version: \"1.0\"\nname: \(name)\npods:\n  - \(name)\npod-per-service: true\n"
    }

    public static func load(_ path: String, fs: FileSystem, diagnostics: DiagnosticSink) throws -> StackFile {
        guard let root = try YAMLFile.load(path, fs: fs, what: "stack file") else {
            throw SoError(
                "stack file is empty", hint: "a stack.yml names at least its pods: 'pods: [name]'",
                at: SourceLocation(file: path))
        }
        let m = try root.mapping("stack.yml")
        var s = StackFile(
            path: path, repos: [], containers: [], pods: [], jobs: [], npms: [], hasConfigOrchestration: false)
        s.version = try m.string("version")
        s.name = try m.string("name")
        s.description = try m.string("description")
        s.repos = try m.value("repos")?.stringList("'repos'") ?? []
        s.containers = try m.value("containers")?.stringList("'containers'") ?? []
        s.jobs = try m.value("jobs")?.stringList("'jobs'") ?? []
        s.npms = try m.value("npms")?.stringList("'npms'") ?? []
        if let pods = m.value("pods") {
            for (i, p) in try pods.optionalSequence("'pods'").enumerated() {
                if p.isScalar {
                    s.pods.append(Pod(name: try p.string("pods[\(i)]"), line: p.line))
                } else {
                    let pm = try p.mapping("pods[\(i)]")
                    let name = try pm.required("name").string("pods[\(i)].name")
                    let pod = Pod(
                        name: name, repository: try pm.string("repository"), path: try pm.string("path"),
                        preStartCommand: try pm.string("pre_start_command"),
                        postStartCommand: try pm.string("post_start_command"),
                        line: p.line)
                    pm.finish(into: diagnostics)
                    s.pods.append(pod)
                }
            }
        }
        s.optionalPods = try m.value("optional-pods")?.stringList("'optional-pods'") ?? []
        for p in s.optionalPods where s.pods.contains(where: { $0.name == p }) {
            throw SoError(
                "pod '\(p)' is listed in both pods and optional-pods", hint: "keep it in one of them",
                at: SourceLocation(file: path, line: m.value("optional-pods")?.line))
        }
        if let c = m.nonNull("config") {
            _ = try c.entries("'config'")
            s.hasConfigOrchestration = true
        }
        s.podPerService = try m.bool("pod-per-service") ?? false
        if let a = m.nonNull("agents") { s.agents = try AgentTable.decode(a, diagnostics: diagnostics) }
        if let d = m.nonNull("spec-defaults") {
            _ = try d.entries("'spec-defaults'")
            s.specDefaults = d
        }
        m.finish(into: diagnostics)
        for (i, name) in s.pods.map(\.name).enumerated() {
            try NameRules.checkComponent(name, what: "pod name", at: SourceLocation(file: path, line: s.pods[i].line))
        }
        for p in s.optionalPods {
            try NameRules.checkComponent(
                p, what: "pod name", at: SourceLocation(file: path, line: m.value("optional-pods")?.line))
        }
        for j in s.jobs {
            try NameRules.checkComponent(
                j, what: "job name", at: SourceLocation(file: path, line: m.value("jobs")?.line))
        }
        return s
    }
}
