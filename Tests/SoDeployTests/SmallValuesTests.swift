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

    /// The stack size of the thread below, in KiB. In a debug build the path needs 97-112 KiB, before issue 67 and
    /// after it alike: the layout before died at 104 KiB and below and passed at 112; this one dies at 96 and passes
    /// at 112. Its frames, not the values' sizes, set the depth (PodBuilder's `container` and `build` and
    /// RenderState's `renderPod` take 14-21 KiB each), so this size guards the path from growing; it does not tell
    /// the layouts apart. `SO_STACK_TEST_KIB` sets another size (a size too small kills the process).
    static var stackKiB: Int { ProcessInfo.processInfo.environment["SO_STACK_TEST_KIB"].flatMap(Int.init) ?? 160 }

    /// The deepest load path on a thread with a small stack, in a debug build: a laconic stack with every section
    /// of the spec set, its spec read and planned as `deploy create` does, its deployment directory read into the
    /// model and rendered. Too large a value copied down the path overflows the stack: the process dies with
    /// SIGSEGV, and the test run fails with it (a crash cannot be caught, so it is this test's failure).
    @Test func theDeepestLoadPathRunsOnASmallStack() async throws {
        let h = try Harness()
        try h.tmp.write("files/creds.env", "DEEP_CRED=1\n")
        try h.tmp.write("files/ca.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
        try h.tmp.write(
            "spec.yml", Self.everySection(stack: Harness.laconicStackReal("observe"), files: h.path("files")))
        let created = try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep"))
        let ctx = h.ctx
        let (specPath, dir, identity) = (h.path("spec.yml"), created.directory, created.deployment)
        let (workers, files, objects) = try await Self.onThread(stackKiB: Self.stackKiB) {
            let create = CreateAction(ctx)
            let spec = try create.loadSpec(specPath, ttl: "4h")
            let stack = try create.resolveStack(spec, specPath: specPath, req: CreateRequest(specFile: specPath))
            let plan = try DeploymentPlanner(ctx: ctx, spec: spec, stack: stack, directory: dir).plan(
                identity: identity, includeIdentity: true)
            let (model, manifest) = try RenderAction(ctx).load(dir, placeholderSecrets: true)
            return (model.spec.kindWorkers, plan.files.count, manifest.objects.count)
        }
        #expect(workers == 2 && files > 10 && objects > 20, "\(workers) workers, \(files) files, \(objects) objects")
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
