import ArgumentParser
import Foundation
import Logging
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoKube
import SoKubeHTTP
import SoStack
import SoSystem
import SoWorkspace

public enum SoVersion {
    public static let current = SoRelease.version
}
