import ArgumentParser

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
