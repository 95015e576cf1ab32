import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// Names of host-path ConfigMaps, as laconic-so builds them: `../config/test/script.sh` → `config-test-script-sh`.
public enum HostPathName {
    /// The named volume an absolute host bind becomes (`/etc/pihole/` → `host-etc-pihole`).
    public static func volume(for source: String) -> String {
        NameRules.dnsLabel("host-" + NameRules.hostPathName(source))
    }

    /// Whether an absolute host bind may be mounted: always in a plain compose file (deploy init wrote its
    /// volume); in a laconic stack only when the spec names its volume with a host path (the opt-in).
    public static func allowed(_ source: String, spec: Spec, podPerService: Bool) -> Bool {
        podPerService || spec.volumes.contains { $0.name == volume(for: source) && $0.path != nil }
    }

    /// The refusal's hint: exactly what to add to the spec.
    public static func optInHint(_ source: String) -> String {
        "to mount it from the host, add '\(volume(for: source)): \(source)' under volumes: in the spec, then run 'so deploy create' "
            + "(or 'deploy create --update'); a directory, file or socket is mounted as it is"
    }

}
