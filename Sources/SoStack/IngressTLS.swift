import Foundation
import SoBasics

/// How an http-proxy host gets its certificate (`tls:` under `network:`, in an http-proxy entry, or per host
/// under `network.tls.hosts`): a cert-manager issuer, a Secret the user made, or no TLS. Unset, laconic-so's
/// default holds: on `k8s` the ClusterIssuer `letsencrypt-prod`, on `k8s-kind` none (Caddy gets certificates
/// itself).
public enum IngressTLS: Sendable, Equatable, Hashable {
    public enum IssuerKind: String, Sendable, Hashable {
        case clusterIssuer = "ClusterIssuer"
        case issuer = "Issuer"
    }
    /// cert-manager makes the certificate into a Secret named for the host (`<id>-<host>-tls`).
    case issuer(name: String, kind: IssuerKind)
    /// A TLS Secret that exists in the deployment's namespace (or will), made by the user.
    case secret(String)
    /// No `tls` entry, no issuer: plain HTTP at the controller.
    case none

    /// laconic-so's default on `k8s`.
    public static let laconicDefault = IngressTLS.issuer(name: "letsencrypt-prod", kind: .clusterIssuer)

    /// The default for a target: laconic-so's issuer on `k8s`, none on `k8s-kind`.
    public static func targetDefault(_ target: DeployTarget) -> IngressTLS {
        target == .k8s ? laconicDefault : .none
    }

    /// Decodes `none` / `false`, `{issuer: NAME, issuer-kind: ClusterIssuer|Issuer}` or `{secret: NAME}`;
    /// `hosts` is read by the caller where it is allowed (`allowing`).
    static func decode(_ node: YNode, what: String, allowing extra: [String] = [], diagnostics: DiagnosticSink)
        throws -> IngressTLS?
    {
        if node.isScalar {
            let text = try node.string(what)
            if ["none", "false", "off"].contains(text.lowercased()) { return IngressTLS.none }
            throw node.error(
                "\(what) '\(text)' is not a TLS setting",
                hint: "write 'none', '{issuer: NAME}' (cert-manager; issuer-kind: Issuer for a namespaced one) "
                    + "or '{secret: NAME}' (a TLS Secret you made)")
        }
        let m = try node.mapping(what)
        m.accept(extra)
        let issuer = try m.string("issuer")
        let kindText = try m.string("issuer-kind")
        let secret = try m.string("secret")
        m.finish(into: diagnostics)
        if issuer != nil && secret != nil {
            throw m.error(
                at: "secret", "\(what) names both an issuer and a secret",
                hint: "keep 'issuer:' for cert-manager to make the certificate, or 'secret:' for one you made")
        }
        if let secret {
            guard NameRules.isDNSSubdomain(secret) else {
                throw m.error(
                    at: "secret", "TLS secret '\(secret)' is not a valid Kubernetes name",
                    hint: "a Secret's name: lowercase letters, digits, '-' and '.', at most 253 characters")
            }
            if kindText != nil {
                throw m.error(at: "issuer-kind", "issuer-kind goes with issuer, not secret", hint: "remove it")
            }
            return .secret(secret)
        }
        guard let issuer else {
            if kindText != nil {
                throw m.error(
                    at: "issuer-kind", "\(what) has issuer-kind but no issuer", hint: "add 'issuer: NAME'")
            }
            return nil
        }
        guard NameRules.isDNSSubdomain(issuer) else {
            throw m.error(
                at: "issuer", "issuer '\(issuer)' is not a valid Kubernetes name",
                hint: "name the cert-manager ClusterIssuer or Issuer as 'kubectl get clusterissuers' lists it")
        }
        var kind = IssuerKind.clusterIssuer
        if let kindText {
            guard let k = IssuerKind(rawValue: kindText) else {
                throw m.error(
                    at: "issuer-kind", "issuer-kind '\(kindText)' is not ClusterIssuer or Issuer",
                    hint:
                        "write 'issuer-kind: ClusterIssuer' (cluster-wide) or 'issuer-kind: Issuer' (in the namespace)")
            }
            kind = k
        }
        return .issuer(name: issuer, kind: kind)
    }

    /// cert-manager's ingress-shim annotations, one per issuer kind.
    public static let annotationKeys: [(IssuerKind, String)] = [
        (.clusterIssuer, "cert-manager.io/cluster-issuer"), (.issuer, "cert-manager.io/issuer"),
    ]

    /// The cert-manager annotation an Ingress carries for this setting (nil: none).
    public var annotation: (String, String)? {
        guard case .issuer(let name, let kind) = self, let key = Self.annotationKeys.first(where: { $0.0 == kind })
        else { return nil }
        return (key.1, name)
    }

    /// The issuer an Ingress's annotations ask cert-manager for: `ClusterIssuer NAME`, `Issuer NAME`.
    public static func issuer(annotations: [String: String]) -> String? {
        annotationKeys.lazy.compactMap { kind, key in annotations[key].map { "\(kind.rawValue) \($0)" } }.first
    }

    /// What an Ingress of hosts whose issuer is not the spec's is named after: `cluster-issuer-NAME`,
    /// `issuer-NAME`, or `no-issuer` (hosts with their own Secret or no TLS).
    public var ingressSuffix: String {
        guard case .issuer(let name, let kind) = self else { return "no-issuer" }
        return (kind == .clusterIssuer ? "cluster-issuer-" : "issuer-") + name
    }
}
