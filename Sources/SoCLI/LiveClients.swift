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

/// One HTTPS client per cluster connection for the life of the process: commands that connect more
/// than once (`up`, `cleanup`, `down`) reuse its connection, and the process exits without waiting for
/// connections to close (the kernel closes them).
final class LiveClients: @unchecked Sendable {
    static let shared = LiveClients()
    private let lock = NSLock()
    private var clients: [(ClusterConnection, HTTPClusterClient)] = []

    func client(for connection: ClusterConnection, make: () throws -> HTTPClusterClient) throws -> HTTPClusterClient {
        try lock.withLock {
            if let (_, c) = clients.first(where: { $0.0 == connection }) { return c }
            let c = try make()
            clients.append((connection, c))
            return c
        }
    }
}
