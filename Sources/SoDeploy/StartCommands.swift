import Foundation
import SoActions
import SoBasics
import SoStack

/// stack.yml map-form pods' `pre_start_command` / `post_start_command`: run on this host with `sh -c`, in the
/// directory of the pod's compose file, before `start` changes anything on the cluster and once the
/// deployment is ready. A command that fails stops the start, naming the pod and its last output line.
struct StartCommands {
    let ctx: SoContext
    let model: DeploymentModel

    enum When: String {
        case pre = "pre_start_command"
        case post = "post_start_command"
    }

    func run(_ when: When) async throws {
        let pods = model.pods.map(\.name)
        let stack: ResolvedStack
        do {
            stack = try ctx.locator.resolve(
                model.spec.stack, relativeTo: [model.directory, Path.dirname(model.spec.path)],
                diagnostics: .dropped("deploy create warned about the stack; start reads it only for its commands"))
        } catch {
            ctx.diagnostics.warn(
                "cannot resolve stack \(model.spec.stack) for its \(when.rawValue)s: \(SoContext.oneLine(error)); none run",
                hint: "check the spec's stack: (the stack may have moved)")
            return
        }
        for pod in stack.pods where pods.contains(pod.name) {
            guard let command = when == .pre ? pod.preStartCommand : pod.postStartCommand else { continue }
            ctx.say("running \(when.rawValue) of pod \(pod.name): \(command)")
            let r = try await ctx.processes.run(
                ["sh", "-c", command], workingDirectory: Path.dirname(pod.composePath), environment: nil, timeout: 600)
            for line in r.stdout.split(separator: "\n") { ctx.verbose("  \(line)") }
            guard r.exitCode == 0 else {
                throw SoError(
                    "\(when.rawValue) of pod \(pod.name) exited \(r.exitCode): \(r.lastErrorLine)",
                    hint: "run it by hand in \(Path.dirname(pod.composePath)) to see why",
                    at: SourceLocation(file: stack.stackFilePath))
            }
        }
    }
}
