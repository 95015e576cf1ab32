import Foundation
import SoBasics

public struct ComposeHealthcheck: Sendable, Equatable {
    /// `["CMD", …]`, `["CMD-SHELL", "…"]`, or `["NONE"]`; a string test becomes `["CMD-SHELL", text]`.
    public var test: [String]?
    public var interval: String?
    public var timeout: String?
    public var retries: Int?
    public var startPeriod: String?
    public var startInterval: String?
    public var disable: Bool
    public init(
        test: [String]? = nil, interval: String? = nil, timeout: String? = nil, retries: Int? = nil,
        startPeriod: String? = nil,
        startInterval: String? = nil, disable: Bool = false
    ) {
        self.test = test
        self.interval = interval
        self.timeout = timeout
        self.retries = retries
        self.startPeriod = startPeriod
        self.startInterval = startInterval
        self.disable = disable
    }
}
