import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// Compose `secrets:` and `configs:`: a Kubernetes Secret (values made at start, never rendered) or a
/// ConfigMap per top-level entry, mounted where compose mounts them (`/run/secrets/<name>`, `/<name>`,
/// or the long form's target).
public enum ComposeResourceNames {
    public static func secret(_ id: String, _ name: String) -> String {
        NameRules.dnsSubdomain("\(id)-secret-\(NameRules.dnsLabel(name))")
    }
    public static func config(_ id: String, _ name: String) -> String {
        NameRules.dnsSubdomain("\(id)-config-\(NameRules.dnsLabel(name))")
    }
    /// The key a secret's or config's content is stored under.
    public static let key = "content"
}
