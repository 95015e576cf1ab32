import Foundation
import SoBasics

/// The `agents:` table: a stack's (stack.yml) extended by a spec's (spec.yml), where an entry of the same
/// name replaces the stack's whole.
public enum AgentTable {
    /// `agents: {NAME: {task: CMD, secret-env: [VAR…], egress: [HOST…], image: REF}}`.
    public static func decode(_ node: YNode, diagnostics: DiagnosticSink) throws -> [AgentProfile] {
        var out: [AgentProfile] = []
        for e in try node.entries("'agents'") {
            guard NameRules.isComponent(e.key), !e.key.contains(".") else {
                throw e.keyNode.error(
                    "agent name '\(e.key)' is not usable",
                    hint: "use letters, digits, '-' and '_', e.g. claude or my-agent")
            }
            let m = try e.value.mapping("agents.\(e.key)")
            let task = try m.required(
                "task",
                hint: "give the headless command, reading the task from $TASK, e.g. task: my-agent --print \"$TASK\""
            ).string("agents.\(e.key).task")
            guard !task.trimmedSpaces.isEmpty else {
                throw (m.value("task") ?? e.value).error(
                    "agents.\(e.key).task is empty",
                    hint: "give the command that runs the agent on $TASK without a terminal")
            }
            let secretEnv = try m.value("secret-env")?.stringList("agents.\(e.key).secret-env") ?? []
            for name in secretEnv where !NameRules.isVariable(name) {
                throw (m.value("secret-env") ?? e.value).error(
                    "invalid variable name '\(name)' in agents.\(e.key).secret-env",
                    hint: "use letters, digits and '_', not starting with a digit")
            }
            let egress = try m.value("egress")?.stringList("agents.\(e.key).egress") ?? []
            for host in egress where !EgressPolicy.valid(host) {
                throw (m.value("egress") ?? e.value).error(
                    "egress entry '\(host)' of agent \(e.key) is neither a host name, a URL nor a CIDR",
                    hint: "write the agent's API host, e.g. api.example.com")
            }
            let image = try m.value("image")?.string("agents.\(e.key).image")
            if let image, image.trimmedSpaces.isEmpty || image.contains(where: \.isWhitespace) {
                throw (m.value("image") ?? e.value).error(
                    "agents.\(e.key).image '\(image)' is not an image reference",
                    hint: "name the image with the agent's CLI, e.g. image: my-agent:local")
            }
            m.finish(into: diagnostics)
            out.append(
                AgentProfile(
                    name: e.key, task: task, secretEnv: secretEnv, egress: egress, image: image,
                    location: e.keyNode.location))
        }
        return out
    }

    /// The stack's table with the spec's entries added, a spec entry replacing the stack's of the same name.
    public static func merged(stack: [AgentProfile], spec: [AgentProfile]) -> [AgentProfile] {
        var out = stack
        for a in spec {
            if let i = out.firstIndex(where: { $0.name == a.name }) { out[i] = a } else { out.append(a) }
        }
        return out
    }

    /// The spec with its workspace's agent (`workspace.agent`) folded in: the task (unless `workspace.task`
    /// names one), the agent's API key variables after `secret-env:`, its API hosts after `egress:` (only
    /// where the spec has an egress list; without one nothing is filtered). A spec without `workspace.agent`
    /// is returned as it is.
    public static func resolve(_ spec: Spec, stack: [AgentProfile]) throws -> Spec {
        guard var workspace = spec.workspace, let name = workspace.agent else { return spec }
        let table = merged(stack: stack, spec: spec.agents)
        guard let agent = table.first(where: { $0.name == name }) else {
            throw SoError(
                "unknown agent '\(name)'",
                hint:
                    "known: \(table.map(\.name).joined(separator: ", ")); add it under agents: in \(spec.path) (task, secret-env, egress)",
                at: SourceLocation(file: spec.path, line: workspace.agentLine ?? workspace.line))
        }
        var out = spec
        if workspace.task == nil { workspace.task = agent.task }
        out.workspace = workspace
        for k in agent.secretEnv where !out.secretEnv.contains(k) { out.secretEnv.append(k) }
        if var egress = out.sections.egress {
            for h in agent.egress where !egress.entries.contains(h) { egress.entries.append(h) }
            out.sections.egress = egress
        }
        return out
    }
}
