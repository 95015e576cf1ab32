import Foundation
import SoBasics
import SoCompose

/// `spec.yml`: per-deployment overrides (reference §3.4), decoded strictly.
///
/// A small value: its keys (`SpecFields`, read and written as `spec.namespace`) live in one copy-on-write box, so a
/// copy of a spec is a pointer however many keys it has, and a new key is one stored line in `SpecFields`. Stored
/// inline, its 36 keys made a spec 1,081 bytes, copied down every call of the load path; one more stored `Int` made
/// a debug build outgrow a thread's stack (SIGSEGV in unrelated loading code, issue 67).
@dynamicMemberLookup
public struct Spec: Sendable {
    private var fields: CopyOnWrite<SpecFields>

    init(_ fields: SpecFields) { self.fields = CopyOnWrite(fields) }

    public subscript<T>(dynamicMember key: WritableKeyPath<SpecFields, T>) -> T {
        get { fields.value[keyPath: key] }
        _modify { yield &fields.value[keyPath: key] }
    }

    public subscript<T>(dynamicMember key: KeyPath<SpecFields, T>) -> T { fields.value[keyPath: key] }

    /// `network.tls` (declared here: the method `tls(for:)` would hide it from the lookup above).
    public var tls: IngressTLS? {
        get { fields.value.tls }
        set { fields.value.tls = newValue }
    }

    /// How `proxy`'s host gets its certificate: its own setting, the spec's, else the target's default.
    public func tls(for proxy: HTTPProxy) -> IngressTLS {
        proxy.tls ?? tls ?? IngressTLS.targetDefault(fields.value.deployTo)
    }

    public static func load(_ path: String, fs: FileSystem, diagnostics: DiagnosticSink) throws -> Spec {
        Spec(try SpecFields.load(path, fs: fs, diagnostics: diagnostics))
    }

    public static func decode(_ root: YNode, text: String, path: String, diagnostics: DiagnosticSink) throws -> Spec {
        Spec(try SpecFields.decode(root, text: text, path: path, diagnostics: diagnostics))
    }
}
