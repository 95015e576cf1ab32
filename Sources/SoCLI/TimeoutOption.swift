import ArgumentParser

/// `--timeout SECONDS`, an option of the `deployment` group: how long the verbs that wait (start, up, stop, restart,
/// update-envs, rotate-secrets) wait, each with its own default.
struct TimeoutOption: GroupOptionSet {
    // Read even when it starts with '-', so '-5' is named as invalid.
    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp("Seconds to wait (default: 300; stop: 120).", valueName: "seconds"),
        transform: Seconds.parse)
    var timeout: Double?

    var given: [GroupOption] { timeout == nil ? [] : [.timeout] }
}
