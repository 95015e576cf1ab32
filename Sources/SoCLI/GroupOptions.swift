import ArgumentParser

// laconic-so puts options on its groups (`so --stack S deploy --deploy-to k8s-kind init`, `so deployment --dir D status`);
// `so` also takes them after the verb (`so deployment status --dir D`). Both parse because each group declares its
// options as option groups: ArgumentParser reads a command's options wherever they stand on the rest of the line, and a
// verb that declares the same option group gets the group's value (ArgumentParser shares an option group's value
// between a command and its subcommands by type). Options that are not a group's are the verb's alone and follow it.

/// An option of a group (`deploy`, `deployment`) or of `so` itself (`--dry-run`) that a verb may or may not take, as
/// written in messages. The group reads it wherever it stands on the line; a verb that takes it declares the same
/// option group and lists it in its `takes`; given to a verb that does not, it is refused (`SoCommandLine.parse`), not ignored.
enum GroupOption: String, CaseIterable, Sendable {
    case dir = "--dir", name = "--name", kubeconfig = "--kubeconfig", context = "--context", format = "-o", timeout = "--timeout"
    case specOutput = "--output"
    case dryRun = "--dry-run"
}

/// A set of options a group command declares, so they parse before or after its verbs. A verb takes the set by
/// declaring it as an option group too (and shows it in its help).
protocol GroupOptionSet: ParsableArguments {
    /// The options of the set the command line gave.
    var given: [GroupOption] { get }
}

/// `-o FORMAT`, an option of the `deployment` group; each verb that prints data reads it as the formats it prints
/// (`Formatted<OutputFormat>`, `Formatted<ManifestFormat>`).
struct FormatOption: GroupOptionSet {
    @Option(name: .shortAndLong, help: ArgumentHelp("Output format: text or json (render: yaml or json).", valueName: "format"))
    var output: String?

    var given: [GroupOption] { output == nil ? [] : [.format] }
}

/// The formats a verb prints, and the one it prints when `-o` is not given.
protocol OutputChoice: CaseIterable, RawRepresentable where RawValue == String {
    static var byDefault: Self { get }
}

/// `-o` read as one of the formats `F` a verb prints; another is a usage error naming them.
struct Formatted<F: OutputChoice>: ParsableArguments {
    @OptionGroup var option: FormatOption

    var value: F { F.allCases.first { $0.rawValue == option.output } ?? F.byDefault }

    func validate() throws {
        guard let output = option.output, !F.allCases.contains(where: { $0.rawValue == output }) else { return }
        let names = F.allCases.map { "'\($0.rawValue)'" }.joined(separator: " or ")
        throw ValidationError("the value '\(output)' is invalid for '-o <format>': use \(names)")
    }
}

/// `--timeout SECONDS`, an option of the `deployment` group: how long the verbs that wait (start, up, stop, restart,
/// update-envs, rotate-secrets) wait, each with its own default.
struct TimeoutOption: GroupOptionSet {
    // Read even when it starts with '-', so '-5' is named as invalid.
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Seconds to wait (default: 300; stop: 120).", valueName: "seconds"),
            transform: Seconds.parse)
    var timeout: Double?

    var given: [GroupOption] { timeout == nil ? [] : [.timeout] }
}

extension OutputFormat: OutputChoice {
    static let byDefault = OutputFormat.text
}
