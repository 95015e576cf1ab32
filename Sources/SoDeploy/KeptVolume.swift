import Foundation
import SoBasics
import SoKube

/// A volume kept from an earlier start whose claim went with its namespace (`stop --delete-namespace` keeps
/// volumes): a spec volume's path is a PersistentVolume with reclaim policy Retain, and once its claim is gone it
/// is Released, still naming that claim's UID. The claim this start makes under the same name would stay Pending
/// for good (the controller binds a volume only to the claim it names). Its claimRef is cut back to the claim's
/// namespace and name, so the new claim binds to it and finds the data where it was.
///
/// Only a volume released by a claim of this deployment's namespace and of the volume's own name (the claim start
/// renders for it) is released; one that names any other claim is left as it is.
enum KeptVolume {
    /// Whether `pv` (as the server answered its apply) was released by the claim start makes for it.
    static func isReleasedByItsClaim(_ pv: JSON, namespace: String) -> Bool {
        pv.at("status", "phase")?.string == "Released"
            && pv.at("spec", "claimRef", "namespace")?.string == namespace
            && pv.at("spec", "claimRef", "name")?.string == pv.name
            && !(pv.at("spec", "claimRef", "uid")?.string ?? "").isEmpty
    }

    /// Releases `pv` to the claim of its own name when `isReleasedByItsClaim`; the volume as patched, else nil.
    static func release(_ pv: JSON, client: ClusterClient, namespace: String, log: (String) -> Void) async throws
        -> JSON?
    {
        guard isReleasedByItsClaim(pv, namespace: namespace) else { return nil }
        let patch = #"{"spec":{"claimRef":{"uid":null,"resourceVersion":null}}}"#
        let patched = try await client.patch(
            .persistentVolume, name: pv.name, namespace: nil, mergePatch: Data(patch.utf8))
        log("PersistentVolume \(pv.name): kept from before, released to the new claim \(namespace)/\(pv.name)")
        return patched
    }
}
