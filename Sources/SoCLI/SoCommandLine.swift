import ArgumentParser
import Foundation
import Logging
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoKube
import SoKubeHTTP
import SoStack
import SoSystem
import SoWorkspace

/// Runs one command line to completion and returns the exit code; prints errors as
/// `error: …` / `hint: …` and warnings as `warning: …` on stderr.
public enum SoCommandLine {
    public static func execute(_ arguments: [String], context: SoContext) async -> Int32 {
        let console = context.console
        do {
            if let unknown = unknownHelpTopic(arguments) {
                throw SoError.usage("unknown command '\(unknown)'", hint: "run 'so --help' for the list of commands")
            }
            var command = try parse(arguments)
            context.phase("arguments parsed")
            if let verb = command as? any SoRunnable { try await verb.run(context) } else { try command.run() }
            context.phase("command done")
            flushWarnings(context)
            return 0
        } catch let error as ExitCode {
            flushWarnings(context)
            return error.rawValue
        } catch let error as SoError {
            flushWarnings(context)
            console.err(error.description)
            return error.exitCode
        } catch {
            flushWarnings(context)
            let code = SoCommand.exitCode(for: error)
            if code == .success {
                console.out(SoCommand.fullMessage(for: error))
                return 0
            }
            if error is CleanExit || code.rawValue == 0 { return code.rawValue }
            let message =
                SoCommand.message(for: error).split(separator: "\n").first.map(String.init) ?? "invalid arguments"
            let lowered = message.hasPrefix("Error: ") ? String(message.dropFirst(7)) : message
            console.err("error: " + lowercasedFirst(lowered))
            let path = helpPath(arguments)
            console.err("hint: run 'so \(path.isEmpty ? "" : path + " ")--help' for usage")
            return code.rawValue == 0 ? 2 : code.rawValue
        }
    }

    static func flushWarnings(_ ctx: SoContext) {
        for d in ctx.diagnostics.all { ctx.console.err(d.description) }
    }

    static func lowercasedFirst(_ s: String) -> String {
        guard let f = s.first else { return s }
        return f.lowercased() + s.dropFirst()
    }

    /// The command `arguments` name, parsed: options before or after a subcommand are read where their group
    /// declares them, and a group's option that the chosen verb does not take (`SoRunnable.takes`) is refused.
    public static func parse(_ arguments: [String]) throws -> ParsableCommand {
        let command = try SoCommand.parseAsRoot(arguments)
        if let verb = command as? any SoRunnable,
            let option = verb.given.first(where: { !type(of: verb).takes.contains($0) })
        {
            throw ValidationError("'\(path(to: type(of: verb)))' takes no \(option.rawValue)")
        }
        return command
    }

    /// `so help WORD…` naming no command (ArgumentParser would print the root help and exit 0).
    static func unknownHelpTopic(_ arguments: [String]) -> String? {
        guard arguments.first == "help" else { return nil }
        var command: ParsableCommand.Type = SoCommand.self
        for word in arguments.dropFirst() where !word.hasPrefix("-") {
            guard let child = child(of: command, named: word) else { return word }
            command = child
        }
        return nil
    }

    /// The subcommand words of the command line, for the usage hint: names of subcommands, each below the last, with
    /// options and their values passed over; another word ends them (a group option's value that is also a subcommand
    /// name, as in `deployment --name status start`, can mislead it: only the hint is read this way).
    static func helpPath(_ arguments: [String]) -> String {
        var command: ParsableCommand.Type = SoCommand.self
        var path: [String] = []
        var previous = ""
        for word in arguments {
            defer { previous = word }
            if word == "--" { break }
            if let child = child(of: command, named: word) {
                path.append(word)
                command = child
            } else if !word.hasPrefix("-") && !(previous.hasPrefix("-") && !previous.contains("=")) {
                break
            }
        }
        return path.joined(separator: " ")
    }

    /// `deployment status` for `DeploymentStatusCommand`: the subcommand names that lead to `command`.
    static func path(to command: ParsableCommand.Type, from parent: ParsableCommand.Type = SoCommand.self) -> String {
        for child in parent.configuration.subcommands {
            let name = child.configuration.commandName ?? ""
            if ObjectIdentifier(child) == ObjectIdentifier(command) { return name }
            let below = path(to: command, from: child)
            if !below.isEmpty { return name + " " + below }
        }
        return ""
    }

    static func child(of command: ParsableCommand.Type, named word: String) -> ParsableCommand.Type? {
        command.configuration.subcommands.first {
            $0.configuration.commandName == word || $0.configuration.aliases.contains(word)
        }
    }
}
