import ArgumentParser

/// A set of options a group command declares, so they parse before or after its verbs. A verb takes the set by
/// declaring it as an option group too (and shows it in its help).
protocol GroupOptionSet: ParsableArguments {
    /// The options of the set the command line gave.
    var given: [GroupOption] { get }
}
