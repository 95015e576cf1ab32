import ArgumentParser

// laconic-so puts options on its groups (`so --stack S deploy --deploy-to k8s-kind init`, `so deployment --dir D status`);
// `so` also takes them after the verb (`so deployment status --dir D`). Both parse because each group declares its
// options as option groups: ArgumentParser reads a command's options wherever they stand on the rest of the line, and a
// verb that declares the same option group gets the group's value (ArgumentParser shares an option group's value
// between a command and its subcommands by type). Options that are not a group's are the verb's alone and follow it.

/// A set of options a group command declares, so they parse before or after its verbs. A verb takes the set by
/// declaring it as an option group too (and shows it in its help); given to a verb that does not, it is refused.
protocol GroupOptionSet: ParsableArguments {
    /// The options of the set the command line gave, as written in messages (`--dir`, `-o`).
    var given: [String] { get }
}

enum GroupOptions {
    /// Refuses a group option given to a verb that does not take it (the group parsed it, the verb would ignore it).
    /// The verb reaches its group through a `@ParentCommand`; the sets it takes are the option groups it declares.
    static func refuseUntaken(by command: ParsableCommand) throws {
        var taken: Set<ObjectIdentifier> = []
        var groups: [Any] = []
        collect(command, taken: &taken, groups: &groups)
        let path = SoCommandLine.path(to: type(of: command))
        for group in groups {
            for case let wrapper as OptionGroupValue in Mirror(reflecting: group).children.map(\.value) {
                guard let set = wrapper.value as? any GroupOptionSet, !taken.contains(ObjectIdentifier(type(of: set))) else { continue }
                if let option = set.given.first { throw ValidationError("'\(path)' takes no \(option)") }
            }
        }
    }

    private static func collect(_ value: Any, taken: inout Set<ObjectIdentifier>, groups: inout [Any]) {
        for child in Mirror(reflecting: value).children {
            if let parent = child.value as? ParentCommandValue {
                groups.append(parent.value)
            } else if let wrapper = child.value as? OptionGroupValue {
                taken.insert(ObjectIdentifier(type(of: wrapper.value)))
                collect(wrapper.value, taken: &taken, groups: &groups)
            }
        }
    }
}

protocol OptionGroupValue { var value: Any { get } }
protocol ParentCommandValue { var value: Any { get } }
extension OptionGroup: OptionGroupValue { var value: Any { wrappedValue } }
extension ParentCommand: ParentCommandValue { var value: Any { wrappedValue } }

/// `-o FORMAT`, an option of the `deployment` group; each verb that prints data reads it as the formats it prints
/// (`Formatted<OutputFormat>`, `Formatted<ManifestFormat>`).
struct FormatOption: GroupOptionSet {
    @Option(name: .shortAndLong, help: ArgumentHelp("Output format: text or json (render: yaml or json).", valueName: "format"))
    var output: String?

    var given: [String] { output == nil ? [] : ["-o"] }
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

    var given: [String] { timeout == nil ? [] : ["--timeout"] }
}

extension OutputFormat: OutputChoice {
    static let byDefault = OutputFormat.text
}
