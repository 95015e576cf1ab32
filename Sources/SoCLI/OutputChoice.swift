import ArgumentParser

/// The formats a verb prints, and the one it prints when `-o` is not given.
protocol OutputChoice: CaseIterable, RawRepresentable where RawValue == String {
    static var byDefault: Self { get }
}
