import Foundation
import ArgumentParser
import SoActions
import SoDeploy
import SoWorkspace
import SoAuthoring
import SoBasics
import SoKube
import SoKubeHTTP
import Logging
import SoStack
import SoSystem

public enum SoVersion {
    public static let current = "0.1.0"
}
