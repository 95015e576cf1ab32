import Foundation
import SoBasics

/// Running an exec plugin: its environment (`KUBERNETES_EXEC_INFO`), interactivity, and what it printed.
public enum ExecPlugins {
    /// Whether the plugin may talk to the user: never in CI (`CI` set) or without a terminal on stdin;
    /// `Always` then is an error.
    static func interactive(_ plugin: ExecPlugin, connection: ClusterConnection, effects: CredentialEffects) throws
        -> Bool
    {
        let ci = effects.environment["CI"].map { !$0.isEmpty } ?? false
        let terminal = effects.stdinIsTerminal && !ci
        switch plugin.interactiveMode {
        case .never: return false
        case .ifAvailable: return terminal
        case .always:
            guard terminal else {
                throw SoError(
                    "exec credential plugin '\(plugin.programName)' of \(connection.who) needs a terminal (interactiveMode: Always), "
                        + (ci ? "and CI is set" : "and standard input is not one"),
                    hint:
                        "run so from a terminal, or give this user a credential that needs no prompt (interactiveMode: Never)"
                )
            }
            return true
        }
    }

    /// `spec.cluster` of the ExecCredential a plugin is given (only with `provideClusterInfo: true`).
    static func clusterInfo(_ c: ClusterConnection, _ plugin: ExecPlugin) -> YValue? {
        guard plugin.provideClusterInfo else { return nil }
        var fields: [(String, YValue)] = [("server", .string(c.server))]
        if let n = c.tlsServerName { fields.append(("tls-server-name", .string(n))) }
        if c.insecureSkipTLSVerify { fields.append(("insecure-skip-tls-verify", .bool(true))) }
        if let ca = c.caPEM { fields.append(("certificate-authority-data", .string(ca.base64EncodedString()))) }
        if let p = c.proxyURL { fields.append(("proxy-url", .string(p))) }
        if let config = plugin.clusterConfig, let v = try? JSON.parse(Data(config.utf8)) {
            fields.append(("config", yvalue(v)))
        }
        return .map(fields)
    }

    static func yvalue(_ j: JSON) -> YValue {
        switch j {
        case .object(let o): return .map(o.keys.sorted().map { ($0, yvalue(o[$0] ?? .null)) })
        case .array(let a): return .list(a.map(yvalue))
        case .string(let s): return .string(s)
        case .number(let n): return n == n.rounded() && abs(n) < 1e15 ? .int(Int(n)) : .string(String(n))
        case .bool(let b): return .bool(b)
        case .null: return .null
        }
    }

    /// `KUBERNETES_EXEC_INFO`: the ExecCredential the plugin is given.
    public static func input(_ plugin: ExecPlugin, connection: ClusterConnection, interactive: Bool) -> String {
        var spec: [(String, YValue)] = []
        if let cluster = clusterInfo(connection, plugin) { spec.append(("cluster", cluster)) }
        spec.append(("interactive", .bool(interactive)))
        let v = YValue.map([
            ("kind", .string("ExecCredential")), ("apiVersion", .string(plugin.apiVersion)), ("spec", .map(spec)),
        ])
        return String(decoding: v.compactJSON(), as: UTF8.self)
    }

    /// Runs the plugin once and reads its credential.
    public static func run(_ plugin: ExecPlugin, for connection: ClusterConnection, effects: CredentialEffects)
        async throws -> ExecCredential
    {
        let interactive = try interactive(plugin, connection: connection, effects: effects)
        var env = effects.environment
        for e in plugin.env { env[e.name] = e.value }
        env["KUBERNETES_EXEC_INFO"] = input(plugin, connection: connection, interactive: interactive)
        let arguments = [plugin.command] + plugin.args
        let name = "exec credential plugin '\(plugin.programName)' of \(connection.who)"
        let result: ProcessResult
        do {
            if interactive {
                result = try await effects.processes.runPrompting(arguments, environment: env)
            } else {
                result = try await effects.processes.run(
                    arguments, workingDirectory: nil, environment: env, timeout: nil)
            }
        } catch let e as SoError where e.missingProgram != nil {
            let hint = plugin.installHint.map {
                $0.split(whereSeparator: \.isNewline).map { $0.trimmedSpaces }.filter { !$0.isEmpty }.joined(
                    separator: " ")
            }
            let why = plugin.command.contains("/") ? "does not exist or is not executable" : "is not on PATH"
            let fix =
                "install \(plugin.programName), or fix users[].user.exec.command in \(connection.source ?? "the kubeconfig")"
            var error = SoError(
                "\(name) is not installed: \(plugin.command) \(why)", hint: hint?.isEmpty == false ? hint : fix)
            error.missingProgram = plugin.command
            throw error
        }
        guard result.exitCode == 0 else {
            let lines = result.stderr.split(whereSeparator: \.isNewline).map { $0.trimmedSpaces }.filter { !$0.isEmpty }
                .suffix(3)
            let said =
                lines.isEmpty
                ? (interactive ? " (its output is above)" : "")
                : ": " + String(lines.joined(separator: " | ").prefix(400))
            throw SoError(
                "\(name) failed with exit code \(result.exitCode)\(said)",
                hint:
                    "run '\(plugin.command)' by hand, with the args of users[].user.exec in \(connection.source ?? "the kubeconfig"), to see why"
            )
        }
        return try parse(result.stdout, plugin: plugin, name: name)
    }

    /// The plugin's stdout: an ExecCredential of the configured apiVersion with a token, or a client
    /// certificate and key, and perhaps an expiry. Errors never quote the output (it holds the secret).
    public static func parse(_ stdout: String, plugin: ExecPlugin, name: String) throws -> ExecCredential {
        let hint =
            "the plugin must print an ExecCredential (apiVersion \(plugin.apiVersion)) with status.token, "
            + "or status.clientCertificateData and clientKeyData"
        guard let json = try? JSON.parse(Data(stdout.utf8)), case .object = json else {
            throw SoError("\(name) printed no ExecCredential (its output is not a JSON object)", hint: hint)
        }
        let version = json["apiVersion"]?.string ?? ""
        guard version == plugin.apiVersion else {
            throw SoError(
                "\(name) printed an ExecCredential of apiVersion '\(version)', not '\(plugin.apiVersion)' as the kubeconfig says",
                hint: hint)
        }
        if let kind = json["kind"]?.string, kind != "ExecCredential" {
            throw SoError("\(name) printed a '\(kind)', not an ExecCredential", hint: hint)
        }
        guard let status = json["status"], case .object = status else {
            throw SoError("\(name) printed an ExecCredential without a status", hint: hint)
        }
        let token = status["token"]?.string.flatMap { $0.isEmpty ? nil : $0 }
        let cert = status["clientCertificateData"]?.string.flatMap { $0.isEmpty ? nil : Data($0.utf8) }
        let key = status["clientKeyData"]?.string.flatMap { $0.isEmpty ? nil : Data($0.utf8) }
        if (cert == nil) != (key == nil) {
            throw SoError("\(name) printed only one of clientCertificateData and clientKeyData", hint: hint)
        }
        guard token != nil || cert != nil else {
            throw SoError("\(name) printed neither a token nor a client certificate and key", hint: hint)
        }
        var expiry: Date?
        if let stamp = status["expirationTimestamp"]?.string {
            guard let d = Timestamps.parse(stamp) else {
                throw SoError(
                    "\(name) printed an expirationTimestamp that is not an RFC 3339 time: '\(stamp.prefix(40))'",
                    hint: hint)
            }
            expiry = d
        }
        return ExecCredential(token: token, clientCertificatePEM: cert, clientKeyPEM: key, expiry: expiry)
    }
}
