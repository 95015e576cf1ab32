import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// The extraMounts a deployment needs on the kind node (the same rule as kind-config.yml).
public enum KindMounts {
    public static func required(_ model: DeploymentModel, home: String) -> [KindConfig.Mount] {
        let root = model.spec.kindMountRoot.map { Path.normalize(Path.expandTilde($0, home: home)) }
        let volumes: [(name: String, hostPath: String)] =
            model.spec.volumes.compactMap { v in
                guard let p = v.path else { return nil }
                let abs =
                    p.hasPrefix("/") || p.hasPrefix("~")
                    ? Path.normalize(Path.expandTilde(p, home: home)) : Path.absolute(p, relativeTo: model.directory)
                return (v.name, abs)
            } + Set(model.bindDirectories.values).sorted().map { ($0, Path.join(model.directory, "data", $0)) }
            + model.repoBinds.sorted { $0.key < $1.key }.map { (HostPathName.volume(for: $0.key), $0.value.path) }
        return KindConfig(volumes: volumes, mountRoot: root, hostPorts: []).mounts
    }
}
