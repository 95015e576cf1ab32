/// What a run that was interrupted left: the exit codes it asked for and the files there at that moment.
public final class ExitRecord: @unchecked Sendable {
    public init() {}
    public var codes: [Int32] = []
    public var leftAtExit: [String]?
}
