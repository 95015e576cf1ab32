import Foundation
import SoActions
import SoBasics
import SoStack
import SoTestSupport
import Testing

@testable import SoDeploy
@testable import SoRender

/// The large values of the load path kept small (issue 67): a `Spec` of 36 stored keys was copied by value through
/// the load path, and one more stored `Int` made the debug test binary die with SIGSEGV in unrelated loading code,
/// a thread's stack outgrown. The spec's keys, and the other values passed down deep call chains, now sit behind
/// copy-on-write boxes: a copy is a pointer.
@Suite struct SmallValuesTests {
    /// Every key of a spec set, on laconic's layout (the observe stack of the repository's fixtures).
    static func everySection(stack: String, files: String) -> String {
        """
        stack: \(stack)
        deploy-to: k8s-kind
        image-registry: registry.internal:5000
        image-pull-secret: {server: registry.internal:5000, username: deep, token-env: DEEP_REGISTRY_TOKEN}
        image-pull-policy: IfNotPresent
        image-overrides:
          prober: mirror.internal/blackbox-exporter:v0.25.0
        config:
          GF_SERVER_ROOT_URL: https://observe.example.org
          OBSERVE_ALERT_IDS: a,b
          OBSERVE_RPC_KEY: $generate:hex:16$
        credentials-files: [\(files)/creds.env]
        network:
          ports:
            scraper: ['9090']
            prober: ['9115']
            head-exporter: ['5000']
            dash: ['3000']
          http-proxy:
            - host-name: observe.example.org
              routes:
                - {path: /, proxy-to: dash:3000}
                - {path: /metrics, proxy-to: scraper:9090}
          tls: {issuer: letsencrypt}
          acme-email: ops@example.org
        volumes:
          scrape_data:
          dash_storage:
        configmaps: {}
        secrets: {}
        resources:
          containers:
            reservations: {cpus: '0.5', memory: 256M}
            limits: {cpus: '1', memory: 1G}
          volumes:
            reservations: {storage: 2Gi}
        security:
          pod-security: baseline
          capabilities: [NET_ADMIN]
        runtime-class: runc
        replicas: 2
        namespace: deep-stack
        annotations:
          team.example.org/owner: observability
        labels:
          team: observability
        node-affinities:
          - {label: nodetype, value: observe}
        node-tolerations:
          - {key: dedicated, value: observe}
        kind-cluster-name: deep
        kind-mount-root: /srv/kind
        kind-node-image: kindest/node:v1.31.0
        kind-workers: 2
        caddy-ingress-image: mirror.internal/caddy-ingress:v0.2
        wait-image: mirror.internal/busybox:1.36
        maintenance-service: dash
        external-services:
          upstream-db: {host: db.example.org, port: 5432}
        ca-certificates: [\(files)/ca.pem]
        secret-env: [DEEP_TOKEN]
        ingress-class: nginx
        ttl: 4h
        egress: [10.20.0.0/16]
        egress-ports: [443]
        quota: {cpu: '4', memory: 8G, pods: 20}
        profiles: [full]
        host-gateway: 172.18.0.1
        volume-node: worker-1
        replica-spread: hard
        record-history: 5
        workspace: {service: head-exporter, path: /workspace, idle: 2h, agent: deep}
        agents:
          deep: {task: 'deep --print "$TASK"', secret-env: [DEEP_API_KEY], egress: [10.40.0.0/16]}

        """
    }

    /// The most of a thread's stack the deepest load path may use, in KiB, in a debug build (measured, not run on a
    /// thread that small: `StackProbe`). It guards the path's frames and the values on it alike: a function on the
    /// path whose frame grows (a debug build gives each local and temporary a slot of its own, so a long function
    /// with many of them is the usual culprit), or a large value copied onto the path again, pushes it over. The
    /// path used 93 KiB before its frames were split (`PodBuilder.container` alone took 20 KiB), 49 KiB after;
    /// `RenderState`'s inputs stored inline again (352 bytes more in each copy) took it to 68 KiB.
    static let stackBudgetKiB = 56

    /// The deepest load path in a debug build: a laconic stack with every section of the spec set, its spec read
    /// and planned as `deploy create` does, its deployment directory read into the model and rendered; the most of
    /// its thread's stack it used is held under `stackBudgetKiB`. The second run is measured: the first pays for
    /// the runtime's one-time work (type metadata, key paths), which other tests of the process may have done
    /// already. `SO_STACK_TEST_KIB` runs it once on a thread of that stack size instead (too small a size kills
    /// the process with SIGSEGV): what a real thread needs, run alone in a process of its own
    /// (`soPackageTests.xctest --testing-library swift-testing --filter theDeepestLoadPath`). In a sanitizer's build
    /// it runs unmeasured, on a 2 MiB stack (`StackProbe.sanitized`).
    @Test func theDeepestLoadPathRunsOnASmallStack() async throws {
        let h = try Harness()
        try h.tmp.write("files/creds.env", "DEEP_CRED=1\n")
        try h.tmp.write("files/ca.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
        try h.tmp.write(
            "spec.yml", Self.everySection(stack: Harness.laconicStackReal("observe"), files: h.path("files")))
        let created = try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep"))
        let ctx = h.ctx
        let (specPath, dir, identity) = (h.path("spec.yml"), created.directory, created.deployment)
        let path: @Sendable () throws -> [Int] = {
            let files = try Self.plannedFiles(ctx, specPath: specPath, directory: dir, identity: identity)
            let (model, manifest) = try RenderAction(ctx).load(dir, placeholderSecrets: true)
            return [model.spec.kindWorkers, files, manifest.objects.count]
        }
        if let kib = ProcessInfo.processInfo.environment["SO_STACK_TEST_KIB"].flatMap(Int.init) {
            _ = try await Self.onThread(stackKiB: kib, path)
            return
        }
        if StackProbe.sanitized {
            let counts = try await Self.onThread(stackKiB: 2048, path)
            #expect(counts[0] == 2 && counts[1] > 10 && counts[2] > 20, "workers, files, objects: \(counts)")
            print("the deepest load path ran; its stack is not measured in a sanitizer's build")
            return
        }
        let (_, first) = try await Self.onThread(stackKiB: 512) { try StackProbe.deepest(path) }
        let (counts, used) = try await Self.onThread(stackKiB: 512) { try StackProbe.deepest(path) }
        #expect(counts[0] == 2 && counts[1] > 10 && counts[2] > 20, "workers, files, objects: \(counts)")
        print("the deepest load path: \(used / 1024) KiB of stack (\(first / 1024) KiB on its first run)")
        #expect(
            used <= Self.stackBudgetKiB * 1024,
            "the deepest load path used \(used / 1024) KiB of its thread's stack, over its \(Self.stackBudgetKiB) KiB")
    }

    /// The spec read and planned as `deploy create` does (in a function of its own, so that the test's frame
    /// below the path holds the locals of neither half): how many files the plan writes.
    static func plannedFiles(_ ctx: SoContext, specPath: String, directory: String, identity: DeploymentFile)
        throws -> Int
    {
        let create = CreateAction(ctx)
        let spec = try create.loadSpec(specPath, ttl: "4h")
        let stack = try create.resolveStack(spec, specPath: specPath, req: CreateRequest(specFile: specPath))
        let plan = try DeploymentPlanner(ctx: ctx, spec: spec, stack: stack, directory: directory).plan(
            identity: identity, includeIdentity: true)
        return plan.files.count
    }

    /// `body` on a thread of its own whose stack is `stackKiB` KiB.
    static func onThread<T: Sendable>(stackKiB: Int, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { done in
            let thread = Thread { done.resume(with: Result { try body() }) }
            thread.stackSize = stackKiB * 1024
            thread.start()
        }
    }

    /// What a copy of each costs: a pointer, or a few, rather than hundreds of bytes of a thread's stack. The values
    /// boxed for issue 67 are held to 400 bytes; the others are printed beside them.
    @Test func theValuesPassedDownDeepChainsAreSmall() {
        let boxed: [(String, Int)] = [
            ("Spec", MemoryLayout<Spec>.size), ("DeploymentModel", MemoryLayout<DeploymentModel>.size),
            ("RenderState", MemoryLayout<RenderState>.size), ("PodBuilder", MemoryLayout<PodBuilder>.size),
            ("ConnectedDeployment", MemoryLayout<ConnectedDeployment>.size),
        ]
        let others: [(String, Int)] = [
            ("SpecFields (in Spec's box)", MemoryLayout<SpecFields>.size),
            ("SpecSections (in Spec's box)", MemoryLayout<SpecSections>.size),
            ("SoContext", MemoryLayout<SoContext>.size), ("ResolvedStack", MemoryLayout<ResolvedStack>.size),
            ("DeploymentPlanner", MemoryLayout<DeploymentPlanner>.size),
            ("ComposeComponent", MemoryLayout<ComposeComponent>.size),
        ]
        print((boxed + others).map { "\($0.0): \($0.1) bytes" }.joined(separator: "\n"))
        #expect(boxed.allSatisfy { $0.1 <= 400 }, "\(boxed)")
    }
}
