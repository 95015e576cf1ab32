import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

/// What a workspace started from when `so up` ran in a git checkout (no `GIT_REPO`): printed by `so up`.
public struct WorkspaceSource: Sendable, Equatable, Encodable {
    /// The checkout's top directory.
    public var repository: String
    /// The branch checked out there (empty: a detached HEAD).
    public var branch: String
    /// HEAD: the commit the workspace's branch starts from.
    public var base: String
    public var subject: String
    /// The checkout's origin as the workspace gets it (credentials removed); empty: none, or one the cluster
    /// cannot reach (a local path, said in `note`).
    public var origin: String
    /// Commits of HEAD's history carried in, and those of them no origin branch holds (never pushed).
    public var commits: Int
    public var localCommits: Int
    /// Changes not committed in the checkout (`git status --porcelain` lines), and whether they were carried in.
    public var uncommitted: Int
    public var uncommittedCarried: Bool
    /// The bundle's size in bytes (0 when nothing was carried: the workspace already had its checkout, or a dry run).
    public var bundleBytes: UInt64 = 0
    public var note: String?

    /// One line per fact, as `so up` prints them (`planned`: as `so up --dry-run` does, before anything is carried).
    public func lines(planned: Bool = false) -> [String] {
        let head =
            "workspace source: \(repository) (\(branch.isEmpty ? "detached HEAD" : "branch \(branch)") at \(base.prefix(12)) \"\(subject)\")"
        var out = [planned ? "would use " + head : head]
        var carried = "\(commits) \(English.plural("commit", commits)) of history"
        if !origin.isEmpty { carried += ", \(localCommits) of them not on origin" }
        if uncommitted > 0 {
            let changes = "\(uncommitted) uncommitted \(English.plural("change", uncommitted))"
            carried += uncommittedCarried ? ", \(changes)" : "; not the \(changes) (--include-uncommitted carries them)"
        }
        if bundleBytes > 0 { carried += " (a git bundle of \(Self.bytes(bundleBytes)) over the Kubernetes API)" }
        out.append(planned ? "  would carry in: \(carried)" : "  carried in: \(carried)")
        out.append("  origin: \(origin.isEmpty ? "none" : origin)\(note.map { " (\($0))" } ?? "")")
        return out
    }

    static func bytes(_ n: UInt64) -> String {
        if n < 1024 { return "\(n) B" }
        if n < 1 << 20 { return String(format: "%.1f KiB", Double(n) / 1024) }
        if n < 1 << 30 { return String(format: "%.1f MiB", Double(n) / 1_048_576) }
        return String(format: "%.2f GiB", Double(n) / 1_073_741_824)
    }

    /// An origin URL as the workspace may hold it: an `http(s)://` URL loses any user and password (a token
    /// there must never reach the cluster's objects or this terminal), another URL its password; nil for a
    /// local path, which the cluster cannot reach.
    static func carriedOrigin(_ url: String) -> String? {
        let u = url.trimmedSpaces
        if u.isEmpty || u.hasPrefix("/") || u.hasPrefix(".") || u.hasPrefix("~") || u.hasPrefix("file:") { return nil }
        guard let scheme = u.range(of: "://") else {
            // scp-like git@host:path keeps its user (never a secret); a bare relative path is local.
            return u.contains(":") ? u : nil
        }
        let head = u[..<scheme.upperBound]
        let rest = u[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { return u }
        let user = authority[..<at]
        let host = authority[authority.index(after: at)...]
        let http = head.lowercased().hasPrefix("http")
        let keptUser = http ? "" : (user.split(separator: ":", maxSplits: 1).first.map { String($0) + "@" } ?? "")
        return String(head) + keptUser + host + rest[authorityEnd...]
    }
}

extension WorkspaceContainer {
    /// Waits until the workspace's container runs (the start beside it made the pod), up to `timeout` seconds.
    static func running(
        _ ctx: SoContext, directory: String, cluster: ClusterOptions, timeout: Double, known: String? = nil
    ) async throws -> WorkspaceContainer {
        let began = ctx.clock.now()
        var pause = 0.2
        // Opened once: each poll reads the pods, never the deployment's files again.
        let c = try await ConnectedDeployment.open(ctx, directory: directory, cluster: cluster)
        if let known { return try await of(c, known: known) }
        // A look as soon as a pod of it changes, not at the next poll: the polls grow apart (to a second), and a
        // container that ran just after one waited for the next (a cold `up` in a checkout, 0.5 s on average).
        let watch = ChangeWatch(
            c.client, namespace: c.namespace, [(.pod, DeploymentNames.selector(c.model.id))], seconds: timeout)
        defer { watch.stop() }
        while true {
            let w = try await of(c)
            if w.pod != nil { return w }
            if ctx.clock.now().timeIntervalSince(began) >= timeout {
                throw SoError(
                    "\(w.name)'s \(w.spec.service) container did not run within \(Int(timeout))s, so the repository could not be carried in",
                    hint: "see why: so deployment --dir \(directory) status; then 'so up' again carries it",
                    exitCode: SoError.exitTimeout)
            }
            try await watch.pause(ctx.clock, seconds: pause)
            pause = min(pause * 1.5, 1)
        }
    }

    /// Whether the container's path already holds a complete checkout (the clone keeps it).
    func hasCheckout() async throws -> Bool {
        let r = try await run(
            "looking for the checkout",
            #"if [ -d "$1/.git" ] && [ ! -e "$1/.so-clone-incomplete" ]; then echo yes; else echo no; fi"#)
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "yes"
    }

    /// Sends the bundle into `<path>/.so-carry/` on the exec's stdin (streamed from its file; kubectl, where it is
    /// used instead of the API server's exec, is fed it from memory), then
    /// the marker the clone waits for, naming the base commit, the snapshot of uncommitted changes and the branch.
    /// A pool's member learns its `branch` and `origin` here too. With `waitFor` (seconds), the same exec then
    /// waits for the clone to be done (a claim: one exec, not two).
    /// A claim's `identity` (the claimer's git name and email) goes into the checkout's config, and its `credentials`
    /// into the container's memory (`HandedCredentials`), before the bundle, in the same exec (one exec, not two).
    /// `made`: the bundle, which may still be being made: the exec starts at once (its connection, the node's exec:
    /// 40-60 ms of a claim), and reads the two commits, the credentials, then the bundle, on its stdin once it is
    /// written. A bundle that fails ends the exec before it writes anything, and this throws why. Whatever happens,
    /// the bundle's scratch repository is gone (`carry.done`) when this returns; it returns the bundle. With `waitFor`
    /// and `probe` (the container's readiness probe, `readinessProbe`), the probe runs once the clone is done:
    /// `proved` says it passed. Once the bundle is handed, what the wait or the probe meet is no failure of the carry
    /// (the start's wait says what became of the container): not `proved`.
    @discardableResult
    func deliver(
        _ carry: CarryIn, _ made: @escaping @Sendable () async throws -> CarryIn.Bundle, ref: String,
        branch: String = "", origin: String = "", identity: GitIdentity = .none, waitFor: Double? = nil,
        credentials: [(key: String, value: String)] = [], probe: [String]? = nil, forward: Bool = false
    )
        async throws -> (bundle: CarryIn.Bundle, proved: Bool)
    {
        let bundle = Task { try await made() }
        if forward,
            let b = try await deliverForwarded(
                carry, bundle, ref: ref, branch: branch, origin: origin, identity: identity, waitFor: waitFor,
                credentials: credentials)
        {
            return (b, false)
        }
        let handed = Data(HandedCredentials.text(credentials).utf8)
        // First a line, "BASE SEED N" (SEED "-" when none; N the credentials' bytes), read by the shell a byte at a
        // time, then the credentials (`head -c N`), then the bundle (`cat`). No bundle, no bytes: the script ends at
        // its read, having written nothing.
        let stdin = ExecInput.later(
            ExecInput.Later(streaming: {
                guard let b = try? await bundle.value else { return ExecInput.Payload(bytes: Data()) }
                let line = Data("\(b.base) \(b.seed ?? "-") \(handed.count)\n".utf8)
                return ExecInput.Payload(bytes: line + handed, file: b.file)
            }))
        let script = """
            IFS=' ' read -r base seed n || exit 7
            [ "$seed" != - ] || seed=
            if [ "$n" -gt 0 ] 2>/dev/null; then (\(HandedCredentials.writeScript(bytes: "$n"))) || exit 6; fi
            c="$1/.so-carry"; [ -d "$c" ] || mkdir -p "$c" || exit 3
            cat > "$c/repo.bundle.part" && mv "$c/repo.bundle.part" "$c/repo.bundle" || exit 4
            printf 'base=%s\\nseed=%s\\nref=%s\\nbranch=%s\\norigin=%s\\nname=%s\\nemail=%s\\n' \\
              "$base" "$seed" "$2" "$3" "$4" "$6" "$7" > "$c/ready.part" && mv "$c/ready.part" "$c/ready" || exit 4
            echo so-handed
            \(Self.wakeAndWait("$5"))
            \(Self.probeAfter(8))
            """
        let outcome: Result<ProcessResult, Error>
        do {
            outcome = .success(
                try await capture(
                    script,
                    [ref, branch, origin, Self.ticks(waitFor), identity.line(\.name), identity.line(\.email)]
                        + (waitFor == nil ? [] : probe ?? []),
                    stdin: stdin))
        } catch {
            outcome = .failure(error)
        }
        // The bundle's scratch repository goes, however the exec went (a bundle that failed made none to remove).
        let b = try await bundle.value
        carry.done(b)
        let r = try outcome.get()
        if probe != nil, waitFor != nil, r.stdout.contains("so-handed") { return (b, r.exitCode == 0) }
        if r.exitCode == 5, let waitFor { throw notCloned(waitFor) }
        guard r.exitCode == 0 else {
            if r.exitCode == 6 {
                throw SoError(
                    "handing the credentials to \(name) failed: \(r.lastErrorLine)",
                    hint: "see it for yourself: so deployment --dir \(c.model.directory) shell")
            }
            throw SoError(
                "carrying the repository into \(name) failed: \(r.lastErrorLine)",
                hint: "the workspace's volume may be full (a bundle of \(WorkspaceSource.bytes(b.bytes))); "
                    + "see so deployment --dir \(c.model.directory) status")
        }
        return (b, false)
    }

    /// A workspace from a remote (a claimed pool member): the repository, its ref and the branch handed to the
    /// clone through `.so-carry/ready`, and with `waitFor` (seconds) the clone waited for, in one exec. The claimer's
    /// `credentials` go first, from the exec's stdin (`HandedCredentials`), so the clone fetches with them. `tip`:
    /// where the branch is on the remote, as `so` asks it meanwhile (`RemoteTip`): the exec starts at once and reads
    /// it first on its stdin when it comes, and the ready file says it (the clone then asks the remote nothing when
    /// its warm-up has that commit).
    func handOver(
        repo: String, ref: String, branch: String, identity: GitIdentity = .none, waitFor: Double?,
        credentials: [(key: String, value: String)] = [], tip: Task<RemoteTip?, Never>? = nil, forward: Bool = false
    )
        async throws
    {
        if forward,
            try await handOverForwarded(
                repo: repo, ref: ref, branch: branch, identity: identity, waitFor: waitFor, credentials: credentials,
                tip: tip)
        {
            return
        }
        let handed = HandedCredentials.text(credentials)
        let stdin: ExecInput
        if let tip {
            stdin = .later(ExecInput.Later { Data((RemoteTip.line(await tip.value) + handed).utf8) })
        } else {
            stdin = credentials.isEmpty ? .none : .bytes(Data(handed.utf8))
        }
        let r = try await capture(
            #"""
            c="$1/.so-carry"; [ -d "$c" ] || mkdir -p "$c" || exit 3
            tip=; if [ "$8" = 1 ]; then IFS= read -r tip || :; fi
            if [ "$9" = 1 ]; then (\#(HandedCredentials.writeScript)) || exit 6; fi
            printf 'repo=%s\nref=%s\nbranch=%s\nname=%s\nemail=%s\ntip=%s\n' "$2" "$3" "$4" "$6" "$7" "$tip" \
              > "$c/ready.part" && mv "$c/ready.part" "$c/ready"
            """# + "\n" + Self.wakeAndWait("$5"),
            [
                repo, ref, branch, Self.ticks(waitFor), identity.line(\.name), identity.line(\.email),
                tip == nil ? "0" : "1", credentials.isEmpty ? "0" : "1",
            ],
            stdin: stdin)
        if r.exitCode == 5, let waitFor { throw notCloned(waitFor) }
        guard r.exitCode == 0 else {
            throw SoError(
                "handing the repository to the clone in \(name) failed: \(r.lastErrorLine)",
                hint: "see it for yourself: so deployment --dir \(c.model.directory) shell")
        }
    }

    /// Shell, after `.so-carry/ready` is written: wakes the clone at once where it waits on `.so-carry/wake` (a
    /// FIFO clone.sh makes; a clone not waiting there sees the marker by itself within a second), then, when `ticks`
    /// (a shell word) is above 0, waits that many fiftieths of a second at most for the clone to be done (exit 5
    /// when it is not; else the script goes on, to `probeAfter` where it has one). On `/tmp/so-claim-wait`, where the
    /// clone made that FIFO (it then writes a byte to it once done): held open for reading and writing before the
    /// marker is looked at, so that byte wakes this however close the two come, and a look each second all the same
    /// (no process a tick). Before it, a wait on `/tmp/so-clone-wait`, the readiness probe's FIFO too, lost its
    /// wake-up whenever the clone was done between a look and the next reader's open (the probe took it), and waited
    /// out its 50 ms tick. A member made by an older clone.sh: that wait, its end looked at every 50 ms; a look every
    /// 20 ms where there is no `timeout(1)` or FIFO.
    static func wakeAndWait(_ ticks: String) -> String {
        """
        [ -p "$c/wake" ] && command -v timeout >/dev/null && timeout 0.2 sh -c ': > "$1"' so "$c/wake" 2>/dev/null
        n=\(ticks); i=0
        if ! [ "$n" -gt 0 ] 2>/dev/null; then :
        elif [ -p /tmp/so-claim-wait ] && command -v timeout >/dev/null && {
          until [ -e /tmp/so-clone-done ]; do
            timeout 1 dd bs=1 count=1 <&4 >/dev/null 2>&1; i=$((i + 50)); [ "$i" -lt "$n" ] || exit 5
          done
        } 4<>/tmp/so-claim-wait; then :
        else
          w=/tmp/so-clone-wait
          if command -v timeout >/dev/null && { [ -p $w ] || mkfifo $w 2>/dev/null; }; then
            until [ -e /tmp/so-clone-done ]; do timeout 0.05 cat $w >/dev/null 2>&1; i=$((i + 2)); [ "$i" -lt "$n" ] || exit 5; done
          else
            until [ -e /tmp/so-clone-done ]; do sleep 0.02; i=$((i + 1)); [ "$i" -lt "$n" ] || exit 5; done
          fi
        fi
        """
    }

    /// Shell, after `wakeAndWait`: the words from parameter `first` on (the container's readiness probe) run when
    /// there are any, exit 8 when they fail.
    static func probeAfter(_ first: Int) -> String {
        #"shift \#(first - 1); [ $# -eq 0 ] || "$@" >/dev/null 2>&1 </dev/null || exit 8"#
    }

    /// `wakeAndWait`'s ticks for a wait of `seconds` (none: "0").
    static func ticks(_ seconds: Double?) -> String { String(Int((seconds ?? 0) * 50)) }

    /// The clone not done within the wait.
    func notCloned(_ seconds: Double) -> SoError {
        SoError(
            "\(name)'s checkout was not done within \(Int(seconds))s",
            hint: "see what the clone says: so deployment --dir \(c.model.directory) logs",
            exitCode: SoError.exitTimeout)
    }
}
