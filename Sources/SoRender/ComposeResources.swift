import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

extension PodBuilder {
    /// Mounts for the secrets and configs a service uses; adds their pod volumes (and config ConfigMaps).
    mutating func resourceMounts(_ svc: ComposeService) throws -> [YValue] {
        var mounts: [YValue] = []
        let loc = location(svc)
        // The top-level `secrets:` or `configs:` entry a service's reference names.
        func topLevel(_ ref: ComposeServiceResourceRef, _ word: String, in entries: [ComposeTopLevelResource]) throws
            -> ComposeTopLevelResource
        {
            guard let top = entries.first(where: { $0.name == ref.source }) else {
                throw SoError(
                    "service '\(svc.name)' uses \(word) '\(ref.source)', which the compose file does not define",
                    hint: "add it under the top-level \(word)s:", at: loc)
            }
            return top
        }
        for ref in svc.secrets {
            let top = try topLevel(ref, "secret", in: compose.secrets)
            let target =
                ref.target.map { $0.hasPrefix("/") ? $0 : "/run/secrets/\($0)" } ?? "/run/secrets/\(ref.source)"
            let secretName = top.external ? top.name : ComposeResourceNames.secret(id, top.name)
            mounts.append(
                mountFile(
                    volume: "secret-\(top.name)", kind: "secret", nameKey: "secretName", name: secretName, ref: ref,
                    top: top, target: target))
        }
        for ref in svc.configs {
            let top = try topLevel(ref, "config", in: compose.configs)
            let target = ref.target.map { $0.hasPrefix("/") ? $0 : "/\($0)" } ?? "/\(ref.source)"
            let cmName = top.external ? top.name : ComposeResourceNames.config(id, top.name)
            if !top.external {
                let declared = SourceLocation(file: compose.path, line: top.line)
                var data = Data()
                if let content = top.content {
                    data = Data(content.utf8)
                } else if let file = top.file {
                    let rel = Path.normalize(Path.join(folder, file))
                    guard let d = model.files[rel] else {
                        throw SoError(
                            "config '\(top.name)' file not found in the deployment: \(rel)",
                            hint: "run 'so deploy create --update'", at: declared)
                    }
                    data = d
                } else {
                    state.warnings.append(
                        Diagnostic(
                            "config '\(top.name)' from the environment is not supported; it is mounted empty",
                            hint: "use file: or content:", at: declared))
                }
                try addConfigMapObject(
                    name: cmName, entries: [(ComposeResourceNames.key, data)], location: loc, label: cmName)
            }
            mounts.append(
                mountFile(
                    volume: "config-\(top.name)", kind: "configMap", nameKey: "name", name: cmName, ref: ref, top: top,
                    target: target))
        }
        return mounts
    }

    /// A pod volume from a Secret or ConfigMap and the read-only mount of its one file at `target`.
    mutating func mountFile(
        volume: String, kind: String, nameKey: String, name: String, ref: ComposeServiceResourceRef,
        top: ComposeTopLevelResource, target: String
    ) -> YValue {
        let volume = NameRules.dnsLabel(volume)
        var source: [(String, YValue)] = [(nameKey, .string(name))]
        if let mode = ref.mode.flatMap({ Int($0, radix: 8) }) { source.append(("defaultMode", .int(mode))) }
        addPodVolume(volume, .map([(kind, .map(source))]))
        return .map([
            ("name", .string(volume)), ("mountPath", .string(target)),
            ("subPath", .string(top.external ? top.name : ComposeResourceNames.key)),
            ("readOnly", .bool(true)),
        ])
    }
}

extension RenderState {
    /// With `placeholderSecrets` (render for reading), the compose Secrets `start` fills in, without values.
    mutating func renderComposeSecretPlaceholders() {
        guard options.placeholderSecrets else { return }
        for secret in Renderer.composeSecrets(model) where !secrets.contains(where: { $0.name == secret.name }) {
            let s = secret.declared
            let from = s.file.map { "file \($0)" } ?? "environment \(s.environment ?? s.name)"
            secrets.append(
                KubeObject(
                    .secret, name: secret.name, namespace: namespace, labels: labels(),
                    annotations: [
                        (DeploymentNames.Annotation.placeholder, "made at start from \(from); never rendered")
                    ],
                    body: [
                        ("type", .string("Opaque")),
                        ("stringData", .map([(ComposeResourceNames.key, .string("<set at start>"))])),
                    ]))
        }
    }
}
