import ArgumentParser

/// `-o FORMAT`, an option of the `deployment` group; each verb that prints data reads it as the formats it prints
/// (`Formatted<OutputFormat>`, `Formatted<ManifestFormat>`).
struct FormatOption: GroupOptionSet {
    @Option(
        name: .shortAndLong,
        help: ArgumentHelp("Output format: text or json (render: yaml or json).", valueName: "format"))
    var output: String?

    var given: [GroupOption] { output == nil ? [] : [.format] }
}
