import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

/// The JSON shape of a listed deployment.
struct ListingJSON: Encodable {
    var name, stack, namespace, id, directory, host: String
    var created: String?
    var expires: String?
    var ready: Bool
    var readyDeployments, deployments: Int
    var terminating: Bool
    /// Stopped by 'so cleanup --idle' (the next verb that needs it starts it).
    var idleStopped: Bool
    /// A warm pool's member no `up` has claimed yet: its pool (left out for every other deployment).
    var pool: String?
    /// The record's latest revision in the cluster, who wrote it (user@host) and when.
    var revision: Int?
    var writtenBy: String?
    var written: String?

    init(_ r: DeploymentListing) {
        name = r.name
        stack = r.stack
        namespace = r.namespace
        id = r.id
        directory = r.directory
        host = r.host
        created = r.createdAt.map(Timestamps.rfc3339)
        expires = r.expiresAt.map(Timestamps.rfc3339)
        ready = r.ready
        readyDeployments = r.readyDeployments
        deployments = r.deployments
        terminating = r.terminating
        idleStopped = r.idleStopped
        pool = r.pool
        revision = r.recordRevision
        writtenBy = r.writtenBy
        written = r.writtenAt.map(Timestamps.rfc3339)
    }
}
