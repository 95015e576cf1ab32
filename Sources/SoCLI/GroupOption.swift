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
    case dir = "--dir"
    case name = "--name"
    case kubeconfig = "--kubeconfig"
    case context = "--context"
    case format = "-o"
    case timeout = "--timeout"
    case specOutput = "--output"
    case dryRun = "--dry-run"
}

extension OutputFormat: OutputChoice {
    static let byDefault = OutputFormat.text
}
