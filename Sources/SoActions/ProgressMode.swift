import Foundation
import Logging
import SoBasics

public enum ProgressMode: String, Sendable, CaseIterable { case auto, plain, json }
