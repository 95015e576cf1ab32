import Foundation
import SoBasics
import SoKube
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

@Suite struct StartTests {
    @Test func appliesInOrderAndWaits() async throws {
        let c = try await ClusterHarness(appendToSpec: "")
        // While the workloads go out, the deployment's Lease is held by this run.
        final class Seen: @unchecked Sendable { var holder: String? }
        let seen = Seen()
        let cluster = c.cluster
        let id = c.id
        cluster.beforeCall = { call in
            if call.hasPrefix("apply Deployment") {
                seen.holder =
                    cluster.object("Lease", "so-deployment-lock", namespace: id)?.at("spec", "holderIdentity")?.string
            }
        }
        let report = try await c.start()
        #expect(seen.holder?.hasPrefix("localhost:") == true, "\(String(describing: seen.holder))")
        let writes = c.cluster.calls.filter { !$0.hasPrefix("get ") && !$0.hasPrefix("list ") }.map {
            $0.split(separator: " ").prefix(2).joined(separator: " ")
        }
        // The namespace is the first request (a Lease's create in a namespace the API server has not seen waits
        // 50 ms before it is refused), then the Lease in it; then the record's first revision (who writes it
        // asked first, and the Namespace told who wrote last), before anything is applied; then its labels with
        // what pods use (in parallel), then the workloads; then the record's result, and the Lease goes.
        #expect(
            Array(writes.prefix(5)) == [
                "create Namespace", "create Lease", "create SelfSubjectReview", "create Secret", "patch Namespace",
            ])
        #expect(
            writes.dropFirst(5).prefix(5).sorted() == [
                "apply ConfigMap", "apply ConfigMap", "apply Namespace", "apply PersistentVolumeClaim", "apply Service",
            ])
        #expect(writes.dropFirst(10).prefix(2).sorted() == ["apply Deployment", "apply Job"])
        #expect(writes.suffix(2) == ["patch Secret", "delete Lease"] && writes.count == 14, "\(writes)")
        // A namespace this start created holds nothing to read: no Job to look for, no Namespace or Secret.
        #expect(!c.cluster.calls.contains { $0.hasPrefix("get ") }, "\(c.cluster.calls)")
        // The lock is released at the end.
        #expect(c.cluster.object("Lease", "so-deployment-lock", namespace: c.id) == nil)
        #expect(report.namespace == c.id)
        #expect(c.h.console.stdout.contains("started \(c.id) in namespace \(c.id)"))
        let ns = try #require(c.cluster.object("Namespace", c.id))
        #expect(ns.annotations["laconic.com/deployment-dir"] == c.h.path("dep"))
    }

    /// A volume with a path in the spec is a PersistentVolume and a claim bound to it by name. The volume is in
    /// before the claim goes out: a claim the controller reads first stays Pending until its resync, 15 s later
    /// (seen on the real node when the two went in parallel).
    @Test func aPathVolumeIsInBeforeTheClaimBoundToIt() async throws {
        let c = try await ClusterHarness.withPathVolume()
        final class Seen: @unchecked Sendable { var volumeAtClaim: Bool? }
        let seen = Seen()
        let cluster = c.cluster
        // The volume's apply is slow: a claim sent beside it would go out before it is in.
        cluster.beforeCallAsync = { call in
            if call.hasPrefix("apply PersistentVolume "), !call.hasPrefix("apply PersistentVolumeClaim") {
                try? await Task.sleep(nanoseconds: 100_000_000)
            }
        }
        cluster.beforeCall = { call in
            if call.hasPrefix("apply PersistentVolumeClaim") {
                seen.volumeAtClaim = cluster.all.contains { $0.0.type.kind == "PersistentVolume" }
            }
        }
        _ = try await c.start()
        #expect(seen.volumeAtClaim == true, "\(cluster.calls)")
    }

    /// A path volume whose claim went (with its namespace, on `stop --delete-namespace`, or by hand) is Released,
    /// naming the old claim's UID. The next start releases it to the claim it makes under the same name (on the
    /// real node that claim had stayed Pending and the start timed out), even when the volume is otherwise as
    /// rendered; a volume a claim of another namespace released is left as it is.
    @Test func aVolumeKeptFromBeforeIsReleasedToTheNewClaimOfItsName() async throws {
        let c = try await ClusterHarness.withPathVolume()
        _ = try await c.start()
        let volume = "\(c.id)-web-data"
        // What the controller wrote, which the server keeps through so's apply.
        final class Held: @unchecked Sendable { var claimRef: JSON = .null }
        let held = Held()
        c.cluster.onApply = { json in
            guard json["kind"]?.string == "PersistentVolume", case .object(var o) = json,
                case .object(var spec)? = o["spec"]
            else { return }
            spec["claimRef"] = held.claimRef
            o["spec"] = .object(spec)
            o["status"] = .object(["phase": .string("Released")])
            json = .object(o)
        }
        for (claimNamespace, released) in [(c.id, true), ("elsewhere", false)] {
            held.claimRef = .object([
                "kind": .string("PersistentVolumeClaim"), "namespace": .string(claimNamespace),
                "name": .string(volume), "uid": .string("old-claim"), "resourceVersion": .string("7"),
            ])
            let state = JSON.object([
                "spec": .object(["claimRef": held.claimRef]), "status": .object(["phase": .string("Released")]),
            ])
            _ = try await c.cluster.patch(
                .persistentVolume, name: volume, namespace: nil, mergePatch: Data(state.yValue.json(pretty: false).utf8)
            )
            let before = c.cluster.calls.count
            _ = try await c.start(wait: false)
            let patched = c.cluster.calls[before...].filter { $0 == "patch PersistentVolume \(volume)" }
            #expect(patched.count == (released ? 1 : 0), "\(claimNamespace): \(c.cluster.calls[before...])")
            let claimRef = try #require(c.cluster.object("PersistentVolume", volume)?.at("spec", "claimRef"))
            #expect(
                (claimRef["uid"] == nil) == released && claimRef["name"]?.string == volume
                    && claimRef["namespace"]?.string == claimNamespace, "\(claimNamespace): \(claimRef)")
        }
    }

    /// A start that makes a value draws its randomness once: the values to make are made under the lock,
    /// once, and the unchanged-test reads what was made.
    @Test func aStartDrawsEntropyOnceForAValueToMake() async throws {
        final class Counting: Entropy, @unchecked Sendable {
            let lock = NSLock()
            var bytes = 0
            func bytes(_ count: Int) -> [UInt8] {
                lock.withLock { bytes += count }
                return SeededEntropy().bytes(count)
            }
        }
        let one = Counting()
        _ = try #require(try GenerateToken.parse("$generate:hex:16$")).generate(using: one)
        let c = try await ClusterHarness(config: ["SESSION=$generate:hex:16$"])
        let counting = Counting()
        var ctx = c.ctx
        ctx.entropy = counting
        _ = try await StartAction(ctx).run(StartRequest(directory: "dep", cluster: c.options, progress: .plain))
        // The value once, and the Lease's holder tag (4 bytes).
        #expect(
            one.bytes > 0 && counting.bytes == one.bytes + 4,
            "\(counting.bytes) bytes drawn; one value takes \(one.bytes)")
        // A dry run draws none: it names the value start would make.
        _ = try await StartAction(ctx).run(
            StartRequest(directory: "dep", cluster: c.options, progress: .plain, dryRun: true))
        #expect(counting.bytes == one.bytes + 4)
    }

    @Test func generatedSecretsAreMadeOnceAndNeverPrinted() async throws {
        let c = try await ClusterHarness(appendToSpec: "")
        try c.h.tmp.write(
            "dep/spec.yml",
            try c.h.read("dep/spec.yml").replacingOccurrences(
                of: "config:\n", with: "config:\n  API_TOKEN: $generate:hex:16$\n  PIN: pin-$generate:alnum:6$\n"))
        _ = try await c.start()
        let secret = try #require(c.cluster.object("Secret", "\(c.id)-generated-secrets", namespace: c.id))
        let token = try #require(
            secret["data"]?["API_TOKEN"]?.string.flatMap { Data(base64Encoded: $0) }.map {
                String(decoding: $0, as: UTF8.self)
            })
        let pin = try #require(
            secret["data"]?["PIN"]?.string.flatMap { Data(base64Encoded: $0) }.map {
                String(decoding: $0, as: UTF8.self)
            })
        #expect(token.count == 32 && token.allSatisfy(\.isHexDigit))
        #expect(pin.hasPrefix("pin-") && pin.count == 10)
        _ = try await c.start()
        let again = try #require(c.cluster.object("Secret", "\(c.id)-generated-secrets", namespace: c.id))
        #expect(again["data"] == secret["data"])
        for text in [
            c.h.console.stdout, c.h.console.stderr, try c.h.read("dep/config.env"), try c.h.read("dep/spec.yml"),
        ] {
            #expect(!text.contains(token) && !text.contains(pin))
        }
        let rotated = try await ObserveAction(c.ctx).rotateSecrets(
            "dep", cluster: c.options, keys: ["PIN"], timeout: 30)
        #expect(rotated == ["PIN"])
        let after = try #require(c.cluster.object("Secret", "\(c.id)-generated-secrets", namespace: c.id))
        #expect(after["data"]?["API_TOKEN"] == secret["data"]?["API_TOKEN"])
        #expect(after["data"]?["PIN"] != secret["data"]?["PIN"])
        #expect(c.cluster.calls.contains("patch Deployment \(c.id)/\(c.id)-deployment"))
        // Its volume is still the deployment's: not reported as left behind.
        #expect(
            !c.ctx.diagnostics.all.contains { $0.message.contains("no longer in the deployment") },
            "\(c.ctx.diagnostics.all)")
        // The restart told the pods the Secret's new revision, as start would stamp it: the next start changes
        // no revision (it re-applies the Deployment, whose applied hash is older, as the same template).
        func revisions() -> String? {
            c.cluster.object("Deployment", "\(c.id)-deployment", namespace: c.id)?.at(
                "spec", "template", "metadata", "annotations", ConfigRevisions.podAnnotation)?.string
        }
        let stamped = revisions()
        #expect(stamped?.contains("secret/\(c.id)-generated-secrets=2") == true, "\(stamped ?? "")")
        _ = try await c.start()
        #expect(revisions() == stamped)
    }

    @Test func secretEnvCopiesHostVariablesIntoTheSecret() async throws {
        let c = try await ClusterHarness(
            appendToSpec: "secret-env: [ANTHROPIC_API_KEY]\n", environment: ["ANTHROPIC_API_KEY": "sk-test-fake-value"])
        _ = try await c.start()
        let secret = try #require(c.cluster.object("Secret", "\(c.id)-generated-secrets", namespace: c.id))
        #expect(secret["data"]?["ANTHROPIC_API_KEY"]?.string == Data("sk-test-fake-value".utf8).base64EncodedString())
        #expect(!c.h.console.stdout.contains("sk-test-fake-value"))
        for f in try c.h.fs.walk(c.h.path("dep")) {
            #expect(try !c.h.read("dep/" + f.relative).contains("sk-test-fake-value"))
        }
    }

    @Test func jobsRunOnceAndRemovedObjectsArePruned() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        let job = "\(c.id)-job-example-migrate"
        #expect(c.cluster.object("Job", job, namespace: c.id) != nil)
        // Remove the job from the stack copy in D, add a stale object the deployment owns.
        try c.h.tmp.write(
            "dep/stack.yml",
            try c.h.read("dep/stack.yml").replacingOccurrences(of: "jobs:\n  - example-migrate\n", with: ""))
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "ConfigMap", name: "stale", namespace: c.id,
                labels: [("app", c.id), ("app.kubernetes.io/instance", c.id), ("app.kubernetes.io/managed-by", "so")]))
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "ConfigMap", name: "not-ours", namespace: c.id, labels: [("app", "other")]))
        let report = try await c.start()
        #expect(Set(report.pruned) == ["ConfigMap stale", "Job \(job)"])
        #expect(c.cluster.object("ConfigMap", "not-ours", namespace: c.id) != nil)
    }

    @Test func updateEnvsAppliesOnlyDeployments() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        try c.h.tmp.write("dep/config.env", try c.h.read("dep/config.env") + "NEW_SETTING=on\n")
        let before = c.cluster.calls.count
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: c.options, progress: .plain, onlyKinds: ["Deployment"]))
        let writes = c.cluster.calls.dropFirst(before).filter { $0.hasPrefix("apply ") || $0.hasPrefix("create ") }.map
        { $0.split(separator: " ").prefix(2).joined(separator: " ") }
        // The namespace exists: its create is refused, and the Lease locks it; config.env changed, so the record
        // gets a revision.
        #expect(
            writes == [
                "create Namespace", "create Lease", "create SelfSubjectReview", "create Secret", "apply Deployment",
            ])
        // Its ConfigMaps are read (their revisions go into the pod template), never applied nor pruned.
        #expect(
            !c.cluster.calls.dropFirst(before).contains {
                $0.hasPrefix("delete ConfigMap") || $0.hasPrefix("apply ConfigMap")
            })
        let env =
            c.cluster.object("Deployment", "\(c.id)-deployment", namespace: c.id)?.at(
                "spec", "template", "spec", "containers")?.array.first?["env"]?.array ?? []
        #expect(env.contains { $0["name"]?.string == "NEW_SETTING" && $0["value"]?.string == "on" })
    }

    @Test func pruneListsOnlyTheKindsTheLastStartApplied() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        // A new namespace: nothing to prune, nothing listed but what the wait reads (and the Nodes, for its new
        // claim's node).
        #expect(
            !c.cluster.calls.contains {
                $0.hasPrefix("list ") && !$0.hasPrefix("list Deployment") && !$0.hasPrefix("list Job")
                    && $0 != "list Node"
                    && !$0.hasPrefix("list Pod") && !$0.hasPrefix("list PersistentVolumeClaim")
                    && !$0.hasPrefix("list Service") && !$0.hasPrefix("list EndpointSlice")
            }, "\(c.cluster.calls)")
        let ns = try #require(c.cluster.object("Namespace", c.id))
        #expect(ns.annotations["so.dev/kinds"] == "ConfigMap,Deployment,Job,Secret,Service")
        let before = c.cluster.calls.count
        _ = try await c.start()
        let listed = Set(
            c.cluster.calls[before...].filter { $0.hasPrefix("list ") && $0.contains("managed-by=so") }.map {
                String($0.split(separator: " ")[1])
            })
        #expect(
            listed == [
                "ConfigMap", "Deployment", "Job", "Secret", "Service", "PersistentVolumeClaim", "PersistentVolume",
            ], "\(listed)")
    }

    @Test func anExistingNamespaceIsReannotatedAfterTheLock() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        // Someone drops an annotation by hand: the namespace differs from what is rendered.
        c.cluster.update("Namespace", c.id, namespace: nil) { json in
            guard case .object(var o) = json, case .object(var meta)? = o["metadata"],
                case .object(var notes)? = meta["annotations"]
            else { return }
            notes["so.dev/kinds"] = nil
            meta["annotations"] = .object(notes)
            o["metadata"] = .object(meta)
            json = .object(o)
        }
        let before = c.cluster.calls.count
        _ = try await c.start()
        let calls = Array(c.cluster.calls[before...])
        let lock = try #require(calls.firstIndex { $0.hasPrefix("create Lease") })
        let namespace = try #require(calls.firstIndex { $0.hasPrefix("apply Namespace") })
        // The lock first (after the namespace's create, refused), then the Namespace read under it, once.
        #expect(lock == 1 && calls[0] == "create Namespace \(c.id)", "\(calls)")
        // Beside it, the record's revisions (a list).
        #expect(
            calls[2...3].sorted() == [
                "get Namespace \(c.id)",
                "list Secret \(c.id) so.dev/record-of=\(c.id),so.dev/record-part=head",
            ], "\(calls)")
        #expect(calls.filter { $0.hasPrefix("get Namespace") }.count == 1, "\(calls)")
        #expect(lock < namespace, "\(calls)")
        #expect(calls.filter { $0.hasPrefix("apply Namespace") }.count == 1)
        #expect(calls.last == "delete Lease \(c.id)/so-deployment-lock")
    }

    /// A re-start a minute later changes nothing but the Namespace's lifecycle annotations, under the lock:
    /// one merge patch of the times (and the applied hash, so the next start is as quick); a label changed
    /// by hand, or an `expires-at` to drop, takes the full apply.
    @Test func aLaterStartThatChangesNothingRenewsOnlyTheLifecycleAnnotations() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        let startedAt = try #require(c.cluster.object("Namespace", c.id)?.annotations["so.dev/started-at"])
        try await c.ctx.clock.sleep(seconds: 60)
        var before = c.cluster.calls.count
        let report = try await c.start()
        var calls = Array(c.cluster.calls[before...])
        #expect(
            calls.filter { !$0.hasPrefix("list") && !$0.hasPrefix("get") } == [
                "create Namespace \(c.id)", "create Lease \(c.id)/so-deployment-lock", "patch Namespace \(c.id)",
                "delete Lease \(c.id)/so-deployment-lock",
            ], "\(calls)")
        #expect(report.applied.isEmpty && report.unchanged.contains("Namespace \(c.id)"))
        let ns = try #require(c.cluster.object("Namespace", c.id))
        #expect(ns.annotations["so.dev/started-at"] != startedAt && ns.annotations["so.dev/started-at"] != nil)

        // The renewed hash matches: the next start a minute later is as quick.
        try await c.ctx.clock.sleep(seconds: 60)
        before = c.cluster.calls.count
        _ = try await c.start()
        calls = Array(c.cluster.calls[before...])
        #expect(!calls.contains { $0.hasPrefix("apply") }, "\(calls)")

        // A label changed by hand: the Namespace is applied again, under the lock.
        c.cluster.update("Namespace", c.id, namespace: nil) { json in
            guard case .object(var o) = json, case .object(var meta)? = o["metadata"],
                case .object(var labels)? = meta["labels"]
            else { return }
            labels["pod-security.kubernetes.io/enforce"] = .string("privileged")
            meta["labels"] = .object(labels)
            o["metadata"] = .object(meta)
            json = .object(o)
        }
        before = c.cluster.calls.count
        _ = try await c.start()
        calls = Array(c.cluster.calls[before...])
        #expect(
            calls.contains("create Lease \(c.id)/so-deployment-lock") && calls.contains("apply Namespace \(c.id)"),
            "\(calls)")
    }

    /// A ttl taken away: the start that leaves `expires-at` out removes it by name. A renewal (a merge patch)
    /// gave it to another field manager, and the API server's apply would keep it: `cleanup --expired` would
    /// then remove a deployment meant to stay.
    @Test func anExpiryTakenAwayIsRemovedThoughARenewalGaveItAway() async throws {
        let c = try await ClusterHarness()
        func start(ttl: Double?) async throws -> [String] {
            try await c.ctx.clock.sleep(seconds: 60)
            let before = c.cluster.calls.count
            _ = try await StartAction(c.ctx).run(
                StartRequest(directory: "dep", cluster: c.options, progress: .plain, ttl: ttl))
            return Array(c.cluster.calls[before...])
        }
        _ = try await start(ttl: 3600)
        #expect(try await start(ttl: 3600).contains("patch Namespace \(c.id)"), "renewed by a merge patch")
        let calls = try await start(ttl: nil)
        #expect(calls.contains("apply Namespace \(c.id)") && calls.contains("patch Namespace \(c.id)"), "\(calls)")
        #expect(c.cluster.object("Namespace", c.id)?.annotations["so.dev/expires-at"] == nil)
        // Without an expiry to drop, nothing more is sent.
        #expect(try await start(ttl: nil).filter { $0.hasPrefix("patch") }.count == 1, "the renewal alone")
    }

    @Test func aStartThatChangesNothingSendsNothingAndRepairsDrift() async throws {
        let c = try await ClusterHarness()
        let first = try await c.start()
        var before = c.cluster.calls.count
        var report = try await c.start()
        var writes = c.cluster.calls[before...].filter { $0.hasPrefix("apply ") }
        #expect(Array(writes) == [])
        // Everything the first start applied is unchanged, the Namespace included, but the Job (not re-run).
        let expected = first.applied.filter { !$0.hasPrefix("Job ") }
        #expect(expected.count == 6 && report.unchanged.sorted() == expected.sorted(), "\(report.unchanged)")
        #expect(report.applied == [])
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("get Job") })
        #expect(c.h.console.stdout.contains("unchanged 6 objects already as rendered"))

        // Someone edits a ConfigMap by hand: the next start puts it back, and rolls the pods that read it (they
        // may have read the edit: its revision goes up), and sends nothing else.
        let cm = try #require(c.cluster.all.first { $0.0.type.kind == "ConfigMap" }?.0.name)
        c.cluster.update("ConfigMap", cm, namespace: c.id) { json in
            guard case .object(var o) = json else { return }
            o["data"] = .object(["index.html": .string("defaced")])
            json = .object(o)
        }
        before = c.cluster.calls.count
        _ = try await c.start()
        writes = c.cluster.calls[before...].filter { $0.hasPrefix("apply ") }
        #expect(Array(writes) == ["apply ConfigMap \(c.id)/\(cm)", "apply Deployment \(c.id)/\(c.id)-deployment"])
        let revisions =
            c.cluster.object("Deployment", "\(c.id)-deployment", namespace: c.id)?
            .at("spec", "template", "metadata", "annotations", ConfigRevisions.podAnnotation)?.string ?? ""
        #expect(revisions.contains("configmap/\(cm)=2"), "\(revisions)")
        #expect(c.cluster.object("ConfigMap", cm, namespace: c.id)?["data"]?["index.html"]?.string != "defaced")

        // A config change reaches the Deployment only.
        try c.h.tmp.write("dep/config.env", try c.h.read("dep/config.env") + "NEW_SETTING=on\n")
        before = c.cluster.calls.count
        report = try await c.start()
        writes = c.cluster.calls[before...].filter { $0.hasPrefix("apply ") }
        #expect(Array(writes) == ["apply Deployment \(c.id)/\(c.id)-deployment"])
        #expect(report.skipped == ["Job \(c.id)/\(c.id)-job-example-migrate"])
    }

    @Test func jobsAreNotReapplied() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        let report = try await c.start()
        #expect(report.skipped == ["Job \(c.id)/\(c.id)-job-example-migrate"])
        #expect(c.cluster.calls.filter { $0.hasPrefix("apply Job") }.count == 1)
    }

    /// The API server goes away mid-start: exit 69, and the next start converges to the same objects and
    /// keeps the secret values the interrupted run already stored.
    @Test func aStartInterruptedMidwayConverges() async throws {
        let c = try await ClusterHarness(config: ["SESSION=$generate:hex:16$"])
        c.cluster.failures["apply Deployment"] = SoError(
            "cannot reach the API server https://127.0.0.1:6443 (context kind-test): connection refused",
            hint: "is the cluster running?", exitCode: SoError.exitUnreachable)
        await #expect { _ = try await c.start() } throws: { ($0 as? SoError)?.exitCode == SoError.exitUnreachable }
        let secret = try #require(
            c.cluster.object("Secret", "\(c.id)-generated-secrets", namespace: c.id)?.at("data", "SESSION")?.string)
        #expect(c.cluster.object("Deployment", "\(c.id)-deployment", namespace: c.id) == nil)
        c.cluster.failures = [:]
        _ = try await c.start()
        #expect(
            c.cluster.object("Secret", "\(c.id)-generated-secrets", namespace: c.id)?.at("data", "SESSION")?.string
                == secret)
        // Same objects as a start that never failed.
        let clean = try await ClusterHarness(config: ["SESSION=$generate:hex:16$"])
        _ = try await clean.start()
        func shape(_ h: ClusterHarness) -> [String] {
            h.cluster.all.map { "\($0.0.type.kind) \($0.0.name.replacingOccurrences(of: h.id, with: "ID"))" }.sorted()
        }
        #expect(shape(c) == shape(clean))
    }

    @Test func refusesANamespaceOwnedByAnotherDirectory() async throws {
        let c = try await ClusterHarness()
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Namespace", name: c.id,
                annotations: [("laconic.com/deployment-dir", "/elsewhere/dep")]))
        await #expect { _ = try await c.start() } throws: { e in
            let m = (e as? SoError)?.message ?? ""
            return m.contains("namespace \(c.id) belongs to another deployment directory: /elsewhere/dep")
        }
        // Nothing was written but this run's own Lease, taken and given up (the owner is read under it); the
        // namespace's create was refused (it exists).
        #expect(
            c.cluster.calls.filter { !$0.hasPrefix("get") && !$0.hasPrefix("list") } == [
                "create Namespace \(c.id)", "create Lease \(c.id)/so-deployment-lock",
                "delete Lease \(c.id)/so-deployment-lock",
            ], "\(c.cluster.calls)")
        #expect(c.cluster.object("Lease", "so-deployment-lock", namespace: c.id) == nil)
        #expect(c.cluster.object("Namespace", c.id)?.annotations["laconic.com/deployment-dir"] == "/elsewhere/dep")
    }

    @Test func imagePullFailuresNameTheImage() async throws {
        let c = try await ClusterHarness(healthy: false)
        c.cluster.onApply = { json in
            // Pods never become available; the scheduler placed one and the kubelet cannot pull.
            _ = json
        }
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Namespace", name: c.id,
                annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
        var pod = try JSON.parse(
            Data(
                KubeObject(
                    apiVersion: "v1", kind: "Pod", name: "web-1", namespace: c.id,
                    labels: [("app", c.id), ("app.kubernetes.io/instance", c.id)]
                ).json().utf8))
        _ = pod
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Pod", name: "web-1", namespace: c.id,
                labels: [("app", c.id), ("app.kubernetes.io/instance", c.id)]))
        c.cluster.update("Pod", "web-1", namespace: c.id) { p in
            guard case .object(var o) = p else { return }
            o["status"] = .object([
                "containerStatuses": .array([
                    .object([
                        "name": .string("web"), "image": .string("nginx:1.27-alpine"),
                        "state": .object(["waiting": .object(["reason": .string("ImagePullBackOff")])]),
                    ])
                ])
            ])
            p = .object(o)
        }
        pod = .null
        await #expect { _ = try await c.start() } throws: { e in
            (e as? SoError)?.message
                == "pod \(c.id)/web-1 container web cannot pull image nginx:1.27-alpine (ImagePullBackOff)"
        }
    }

    /// A pod being deleted (a rollout's old one, or one start replaced after loading its image) is no problem.
    @Test func aPodBeingDeletedIsNotDiagnosed() async throws {
        let c = try await ClusterHarness(healthy: false)
        func pod(deleting: Bool) throws -> JSON {
            var meta: [String: JSON] = ["name": .string("web-1"), "namespace": .string(c.id)]
            if deleting { meta["deletionTimestamp"] = .string("2026-11-24T06:00:00Z") }
            return .object([
                "metadata": .object(meta),
                "status": .object([
                    "containerStatuses": .array([
                        .object([
                            "name": .string("web"), "image": .string("cerc/web:local"),
                            "state": .object(["waiting": .object(["reason": .string("ErrImagePull")])]),
                        ])
                    ])
                ]),
            ])
        }
        let waiter = Waiter(
            ctx: c.ctx, client: c.cluster, namespace: c.id, selector: "app.kubernetes.io/instance=\(c.id)")
        #expect(try await waiter.diagnose(pods: [try pod(deleting: false)]).count == 1)
        #expect(try await waiter.diagnose(pods: [try pod(deleting: true)]).isEmpty)
    }

    @Test func timeoutNamesTheObjectAndTheSchedulersReason() async throws {
        let c = try await ClusterHarness(healthy: false)
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Namespace", name: c.id,
                annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Pod", name: "web-1", namespace: c.id,
                labels: [("app", c.id), ("app.kubernetes.io/instance", c.id)]))
        c.cluster.update("Pod", "web-1", namespace: c.id) { p in
            guard case .object(var o) = p else { return }
            o["status"] = .object([
                "conditions": .array([
                    .object([
                        "type": .string("PodScheduled"), "status": .string("False"), "reason": .string("Unschedulable"),
                        "message": .string("0/1 nodes are available: 1 Insufficient cpu."),
                    ])
                ])
            ])
            p = .object(o)
        }
        await #expect { _ = try await c.start(timeout: 10) } throws: { e in
            let m = (e as? SoError)?.message ?? ""
            return m.hasPrefix("timed out after 10s waiting for Deployment \(c.id)-deployment")
                && m.contains("cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu.")
        }
    }

    /// On a cluster that cannot add nodes (kind, a bare node), a pod without room is named within seconds with
    /// what it asks and what the node has; where a cloud provider made the nodes, the wait goes on. So does it for a
    /// pod that would fit the node were the node free: other pods hold the room, and they end.
    @Test func anUnschedulablePodOnAFixedClusterIsNamedWithinSeconds() async throws {
        for (provider, cpu) in [
            ("", "3"), ("kind://docker/kind/kind-control-plane", "3"), ("aws:///eu-west-1a/i-0abc", "3"), ("", "50m"),
        ] {
            let c = try await ClusterHarness(healthy: false)
            try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Node", name: "so-node"))
            c.cluster.update("Node", "so-node", namespace: nil) { n in
                guard case .object(var o) = n else { return }
                if !provider.isEmpty { o["spec"] = .object(["providerID": .string(provider)]) }
                o["status"] = .object(["allocatable": .object(["cpu": .string("2"), "memory": .string("8Gi")])])
                n = .object(o)
            }
            try c.cluster.seed(
                KubeObject(
                    apiVersion: "v1", kind: "Namespace", name: c.id,
                    annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
            try c.cluster.seed(
                KubeObject(
                    apiVersion: "v1", kind: "Pod", name: "web-1", namespace: c.id,
                    labels: [("app", c.id), ("app.kubernetes.io/instance", c.id)]))
            c.cluster.update("Pod", "web-1", namespace: c.id) { p in
                guard case .object(var o) = p else { return }
                o["spec"] = .object([
                    "containers": .array([
                        .object([
                            "name": .string("web"),
                            "resources": .object(["requests": .object(["cpu": .string(cpu), "memory": .string("1Gi")])]
                            ),
                        ])
                    ])
                ])
                o["status"] = .object([
                    "conditions": .array([
                        .object([
                            "type": .string("PodScheduled"), "status": .string("False"),
                            "reason": .string("Unschedulable"),
                            "message": .string("0/1 nodes are available: 1 Insufficient cpu."),
                        ])
                    ])
                ])
                p = .object(o)
            }
            let began = c.ctx.clock.now()
            do {
                _ = try await c.start(timeout: 120)
                Issue.record("an unschedulable pod was not reported")
            } catch let e as SoError {
                let waited = c.ctx.clock.now().timeIntervalSince(began)
                if provider.hasPrefix("aws") || cpu == "50m" {
                    #expect(e.exitCode == SoError.exitTimeout && waited >= 120, "\(e.message)")
                    #expect(
                        c.h.console.stdout.contains(
                            "cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu."),
                        "\(c.h.console.stdout)")
                } else {
                    #expect(e.exitCode != SoError.exitTimeout && waited < 10, "\(provider): \(waited) s, \(e.message)")
                    #expect(
                        e.message.contains(
                            "cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu.; web requests cpu 3, memory 1Gi; "
                                + "so-node has cpu 2, memory 8Gi allocatable in all (the cluster cannot add nodes)"),
                        "\(e.message)")
                    #expect(
                        e.hint?.contains("lower resources: in \(c.h.path("dep"))/spec.yml") == true, "\(e.hint ?? "")")
                }
            }
        }
    }

    /// A pod the ReplicaSet may not create (here a quota) shows on no pod, only on the Deployment: it is
    /// named at once instead of a timeout that blames the claim waiting for that pod.
    @Test func aQuotaThatRefusesThePodIsNamedAtOnce() async throws {
        let c = try await ClusterHarness(healthy: false)
        c.cluster.onApply = { json in
            guard case .object(var o) = json, o["kind"]?.string == "Deployment" else { return }
            o["status"] = .object([
                "conditions": .array([
                    .object([
                        "type": .string("ReplicaFailure"), "status": .string("True"), "reason": .string("FailedCreate"),
                        "message": .string(
                            "pods \"web-1\" is forbidden: exceeded quota: q, requested: limits.cpu=2, used: limits.cpu=0, limited: limits.cpu=200m"
                        ),
                    ])
                ])
            ])
            json = .object(o)
        }
        do {
            _ = try await c.start(timeout: 600)
            Issue.record("a refused pod was waited for")
        } catch let e as SoError {
            #expect(
                e.message.contains("cannot create its pods: pods \"web-1\" is forbidden: exceeded quota: q")
                    && e.hint?.contains("raise quota:") == true, "\(e.message)")
            #expect(e.exitCode != SoError.exitTimeout)
        }
    }

    /// A deployment whose pod web-1's container web is in CrashLoopBackOff, its log `starting` then nginx's error.
    func crashLooping() async throws -> ClusterHarness {
        let c = try await ClusterHarness(healthy: false)
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Namespace", name: c.id,
                annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Pod", name: "web-1", namespace: c.id,
                labels: [("app", c.id), ("app.kubernetes.io/instance", c.id)]))
        c.cluster.update("Pod", "web-1", namespace: c.id) { p in
            guard case .object(var o) = p else { return }
            o["status"] = .object([
                "containerStatuses": .array([
                    .object([
                        "name": .string("web"),
                        "state": .object(["waiting": .object(["reason": .string("CrashLoopBackOff")])]),
                    ])
                ])
            ])
            p = .object(o)
        }
        c.cluster.podLogs["\(c.id)/web-1/web"] = "starting\nnginx: [emerg] unknown directive \"lisen\"\n"
        return c
    }

    func startNamesTheCrash(_ c: ClusterHarness) async {
        await #expect { _ = try await c.start() } throws: { e in
            ((e as? SoError)?.message ?? "").hasSuffix(
                "keeps crashing (CrashLoopBackOff); last log lines: starting | nginx: [emerg] unknown directive \"lisen\""
            )
        }
    }

    @Test func crashLoopsShowTheLastLogLines() async throws {
        await startNamesTheCrash(try await crashLooping())
    }

    /// The kubelet's word that a container is gone is not the container's last lines: the log is asked again.
    @Test func aKubeletThatLostTheCrashedContainerIsAskedAgain() async throws {
        let c = try await crashLooping()
        // The kubelet's status lagged its runtime: five times it names a container already removed (or its log file),
        // and once the run it started since has printed nothing yet.
        let lost = "unable to retrieve container logs for containerd://cd58774bbe7a\n"
        // Its log file gone with it: the path the kubelet could not follow.
        let file =
            "failed to try resolving symlinks in path \"/var/log/pods/x_web-1_0/web/0.log\": "
            + "lstat /var/log/pods/x_web-1_0/web/0.log: no such file or directory\n"
        c.cluster.podLogAnswers["\(c.id)/web-1/web"] = [lost, file, lost, file, lost, ""]
        await startNamesTheCrash(c)
        let asked = c.cluster.calls.filter { $0.hasPrefix("logs \(c.id)/web-1/web") }
        #expect(asked.count == 7, "\(asked)")
        // The previous run's log, then the current one's, in turn.
        #expect(
            asked.prefix(3) == [
                "logs \(c.id)/web-1/web previous", "logs \(c.id)/web-1/web", "logs \(c.id)/web-1/web previous",
            ])
    }
}
