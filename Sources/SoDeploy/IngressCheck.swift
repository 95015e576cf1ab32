import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// What an Ingress of the deployment needs from the cluster, read at start: the IngressClasses (the class the
/// spec names none of is the cluster's default, `ingressclass.kubernetes.io/is-default-class`), and whether the
/// certificates its hosts name can come (cert-manager's CRDs for an issuer, the Secret for a `secret:`). What
/// cannot be read (no access) is not guessed: it is said in verbose output and nothing is warned.
struct IngressCheck {
    let client: ClusterClient

    static let defaultClassAnnotation = "ingressclass.kubernetes.io/is-default-class"
    /// cert-manager's CRD for Certificates: present where cert-manager is installed.
    static let certManagerCRD = "certificates.cert-manager.io"

    struct Classes: Sendable {
        var names: [String]
        /// The class marked default (the newest, as the API server's admission picks, when several are).
        var defaultClass: String?
    }

    /// The cluster's IngressClasses; nil when they cannot be listed.
    func classes() async -> Classes? {
        guard let listed = try? await client.list(.ingressClass, namespace: nil, labelSelector: nil) else { return nil }
        return Self.classes(listed)
    }

    static func classes(_ listed: [JSON]) -> Classes {
        let defaults = listed.filter { $0.annotations[defaultClassAnnotation] == "true" }.sorted {
            ($0.at("metadata", "creationTimestamp")?.string ?? "", $0.name)
                > ($1.at("metadata", "creationTimestamp")?.string ?? "", $1.name)
        }
        return Classes(names: listed.map(\.name).sorted(), defaultClass: defaults.first?.name)
    }

    /// A warning when an Ingress names a class the cluster does not have (nil when it has it, or nothing was
    /// read). `installing`: the class a controller being installed by this start brings (kind's Caddy).
    static func classWarning(_ manifest: [KubeObject], classes: Classes?, installing: String?) -> String? {
        guard let classes else { return nil }
        for ingress in manifest where ingress.isKind(.ingress) {
            guard let named = className(ingress), named != installing,
                !classes.names.contains(named)
            else { continue }
            let have = classes.names.isEmpty ? "it has none" : "it has " + classes.names.joined(separator: ", ")
            return "Ingress \(ingress.name) names the class '\(named)', which this cluster does not have (\(have)): "
                + "no controller serves its hosts; set ingress-class: in the spec to one of its classes"
        }
        return nil
    }

    /// The class an Ingress of the manifest names.
    static func className(_ ingress: KubeObject) -> String? {
        guard case .map(let spec)? = ingress.body.first(where: { $0.0 == "spec" })?.1,
            case .string(let name)? = spec.first(where: { $0.0 == "ingressClassName" })?.1
        else { return nil }
        return name
    }

    /// Warnings on the hosts' certificates: an issuer named where cert-manager is not installed, or not found;
    /// a Secret named that does not exist in `namespace`.
    func tlsWarnings(_ spec: Spec, namespace: String, log: (String) -> Void) async -> [String] {
        var warnings: [String] = []
        var certManager: Bool?
        var checked: Set<IngressTLS> = []
        for proxy in spec.httpProxy {
            let tls = spec.tls(for: proxy)
            guard !checked.contains(tls) else { continue }
            checked.insert(tls)
            switch tls {
            case .none: continue
            case .issuer(let name, let kind):
                if certManager == nil {
                    do {
                        certManager =
                            try await client.get(.customResourceDefinition, name: Self.certManagerCRD, namespace: nil)
                            != nil
                    } catch {
                        log("cannot tell whether cert-manager is installed (\(error)): its issuers are not checked")
                        return warnings
                    }
                }
                guard certManager == true else {
                    warnings.append(
                        "host \(proxy.hostName) asks cert-manager's \(kind.rawValue) \(name) for its certificate, but "
                            + "this cluster has no cert-manager (no CRD \(Self.certManagerCRD)): HTTPS for it gets "
                            + "the controller's default certificate; install cert-manager, or set network.tls in the "
                            + "spec to a secret or none")
                    continue
                }
                let type: ResourceType = kind == .clusterIssuer ? .clusterIssuer : .issuer
                if await absent(type, name, namespace: kind == .issuer ? namespace : nil, log: log) {
                    warnings.append(
                        "host \(proxy.hostName) asks cert-manager's \(kind.rawValue) \(name) for its certificate, "
                            + "which does not exist" + (kind == .issuer ? " in namespace \(namespace)" : ""))
                }
            case .secret(let name):
                if await absent(.secret, name, namespace: namespace, log: log) {
                    warnings.append(
                        "host \(proxy.hostName)'s TLS Secret \(namespace)/\(name) does not exist: the controller "
                            + "serves its default certificate until it does")
                }
            }
        }
        return warnings
    }

    /// Whether the object is known not to exist: an object that cannot be read (no access) is not guessed
    /// missing, and said in verbose output.
    func absent(_ type: ResourceType, _ name: String, namespace: String?, log: (String) -> Void) async -> Bool {
        do {
            return try await client.get(type, name: name, namespace: namespace) == nil
        } catch {
            log("cannot read \(type.kind) \(name) (\(error)): not checked")
            return false
        }
    }
}
