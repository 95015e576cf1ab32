import Foundation
import SoActions
import SoBasics
import SoCompose
import SoKube
import SoRender
import SoStack

/// The stack's local images: their IDs on this host are read at every start (they go into the pod template
/// of the Deployments that run them, `stamp`, so a rebuilt image rolls its pods), and each is loaded into the
/// kind node when the node lacks it or has an older build (image IDs compared).
struct ImageLoader: Sendable {
    let ctx: SoContext

    /// The pod-template annotation holding the IDs of the local images a Deployment runs.
    static let annotation = "so.dev/image-ids"

    /// The images of the workloads that this host builds: `:local` tags, spec overrides, and every compose
    /// service with build:.
    static func localImages(manifest: Manifest, model: DeploymentModel) -> [String] {
        var images: [String] = []
        for o in manifest.objects where o.isKind(.deployment) || o.isKind(.job) {
            for image in Self.images(in: o.value) where !images.contains(image) { images.append(image) }
        }
        let overrides = Set(model.spec.sections.imageOverrides.map(\.image))
        let built = Set(
            (model.pods + model.jobs).flatMap(\.compose.services).filter { $0.build != nil }
                .map { $0.image ?? LocalImage.name(stack: model.stackName, service: $0.name) })
        return images.filter { $0.hasSuffix(":local") || overrides.contains($0) || built.contains($0) }
    }

    /// The local images' IDs on this host (`docker image inspect`, or the kind provider's engine), in order. An
    /// image not built here is left out (a `:local` one with a warning); without the engine there are none (warned). `also` names images
    /// loaded when this host has them (the spec's ingress controller image, for a host that cannot pull it).
    func ids(manifest: Manifest, model: DeploymentModel, also: [String] = []) async -> [(image: String, id: String)] {
        var out: [(image: String, id: String)] = []
        let images = Self.localImages(manifest: manifest, model: model)
        for image in images + also.filter({ !images.contains($0) }) {
            let mine: ProcessResult
            do {
                let argv = [ctx.kindProvider.cli, "image", "inspect", "--format", "{{.Id}}", image]
                mine = try await ctx.processes.run(argv, workingDirectory: nil, environment: nil, timeout: 30)
            } catch {
                let engine = ctx.kindProvider.cli
                let hint =
                    engine == "docker"
                    ? "install Docker to load locally built images into kind"
                    : "install \(engine), or unset KIND_EXPERIMENTAL_PROVIDER"
                ctx.diagnostics.warn("cannot check local image \(image): \(engine) is not available", hint: hint)
                return []
            }
            guard mine.exitCode == 0, !mine.stdout.trimmedWhitespace.isEmpty else {
                if image.hasSuffix(":local") {
                    ctx.diagnostics.warn(
                        "image \(image) is not built on this host", hint: "run 'so build-containers' before start")
                }
                continue
            }
            out.append((image, mine.stdout.trimmedWhitespace))
        }
        return out
    }

    /// Loads into the kind node each image whose copy there is not the host's. The IDs are compared without
    /// their `sha256:` prefix (crictl shows it; podman's inspect does not).
    /// Returns the images it loaded.
    @discardableResult
    func load(_ ids: [(image: String, id: String)], cluster: String, progress: ProgressReporter) async throws
        -> [String]
    {
        let engine = ctx.kindProvider.cli
        var loaded: [String] = []
        for (image, localID) in ids {
            let inspect = [
                engine, "exec", "\(cluster)-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
                "{{.status.id}}", image,
            ]
            // An image the node cannot show is loaded (the load reports a failure of its own).
            let node = try? await ctx.processes.run(inspect, workingDirectory: nil, environment: nil, timeout: 30)
            if let node, node.exitCode == 0, Self.digest(node.stdout) == Self.digest(localID) { continue }
            progress.phase("loading image", "\(image) into kind cluster \(cluster)")
            if engine == "docker" {
                try await kind(["load", "docker-image", image, "--name", cluster], image: image, cluster: cluster)
            } else {
                try await viaArchive(image, id: localID, engine: engine, cluster: cluster)
            }
            loaded.append(image)
        }
        return loaded
    }

    /// `kind load docker-image` reads the image through the docker CLI whatever the provider, so an image of
    /// podman's or nerdctl's store goes through an archive: `<engine> save`, then `kind load image-archive`.
    /// podman names a short reference `localhost/…` in its archive, which the node would not match to the pod's
    /// image: the archive carries the qualified name the node resolves (`docker.io/…`), tagged for the save only.
    private func viaArchive(_ image: String, id: String, engine: String, cluster: String) async throws {
        let root = ctx.temporaryRoot
        let dir = try ctx.fs.temporaryDirectory(beside: Path.join(root, "so-image"), prefix: "so-image")
        let archive = Path.join(dir, "image.tar")
        defer {
            // best effort: a scratch dir in the temp dir
            try? ctx.fs.remove(archive)
            try? ctx.fs.remove(dir)
        }
        var ref = image
        var untag: [String]?
        if engine == "podman", ImageReference.qualified(image) != image {
            ref = ImageReference.qualified(image)
            let inspect = [engine, "image", "inspect", "--format", "{{.Id}}", ref]
            // Not there (or not readable): tagged below, and untagged after the save.
            let there = try? await ctx.processes.run(inspect, workingDirectory: nil, environment: nil, timeout: 30)
            if there?.exitCode != 0 || Self.digest(there?.stdout ?? "") != Self.digest(id) {
                try await engineRun([engine, "tag", image, ref], what: "tag image \(image) as \(ref)")
                if there?.exitCode != 0 { untag = [engine, "untag", image, ref] }
            }
        }
        let loaded: Result<Void, Error>
        do {
            try await engineRun([engine, "save", "-o", archive, ref], what: "save image \(image) from \(engine)")
            try await kind(["load", "image-archive", archive, "--name", cluster], image: image, cluster: cluster)
            loaded = .success(())
        } catch { loaded = .failure(error) }
        if let untag {
            let r = try? await ctx.processes.run(untag, workingDirectory: nil, environment: nil, timeout: 30)
            if r?.exitCode != 0 {
                ctx.diagnostics.warn(
                    "cannot remove the tag \(ref) that loading image \(image) added",
                    hint: "remove it with '\(untag.joined(separator: " "))'")
            }
        }
        try loaded.get()
    }

    private func engineRun(_ argv: [String], what: String) async throws {
        let r = try await ctx.processes.run(argv, workingDirectory: nil, environment: nil, timeout: 600)
        guard r.exitCode == 0 else {
            throw SoError("cannot \(what): \(r.lastErrorLine)", hint: "check '\(argv[0]) image ls' lists it")
        }
    }

    private func kind(_ args: [String], image: String, cluster: String) async throws {
        let r = try await ctx.processes.run(
            ["kind"] + args, workingDirectory: nil, environment: ctx.environment, timeout: 600)
        guard r.exitCode == 0 else {
            throw SoError(
                "cannot load image \(image) into kind cluster \(cluster): \(r.lastErrorLine)",
                hint: "run 'kind \(args.joined(separator: " "))' by hand to see more")
        }
    }

    static func digest(_ id: String) -> String {
        let t = id.trimmedWhitespace
        return t.hasPrefix("sha256:") ? String(t.dropFirst(7)) : t
    }

    /// `objects` with each Deployment that runs a local image annotated, in its pod template, with the
    /// IDs of those images: a rebuilt image (a new ID) changes the Deployment, which is applied and rolls.
    static func stamp(_ objects: [KubeObject], ids: [(image: String, id: String)]) -> [KubeObject] {
        guard !ids.isEmpty else { return objects }
        return objects.map { o in
            guard o.isKind(.deployment) else { return o }
            let used = Set(images(in: o.value))
            let mine = ids.filter { used.contains($0.image) }
            guard !mine.isEmpty else { return o }
            var out = o
            let value = mine.map { "\($0.image)@\($0.id)" }.joined(separator: ",")
            let path: ArraySlice<String> = ["template", "metadata", "annotations", annotation]
            out.body = out.body.map { key, v in key == "spec" ? (key, setting(v, path, .string(value))) : (key, v) }
            return out
        }
    }

    /// `value` with `path` (mapping keys, made when missing) set to `leaf`.
    static func setting(_ value: YValue, _ path: ArraySlice<String>, _ leaf: YValue) -> YValue {
        guard let key = path.first else { return leaf }
        var pairs: [(String, YValue)] = []
        if case .map(let p) = value { pairs = p }
        if let i = pairs.firstIndex(where: { $0.0 == key }) {
            pairs[i].1 = setting(pairs[i].1, path.dropFirst(), leaf)
        } else {
            pairs.append((key, setting(.null, path.dropFirst(), leaf)))
        }
        return .map(pairs)
    }

    static func images(in value: YValue) -> [String] {
        var out: [String] = []
        func walk(_ v: YValue) {
            switch v {
            case .map(let pairs):
                for (k, x) in pairs {
                    if k == "image", case .string(let s) = x { out.append(s) } else { walk(x) }
                }
            case .list(let items): items.forEach(walk)
            default: break
            }
        }
        walk(value)
        return out
    }
}
