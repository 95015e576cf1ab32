import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

extension PodBuilder {
    mutating func addPodVolume(_ name: String, _ source: YValue) {
        if !podVolumes.contains(where: { $0.0 == name }) { podVolumes.append((name, source)) }
    }

    mutating func volumeMounts(_ svc: ComposeService) throws -> [YValue] {
        var mounts: [YValue] = []
        for (index, m) in svc.volumes.enumerated() {
            let loc = location(svc, line: m.line)
            switch m.kind {
            case .volume:
                mounts.append(try namedVolumeMount(svc, m, index: index, at: loc))
            case .tmpfs:
                mounts.append(tmpfsMount(svc, m, index: index))
            case .bind:
                if let bind = try bindMount(m, at: loc) { mounts.append(bind) }
            case .npipe, .cluster:
                state.warnings.append(
                    Diagnostic(
                        "\(m.kind.rawValue) mount '\(m.raw)' has no Kubernetes equivalent and is left out", at: loc))
            }
        }
        mounts += caCertificateMounts()
        return mounts
    }

    /// The mount of a named volume: an emptyDir for an anonymous one, the spec's ConfigMap, else a claim.
    mutating func namedVolumeMount(_ svc: ComposeService, _ m: ComposeVolumeMount, index: Int, at loc: SourceLocation)
        throws -> YValue
    {
        guard let source = m.source else {
            let name = NameRules.dnsLabel("anon-\(svc.name)-\(index)")
            addPodVolume(name, .map([("emptyDir", .map([]))]))
            return mount(name, m.target, readOnly: m.readOnly)
        }
        let volName = NameRules.dnsLabel(source)
        guard spec.configmaps.contains(where: { $0.name == source }) else {
            try addClaim(source, location: loc)
            return claimMount(volName, m)
        }
        return try configMapMount(volName, source: source, m)
    }

    /// The mount of the spec's ConfigMap `source`, read-only (added as the pod volume `name`).
    mutating func configMapMount(_ name: String, source: String, _ m: ComposeVolumeMount) throws -> YValue {
        try addConfigMap(
            name: "\(id)-\(name)", prefix: "configmaps/\(source)",
            location: SourceLocation(file: spec.path), label: source)
        addPodVolume(
            name,
            .map([
                (
                    "configMap",
                    .map(
                        [
                            ("name", .string("\(id)-\(name)")),
                            ("defaultMode", .int(0o755)),
                        ] + itemsFor(prefix: "configmaps/\(source)"))
                )
            ]))
        return mount(name, m.target, readOnly: true)
    }

    /// The mount of the claim `<id>-<name>` (added as the pod volume `name`), read-only as the compose file says.
    mutating func claimMount(_ name: String, _ m: ComposeVolumeMount) -> YValue {
        addPodVolume(name, .map([("persistentVolumeClaim", .map([("claimName", .string("\(id)-\(name)"))]))]))
        return mount(name, m.target, readOnly: m.readOnly)
    }

    /// The mount of a tmpfs: an emptyDir in memory.
    mutating func tmpfsMount(_ svc: ComposeService, _ m: ComposeVolumeMount, index: Int) -> YValue {
        let name = NameRules.dnsLabel("tmpfs-\(svc.name)-\(index)")
        addPodVolume(name, .map([("emptyDir", .map([("medium", .string("Memory"))]))]))
        return mount(name, m.target, readOnly: false)
    }

    /// The mount of a bind: a claim for a host path or a directory deploy create made, else a ConfigMap of its files;
    /// nil without a source.
    mutating func bindMount(_ m: ComposeVolumeMount, at loc: SourceLocation) throws -> YValue? {
        guard let source = m.source else { return nil }
        if source.hasPrefix("/") || source.hasPrefix("~") { return try hostPathMount(m, source: source, at: loc) }
        let rel = Path.normalize(Path.join(folder, source))
        if let volume = model.bindDirectories[rel] {
            // A missing source deploy create made as data/<volume>: the host directory, read-write.
            try addClaim(volume, location: loc, hostPath: "data/\(volume)")
            return claimMount(volume, m)
        }
        return try fileBindMount(m, source: source, rel: rel, at: loc)
    }

    /// The mount of a bind from an absolute (or `~`) host path: refused unless the spec allows it or it is a repo's.
    mutating func hostPathMount(_ m: ComposeVolumeMount, source: String, at loc: SourceLocation) throws -> YValue {
        let repo =
            HostPathName.allowed(source, spec: spec, podPerService: model.podPerService)
            ? nil : model.repoBinds[source]
        guard repo != nil || HostPathName.allowed(source, spec: spec, podPerService: model.podPerService)
        else {
            throw SoError(
                "host path '\(source)' is outside the stack and is not mounted unless the spec allows it",
                hint: HostPathName.optInHint(source), at: loc)
        }
        // The host path becomes a named volume with that path in the spec (deploy init wrote it for a
        // plain compose file; a laconic stack's spec opts in): a hostPath PersistentVolume, mounted
        // into the kind node.
        let volume = HostPathName.volume(for: source)
        try addClaim(volume, location: loc, hostPath: repo?.path, kind: repo?.kind)
        return claimMount(volume, m)
    }

    /// The mount of a bind from the stack's files (`rel` from the deployment directory): a read-only ConfigMap,
    /// of one file (through subPath) or of a directory.
    mutating func fileBindMount(_ m: ComposeVolumeMount, source: String, rel: String, at loc: SourceLocation) throws
        -> YValue
    {
        let cmName = "\(id)-host-path-\(NameRules.hostPathName(source))"
        let volName = NameRules.dnsLabel("host-path-\(NameRules.hostPathName(source))")
        if m.options?.split(separator: ",").contains("rw") == true {
            state.warnings.append(
                Diagnostic(
                    "'\(source)' is mounted read-only from a ConfigMap; writes in the container fail",
                    hint: "mount it ':ro', or use a named volume for data the container writes", at: loc))
        }
        guard let data = model.files[rel] else {
            try addConfigMap(name: cmName, prefix: rel, location: loc, label: cmName)
            addPodVolume(
                volName,
                .map([
                    (
                        "configMap",
                        .map([("name", .string(cmName)), ("defaultMode", .int(0o755))] + itemsFor(prefix: rel))
                    )
                ]))
            return mount(volName, m.target, readOnly: true)
        }
        let key = ConfigMapKeys.key(for: Path.basename(rel))
        try addConfigMapObject(name: cmName, entries: [(key, data)], location: loc, label: cmName)
        addPodVolume(volName, .map([("configMap", .map([("name", .string(cmName)), ("defaultMode", .int(0o755))]))]))
        return .map([
            ("name", .string(volName)), ("mountPath", .string(m.target)), ("subPath", .string(key)),
            ("readOnly", .bool(true)),
        ])
    }

    /// The mounts of the extra CA certificates, one file each in /etc/ssl/certs.
    func caCertificateMounts() -> [YValue] {
        model.caCertificates.indices.map { i in
            .map([
                ("name", .string("ca-certificates")),
                ("mountPath", .string("/etc/ssl/certs/laconic-extra-ca-\(i).pem")),
                ("subPath", .string("ca-\(i).pem")), ("readOnly", .bool(true)),
            ])
        }
    }

    func mount(_ name: String, _ path: String, readOnly: Bool) -> YValue {
        var m: [(String, YValue)] = [("name", .string(name)), ("mountPath", .string(path))]
        if readOnly { m.append(("readOnly", .bool(true))) }
        return .map(m)
    }

    /// Files of the deployment under `prefix`, keyed for a ConfigMap.
    func filesUnder(_ prefix: String) -> [(path: String, data: Data)] {
        model.files.filter { $0.key.hasPrefix(prefix + "/") }.sorted { $0.key < $1.key }.map {
            (String($0.key.dropFirst(prefix.count + 1)), $0.value)
        }
    }

    /// `items` for a ConfigMap volume whose files sit in subdirectories (keys cannot hold `/`).
    func itemsFor(prefix: String) -> [(String, YValue)] {
        let files = filesUnder(prefix)
        guard files.contains(where: { $0.path.contains("/") }) else { return [] }
        return [
            (
                "items",
                .list(
                    files.map { .map([("key", .string(ConfigMapKeys.key(for: $0.path))), ("path", .string($0.path))]) })
            )
        ]
    }

    mutating func addConfigMap(name: String, prefix: String, location: SourceLocation, label: String) throws {
        let files = filesUnder(prefix)
        try addConfigMapObject(
            name: name, entries: files.map { (ConfigMapKeys.key(for: $0.path), $0.data) }, location: location,
            label: label)
    }

    mutating func addConfigMapObject(name: String, entries: [(String, Data)], location: SourceLocation, label: String)
        throws
    {
        if configMaps.contains(where: { $0.name == name }) || state.configMaps.contains(where: { $0.name == name }) {
            return
        }
        let total = entries.reduce(0) { $0 + $1.1.count }
        if total > Defaults.configMapLimit {
            throw SoError(
                "ConfigMap \(name) would hold \(total / 1024) KiB, over Kubernetes' 1 MiB limit",
                hint: "mount large files from a named volume instead of a host path or configmap", at: location)
        }
        var data: [(String, YValue)] = []
        var binary: [(String, YValue)] = []
        for (k, v) in entries {
            if let text = String(data: v, encoding: .utf8), !text.contains("\0") {
                data.append((k, .string(text)))
            } else {
                binary.append((k, .string(v.base64EncodedString())))
            }
        }
        var body: [(String, YValue)] = []
        if !data.isEmpty { body.append(("data", .map(data))) }
        if !binary.isEmpty { body.append(("binaryData", .map(binary))) }
        configMaps.append(
            KubeObject(
                .configMap, name: name, namespace: state.namespace,
                labels: state.labels() + [("configmap-label", NameRules.labelValue(label))], body: body))
    }

    /// A PVC for a named volume: dynamic for `null` in the spec, bound to a hostPath PV for a path (the
    /// spec's, else `hostPath`, relative to the deployment directory). Its parts in functions of their own: it
    /// sits at the bottom of a render's deepest stack (see `build()`).
    mutating func addClaim(
        _ volume: String, location: SourceLocation, hostPath defaultPath: String? = nil,
        kind defaultKind: HostPathKind? = nil
    ) throws {
        usesClaims = true
        let name = "\(id)-\(NameRules.dnsLabel(volume))"
        if claims.contains(where: { $0.name == name }) || state.claims.contains(where: { $0.name == name }) { return }
        let specEntry = spec.volumes.first { $0.name == volume }
        if specEntry == nil && defaultPath == nil { warnUnlisted(volume, at: location) }
        let storage = try claimStorage(volume)
        let labels = state.labels() + [("volume-label", NameRules.labelValue(name))]
        var claimSpec: [(String, YValue)] = [
            ("accessModes", .list([.string("ReadWriteOnce")])),
            ("resources", .map([("requests", .map([("storage", .string(storage))]))])),
        ]
        if let path = specEntry?.path ?? defaultPath {
            let at = specEntry.map { SourceLocation(file: spec.path, line: $0.line) } ?? location
            try addPathVolume(
                name, volume: volume, path: path, storage: storage, labels: labels, kind: defaultKind, at: at)
            claimSpec.append(("storageClassName", .string("manual")))
            claimSpec.append(("volumeName", .string(name)))
        }
        claims.append(
            KubeObject(
                .persistentVolumeClaim, name: name, namespace: state.namespace, labels: labels,
                body: [("spec", .map(claimSpec))]))
    }

    /// The warning for a named volume the spec does not list.
    mutating func warnUnlisted(_ volume: String, at location: SourceLocation) {
        state.warnings.append(
            Diagnostic(
                "named volume '\(volume)' is not in the spec's volumes; it gets a default \(Defaults.volumeSize) claim",
                hint: "add '\(volume):' under volumes: in the spec", at: location))
    }

    /// A claim's size: the spec's for the volume, else its size for every volume, else the default.
    func claimStorage(_ volume: String) throws -> String {
        let size = spec.sections.resources.volumeStorage[volume] ?? spec.sections.resources.volumeStorageGlobal
        guard let s = size else { return Defaults.volumeSize }
        guard let q = Quantity.bytes(s, binaryLetters: false) else {
            throw SoError(
                "storage size '\(s)' of volume '\(volume)' is not a size", hint: "write e.g. 10Gi",
                at: SourceLocation(file: spec.path))
        }
        return q
    }

    /// The hostPath PersistentVolume `name` that a path volume's claim binds to, on the node that holds the path.
    mutating func addPathVolume(
        _ name: String, volume: String, path: String, storage: String, labels: [(String, String)],
        kind defaultKind: HostPathKind?, at loc: SourceLocation
    ) throws {
        let hostPath = nodePath(volume: volume, path: path)
        // The data is on that node's disk: its pods go there and only there.
        let node = try volumeNode(volume, path: path, at: loc)
        // A file or a socket needs its own type: the kubelet refuses it where a directory is expected.
        let type = (model.hostPathKinds[volume] ?? defaultKind ?? .directory).hostPathType
        persistentVolumes.append(
            KubeObject(
                .persistentVolume, name: name, labels: labels,
                body: [
                    (
                        "spec",
                        .map(
                            [
                                ("storageClassName", .string("manual")),
                                ("capacity", .map([("storage", .string(storage))])),
                                ("accessModes", .list([.string("ReadWriteOnce")])),
                                ("persistentVolumeReclaimPolicy", .string("Retain")),
                                (
                                    "hostPath",
                                    .map([("path", .string(hostPath))] + (type.map { [("type", .string($0))] } ?? []))
                                ),
                            ] + (node.map { [("nodeAffinity", Self.onNode($0))] } ?? []))
                    )
                ]))
    }

    /// The node that holds a path volume's directory: the spec's `volume-node:`, else the one start found (the kind
    /// cluster's node with the mounts, or a cluster's only node), else on kind the deployment's own cluster's
    /// node. A `deploy-to: k8s` path names no node by itself (the path is on the machine that runs `so`): refused.
    func volumeNode(_ volume: String, path: String, at loc: SourceLocation) throws -> String? {
        if let node = spec.volumeNode { return node }
        switch state.options.volumeNode {
        case .node(let node)?: return node
        case .unknown?: return nil
        case nil: break
        }
        guard model.deployTo == .k8s else {
            return KindConfig.mountNode(
                cluster: spec.kindClusterName ?? model.identity.clusterID, workers: spec.kindWorkers)
        }
        throw SoError(
            "volume '\(volume)' is the path \(path), and deploy-to k8s names no node that holds it: its pods would get "
                + "an empty directory on whichever node they land",
            hint: "name the node with 'volume-node: NODE' in \(spec.path) ('kubectl get nodes' lists them), "
                + "or make it a dynamic volume (volumes: {\(volume): } without a path)",
            at: loc)
    }

    /// A PersistentVolume's node affinity to one node, by its hostname label.
    static func onNode(_ node: String) -> YValue {
        .map([
            (
                "required",
                .map([
                    (
                        "nodeSelectorTerms",
                        .list([
                            .map([
                                (
                                    "matchExpressions",
                                    .list([
                                        .map([
                                            ("key", .string("kubernetes.io/hostname")), ("operator", .string("In")),
                                            ("values", .list([.string(node)])),
                                        ])
                                    ])
                                )
                            ])
                        ])
                    )
                ])
            )
        ])
    }

    /// Where a spec volume path is seen by the node: under /mnt on kind (through kind-config extraMounts), as-is elsewhere.
    func nodePath(volume: String, path: String) -> String {
        let abs = path.hasPrefix("/") ? Path.normalize(path) : Path.absolute(path, relativeTo: model.directory)
        guard model.deployTo == .k8sKind else { return abs }
        return KindConfig.nodePath(volume: volume, hostPath: abs, mountRoot: spec.kindMountRoot.map(Path.normalize))
    }
}
