import Foundation
import SoBasics
import SoDeploy
import SoKube

/// A claim from a remote handed to its member without an exec: through a port-forward to the listener the member's
/// clone.sh keeps on its loopback while it waits (a pool's member, where the image has python3). An exec is a process
/// the node starts in the container (`runc exec`: 70-140 ms before its first line runs on the real node); a
/// port-forward is a connection the node makes into the pod's network (20-30 ms). What is handed is what the exec
/// hands (`handOver`): the ready file's lines and the claimer's credentials; the answer comes once the clone is done.
/// Only into a pod whose one container is the workspace's: the loopback is every container's of the pod, and the
/// credentials go to whatever listens there.
extension WorkspaceContainer {
    /// The port clone.sh's listener takes on the member's loopback (its `SO_HANDOVER_PORT`, this by default).
    static let handOverPort = 47017

    /// The hand-over through the member's listener: true once it answered that the clone is done (or, without
    /// `waitFor`, that it has its ready file); false when it could not be handed that way (no listener: an older
    /// clone.sh, an image without python3, a member not ready yet; no right to forward; a client that cannot), and
    /// the exec hands it over as before (writing the same ready file again is harmless: the clone reads it once). A
    /// clone the listener waited for in vain throws, as the exec's wait does (`notCloned`): no second wait as long.
    func handOverForwarded(
        repo: String, ref: String, branch: String, identity: GitIdentity, waitFor: Double?,
        credentials: [(key: String, value: String)], tip: Task<RemoteTip?, Never>?
    ) async throws -> Bool {
        // The lines `handOver`'s script writes, in its order (its tip= last, once known).
        let ready = [
            ("repo", repo), ("ref", ref), ("branch", branch), ("name", identity.line(\.name)),
            ("email", identity.line(\.email)),
        ]
        guard let pod = forwardable(ready) else { return false }
        let ticks = Self.ticks(waitFor)
        let send = ExecInput.Later {
            var lines = ready
            let tipLine = RemoteTip.line(await tip?.value).trimmingCharacters(in: .newlines)
            lines.append(("tip", tipLine))
            return Self.handOverMessage(ticks: ticks, ready: lines, credentials: HandedCredentials.text(credentials))
        }
        return try await forward(pod, send, waitFor: waitFor)
    }

    /// A claim in a checkout handed to its member through its listener (`handOverForwarded`): the bundle (`made`, which
    /// may still be being made) streamed in after the ready file's lines and the credentials, as `deliver` does by
    /// exec. The bundle once the listener answered, its scratch repository gone; nil when it could not be handed that
    /// way (then `deliver` hands the same bundle by exec). A clone waited for in vain throws (`notCloned`).
    func deliverForwarded(
        _ carry: CarryIn, _ made: Task<CarryIn.Bundle, Error>, ref: String, branch: String, origin: String,
        identity: GitIdentity, waitFor: Double?, credentials: [(key: String, value: String)]
    ) async throws -> CarryIn.Bundle? {
        // The lines `deliver`'s script writes, in its order (after base= and seed=, the bundle's).
        let ready = [
            ("ref", ref), ("branch", branch), ("origin", origin), ("name", identity.line(\.name)),
            ("email", identity.line(\.email)),
        ]
        guard let pod = forwardable(ready) else { return nil }
        let ticks = Self.ticks(waitFor)
        let handed = HandedCredentials.text(credentials)
        // No bundle (it failed): nothing is sent, the listener reads no hand-over, and the exec's way says why.
        let send = ExecInput.Later(streaming: {
            guard let b = try? await made.value else { return ExecInput.Payload(bytes: Data()) }  // said by the exec
            let lines = [("base", b.base), ("seed", b.seed ?? "")] + ready
            return ExecInput.Payload(
                bytes: Self.handOverMessage(ticks: ticks, ready: lines, credentials: handed, bundle: b.bytes),
                file: b.file)
        })
        let went: Bool
        do { went = try await forward(pod, send, waitFor: waitFor) } catch {
            // Handed, but not cloned in time: the bundle's scratch repository goes all the same.
            if let b = try? await made.value { carry.done(b) }  // a bundle that failed left none
            throw error
        }
        // The bundle's failure is the exec's to say (`deliver`, which this leaves it to).
        guard went, let b = try? await made.value else { return nil }
        carry.done(b)
        return b
    }

    /// The pod to forward to, when the ready file's values can go as they are: a line break in one would be read as
    /// another line of it (the exec's way then, as before).
    private func forwardable(_ ready: [(String, String)]) -> String? {
        ready.contains(where: { $0.1.contains(where: \.isNewline) || $0.1.contains("\0") }) ? nil : pod
    }

    /// `send` written to the listener in `pod`: whether it answered as a hand-over that went (`done` once cloned, or
    /// `handed` without a wait); `timeout` (the clone not done within the wait) throws `notCloned`.
    private func forward(_ pod: String, _ send: ExecInput.Later, waitFor: Double?) async throws -> Bool {
        let request = PortForwardRequest(
            namespace: c.namespace, pod: pod, port: Self.handOverPort, send: send, timeout: (waitFor ?? 0) + 10)
        guard let outcome = await c.client.portForward(request) else { return false }
        switch outcome {
        case .answered(let line) where line == (waitFor == nil ? "handed" : "done"):
            ctx.phase("claim: handed over through a port-forward")
            return true
        case .answered("timeout"):
            throw notCloned(waitFor ?? 0)
        case .answered(let line):
            ctx.phase("claim: the member's listener answered '\(Self.printable(line, 60))'; handing over by exec")
            return false
        case .failed(let why):
            ctx.phase("claim: no port-forward to the member (\(Self.printable(why, 120))); handing over by exec")
            return false
        }
    }

    /// At most `count` characters of `text` (what a member or the node said), without control characters.
    static func printable(_ text: String, _ count: Int) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }))
            .prefix(count).description
    }

    /// What the listener reads: `so-handover 1 TICKS READY CREDENTIALS [BUNDLE]` (the lengths in bytes), then the
    /// ready file's text and the credentials file's (then, with `bundle`, that many bytes of the bundle, sent after
    /// this).
    static func handOverMessage(ticks: String, ready: [(String, String)], credentials: String, bundle: UInt64? = nil)
        -> Data
    {
        let text = Data(ready.map { "\($0.0)=\($0.1)\n" }.joined().utf8)
        let secrets = Data(credentials.utf8)
        let head = "so-handover 1 \(ticks) \(text.count) \(secrets.count)" + (bundle.map { " \($0)" } ?? "")
        return Data((head + "\n").utf8) + text + secrets
    }
}
