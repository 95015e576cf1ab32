import Foundation

public enum FileKind: Sendable, Equatable { case file, directory, symlink, socket, other }
