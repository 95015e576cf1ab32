import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

/// `so cleanup --idle`: stops each workspace with `idle:` that nobody used for that long — no verb on its
/// container since (the Namespace's `so.dev/last-used`, else its last start), no task queued or running, no
/// shell or exec open in it (looked at inside the container). Stopping deletes its Deployments: the pods go,
/// the checkout's volume and everything else stay, and the Namespace is marked `so.dev/idle-stopped`; the
/// next verb that needs the container starts it again. It reads only the cluster (no deployment directory),
/// so it runs as well from a CronJob in the cluster.
public struct IdleAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    public struct Outcome: Sendable {
        public var listing: DeploymentListing
        /// Stopped (or, in a dry run, would be).
        public var stopped: Bool
        /// Why: how long it was unused, or what keeps it busy.
        public var reason: String
    }

    public func run(_ req: CleanupRequest) async throws -> [Outcome] {
        let target = try await ClusterTargets(ctx: ctx).shared(req.cluster)
        let client = try ctx.connect(target.connection)
        let now = ctx.clock.now()
        let all = try await ListAction(ctx).list(client)
        var out: [Outcome] = []
        for d in all where !d.terminating && d.deployments > 0 && d.idleStoppedAt == nil {
            guard let after = d.idleAfter,
                let since = [d.lastUsedAt, d.startedAt ?? d.createdAt].compactMap({ $0 }).max()
            else { continue }
            let unused = Int(now.timeIntervalSince(since))
            guard unused >= after else { continue }
            let quiet = "unused for \(DurationText.short(unused)), idle after \(DurationText.short(after))"
            if let busy = try await busy(d, client: client, target: target) {
                ctx.say("keeping \(d.name) (namespace \(d.namespace)): \(busy)")
                out.append(Outcome(listing: d, stopped: false, reason: busy))
                continue
            }
            if !req.dryRun, try await !IdleStop.run(ctx, client: client, d) {
                let held = "another so is changing it"
                ctx.say("keeping \(d.name) (namespace \(d.namespace)): \(held)")
                out.append(Outcome(listing: d, stopped: false, reason: held))
                continue
            }
            ctx.say("\(req.dryRun ? "would stop" : "stopping") \(d.name) (namespace \(d.namespace), \(quiet))")
            out.append(Outcome(listing: d, stopped: true, reason: quiet))
        }
        if out.isEmpty {
            let watched = all.filter { $0.idleAfter != nil }.count
            ctx.say("no idle workspace to stop (\(watched) with idle: checked)")
        }
        return out
    }

    /// What keeps the workspace busy, looked at in its container: a task queued or running, or a shell or
    /// exec open (a process the API started: its parent is outside the container). Nil: nothing. A container
    /// that cannot be looked at is kept, saying why.
    func busy(_ d: DeploymentListing, client: ClusterClient, target: ClusterTarget) async throws -> String? {
        let at = (d.workspaceAt ?? "").split(separator: " ", maxSplits: 1).map(String.init)
        guard at.count == 2 else {
            return "its namespace does not say where its checkout is (\(DeploymentNames.Annotation.workspace))"
        }
        let pods = try await client.list(.pod, namespace: d.namespace, labelSelector: DeploymentNames.selector(d.id))
        guard let found = pods.first(where: { WorkspaceContainer.runs($0, at[0]) }) else { return nil }
        let r = try await ctx.processes.run(
            ContainerExec.kubectl(
                target.kubectlFlags, namespace: d.namespace, pod: found.name, container: at[0],
                ["sh", "-c", Self.busyScript, "so", at[1], String(d.idleAfter ?? 0)]
                    + Self.probeCommandLines(found, container: at[0])),
            workingDirectory: nil, environment: nil, timeout: 60)
        guard r.exitCode == 0 else { return "its container could not be looked at: \(r.lastErrorLine)" }
        let said = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return said.isEmpty ? nil : said
    }

    /// A shell `case` pattern of the command line of a process that only reads the tasks (`task.sh report`, what
    /// `so dashboard` and the tasks verbs run): not a use.
    static let readerPattern = #""sh "*/so/task.sh" report "*"#

    /// The command lines (as `/proc/PID/cmdline` reads with NULs as spaces) of the container's exec probes: the
    /// kubelet runs them through the API like an exec, every period, and they are not a use.
    static func probeCommandLines(_ pod: JSON, container: String) -> [String] {
        guard let c = pod.at("spec", "containers")?.array.first(where: { $0["name"]?.string == container }) else {
            return []
        }
        return ["readinessProbe", "livenessProbe", "startupProbe"].compactMap { probe in
            guard let words = c[probe]?.at("exec", "command")?.array.compactMap(\.string), !words.isEmpty else {
                return nil
            }
            return words.map { $0 + " " }.joined()
        }
    }

    /// `$1` the checkout, `$2` the idle time in seconds, then the command lines of the container's exec probes
    /// (`probeCommandLines`): a verb run in the container since (its time is `HandedCredentials.marker`'s, exact
    /// where the Namespace's record may be up to a minute old) keeps it too. A process the API started that has
    /// ended (a zombie: the runtime outside the container reaps it, a moment later) or is a probe is no use.
    static let busyScript = #"""
        ws=$1 idle=$2
        shift 2
        m=\#(HandedCredentials.marker)
        if [ -f "$m" ]; then
          a=$(( $(date +%s) - $(stat -c %Y "$m" 2>/dev/null || echo 0) ))
          [ "$a" -lt "$idle" ] && { echo "used ${a}s ago (a verb in its container)"; exit 0; }
        fi
        g=$(git -C "$ws" rev-parse --absolute-git-dir 2>/dev/null) && for s in "$g"/so/tasks/*/state; do
          [ -f "$s" ] || continue
          case "$(cat "$s")" in queued|running) t=${s%/state}; echo "task ${t##*/} is $(cat "$s")"; exit 0 ;; esac
        done
        for p in /proc/[0-9]*; do
          n=${p#/proc/}
          [ "$n" = 1 ] || [ "$n" = $$ ] && continue
          st=$(sed 's/.*) //' "$p/stat" 2>/dev/null) || continue
          [ "$(printf '%s\n' "$st" | cut -d' ' -f2)" = 0 ] || continue
          [ "${st%% *}" = Z ] && continue
          c=$(tr '\0' ' ' < "$p/cmdline" 2>/dev/null)
          probe=0
          for q in "$@"; do [ "$c" = "$q" ] && probe=1; done
          [ $probe = 1 ] && continue
          # A reader of the tasks (so dashboard, a tasks verb) uses nothing: it does not keep the workspace.
          case "$c" in \#(readerPattern)) continue ;; esac
          echo "a shell or exec is open in it ($(printf '%s' "$c" | cut -c1-40))"
          exit 0
        done
        """#
}
