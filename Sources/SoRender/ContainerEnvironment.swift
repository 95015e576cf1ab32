import Foundation
import SoBasics
import SoStack

/// A container's `env` as `PodBuilder.environment` builds it: the entries in order, indexed by name (every config
/// key passes here, so no linear search), and the generated Secret's keys that longer values refer to, defined
/// first. A value of its own, so that the building functions' frames stay small (issue 67: `PodBuilder.build()`).
struct ContainerEnvironment {
    /// The other services of the pod, whose names in a value mean this pod (`SiblingRewrite`).
    let siblings: [String]
    /// The generated Secret the references read.
    let secretName: String
    private var entries: [(name: String, value: YValue)] = []
    private var position: [String: Int] = [:]
    /// Keys referenced inside longer values, in the order first seen; defined first.
    private var secretRefs: [String] = []
    private var secretRefSet: Set<String> = []

    init(siblings: [String], secretName: String) {
        self.siblings = siblings
        self.secretName = secretName
    }

    func has(_ name: String) -> Bool { position[name] != nil }

    mutating func set(_ name: String, _ value: YValue) {
        if let i = position[name] {
            entries[i].value = value
        } else {
            position[name] = entries.count
            entries.append((name, value))
        }
    }

    /// A value as compose or the config wrote it: a sibling's name rewritten, a value that is one generated secret
    /// read from the Secret, secrets inside a longer value as `$(KEY)`.
    mutating func add(_ name: String, raw: String) {
        let rewritten = SiblingRewrite.apply(raw, siblings: siblings)
        let pieces = SecretMarker.split(rewritten)
        if pieces.count == 1, case .secret(let k) = pieces[0] {
            set(name, secretKeyRef(k))
            return
        }
        for case .secret(let k) in pieces where secretRefSet.insert(k).inserted { secretRefs.append(k) }
        set(name, .string(Self.kubeExpand(rewritten)))
    }

    /// The `env` list. A reference must come after the variable it uses: those definitions come first.
    func list() -> [YValue] {
        let prelude = secretRefs.filter { position[$0] == nil }.map { ($0, secretKeyRef($0)) }
        let used = Set(secretRefs)
        let early = entries.filter { used.contains($0.name) }
        let rest = entries.filter { !used.contains($0.name) }
        return (prelude + early.map { ($0.name, $0.value) } + rest.map { ($0.name, $0.value) }).map { name, value in
            if case .map(let ref) = value { return .map([("name", .string(name))] + ref) }
            return .map([("name", .string(name)), ("value", value)])
        }
    }

    /// Kubernetes expands `$(VAR)` in env values, command and args: literal `$(` is escaped as `$$(`,
    /// and generated-secret references become `$(KEY)` (the key is defined from the Secret first).
    static func kubeExpand(_ value: String) -> String {
        SecretMarker.split(value).map { piece in
            switch piece {
            case .text(let t): return t.replacingOccurrences(of: "$(", with: "$$(")
            case .secret(let k): return "$(\(k))"
            }
        }.joined()
    }

    func secretKeyRef(_ key: String) -> YValue {
        .map([
            (
                "valueFrom",
                .map([
                    (
                        "secretKeyRef",
                        .map([
                            ("name", .string(secretName)), ("key", .string(key)),
                            ("optional", .bool(true)),
                        ])
                    )
                ])
            )
        ])
    }
}
