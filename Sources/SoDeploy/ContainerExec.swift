import Foundation
import SoActions
import SoBasics
import SoKube

/// A command in a container: through the API server (`ClusterClient.exec`: one WebSocket from `so` itself, about
/// 55 ms where `kubectl exec` takes 115) when the client can, else `kubectl exec` with the same command. Both tell
/// a pod that is gone in kubectl's words, so a caller reads their results alike. `SO_EXEC=kubectl` always runs
/// kubectl. A terminal (`-t`) or the user's stdin (`-i`) is kubectl's.
package struct ContainerExec: Sendable {
    package let ctx: SoContext
    /// The cluster's client; nil: kubectl.
    package let client: ClusterClient?
    package let namespace: String
    package let pod: String
    package let container: String
    package let kubectlFlags: [String]

    package init(
        _ ctx: SoContext, client: ClusterClient?, namespace: String, pod: String, container: String,
        kubectlFlags: [String]
    ) {
        self.ctx = ctx
        self.client = Self.kubectlOnly(ctx) ? nil : client
        self.namespace = namespace
        self.pod = pod
        self.container = container
        self.kubectlFlags = kubectlFlags
    }

    /// `SO_EXEC=kubectl`: every exec is kubectl's.
    static func kubectlOnly(_ ctx: SoContext) -> Bool { ctx.environment["SO_EXEC"] == "kubectl" }

    /// `kubectl exec` of `command` with `options` (`-i`, `-t`).
    package func kubectl(_ options: [String], _ command: [String]) -> [String] {
        Self.kubectl(kubectlFlags, namespace: namespace, pod: pod, container: container, options: options, command)
    }

    /// `kubectl exec` into `container` of `pod`, with `command` after `--`: every kubectl exec `so` runs.
    package static func kubectl(
        _ flags: [String], namespace: String, pod: String, container: String, options: [String] = [],
        _ command: [String]
    ) -> [String] {
        ["kubectl"] + flags + ["-n", namespace, "exec"] + options + [pod, "-c", container, "--"] + command
    }

    func request(
        _ command: [String], _ stdin: ExecInput, output: (@Sendable (Bool, Data) -> Void)? = nil,
        timeout: Double? = nil
    ) -> ExecRequest {
        ExecRequest(
            namespace: namespace, pod: pod, container: container, command: command, stdin: stdin, output: output,
            timeout: timeout)
    }

    /// Runs `command` with `stdin` and captures its output; past `timeout` seconds it is stopped (its connection
    /// closed, or kubectl ended) and this throws.
    package func run(_ command: [String], stdin: ExecInput = .none, timeout: Double? = nil) async throws
        -> ProcessResult
    {
        if let client, let outcome = try await client.exec(request(command, stdin, timeout: timeout)) {
            return outcome.result
        }
        switch stdin {
        case .none:
            return try await ctx.processes.run(
                kubectl([], command), workingDirectory: nil, environment: nil, timeout: timeout)
        case .bytes(let data):
            return try await ctx.processes.runFeeding(
                kubectl(["-i"], command), input: Array(data), environment: nil, timeout: timeout)
        case .later(let later):
            let payload = await later.payload
            // kubectl reads one stdin: the bytes, then the file's, fed from memory (this way only). Never joined in a
            // file: the bytes may be credentials (`HandedCredentials`), which no file on this machine holds.
            var input = Array(payload.bytes)
            if let file = payload.file { input += try ctx.fs.readData(file) }
            return try await ctx.processes.runFeeding(
                kubectl(["-i"], command), input: input, environment: nil, timeout: timeout)
        }
    }

    /// Runs `command` with its output shown as it comes; its exit code. `options` (`-i`, `-t`) mean kubectl, whose
    /// stdin and stdout are the terminal's.
    package func attached(_ options: [String], _ command: [String]) async throws -> Int32 {
        if options.isEmpty, let client {
            let console = ctx.console
            if let outcome = try await client.exec(
                request(command, .none, output: { stdout, bytes in console.write(bytes, toStdout: stdout) }))
            {
                if !outcome.stderr.isEmpty { console.write(outcome.stderr, toStdout: false) }
                return outcome.exitCode
            }
        }
        return try await ctx.processes.runAttached(kubectl(options, command), environment: nil)
    }
}

extension KnownContainer {
    /// The exec of this container, with a client for the cluster its kubectl flags name (`--kubeconfig`,
    /// `--context`; none: the pod's service account); a kubeconfig that does not read means kubectl.
    package func exec(_ ctx: SoContext) -> ContainerExec {
        ContainerExec(
            ctx, client: client(ctx), namespace: namespace, pod: pod, container: container, kubectlFlags: kubectlFlags)
    }

    func client(_ ctx: SoContext) -> ClusterClient? {
        if ContainerExec.kubectlOnly(ctx) { return nil }
        func flag(_ name: String) -> String? {
            kubectlFlags.firstIndex(of: name).flatMap { $0 + 1 < kubectlFlags.count ? kubectlFlags[$0 + 1] : nil }
        }
        do {
            let connection =
                kubectlFlags.isEmpty
                ? try Kubeconfig.inCluster(environment: ctx.environment, fs: ctx.fs)
                : try Kubeconfig.resolve(
                    explicit: flag("--kubeconfig"), context: flag("--context"), environment: ctx.environment,
                    fs: ctx.fs, diagnostics: DiagnosticSink())
            return try ctx.connect(connection)
        } catch {
            // kubectl, given the same flags, says what is wrong with them.
            return nil
        }
    }
}
