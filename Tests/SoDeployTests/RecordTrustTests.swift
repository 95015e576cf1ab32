import Foundation
import SoBasics
import SoKube
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// What a directory written from the cluster's record would do here, read through a file system confined to it
/// (`RecordReview`): the record is whoever may write Secrets in the namespace's, so what would read this machine's
/// files into the cluster or run commands here is named, file and key.
@Suite struct RecordTrustHereTests {
    static func findings(_ c: ClusterHarness, podSecurity: String? = nil) -> [RecordFinding] {
        RecordReview(
            ctx: c.ctx, dir: c.h.path("dep"),
            origin: RecordOrigin(namespace: c.id, deployment: c.id, podSecurity: podSecurity)
        ).findings()
    }

    @Test(arguments: [
        ("credentials", "config.env credentials-files reads"),
        ("ca", "spec.yml ca-certificates reads"),
        ("token", "spec.yml image-pull-secret.token-file reads"),
    ])
    func whatWouldReadThisMachinesFilesIsNamed(_ kind: String, _ said: String) async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        let own = c.h.path("home/.aws/credentials")
        try c.h.tmp.write("home/.aws/credentials", "OWN=1\n")
        #expect(Self.findings(c).isEmpty, "\(Self.findings(c))")
        switch kind {
        case "credentials":
            try c.h.tmp.write(
                "dep/config.env",
                try c.h.read("dep/config.env") + "# From credentials file: \(own)\n# credentials-keys: OWN\n")
        case "ca": try c.h.tmp.write("dep/spec.yml", try c.h.read("dep/spec.yml") + "ca-certificates: [\(own)]\n")
        case "token":
            try c.h.tmp.write(
                "dep/spec.yml",
                try c.h.read("dep/spec.yml")
                    + "image-pull-secret: {server: r.example.org, username: u, token-file: \(own)}\n")
        default: Issue.record("no case \(kind)")
        }
        let found = Self.findings(c)
        #expect(found.contains { $0.kind == .reach && $0.description == "\(said) \(own) of this machine" }, "\(found)")
    }

    /// A host path is the node's: a privilege the namespace must already have had (Pod Security `privileged`).
    @Test func aHostPathIsAPrivilege() async throws {
        let c = try await ClusterHarness.editingSpec("  web-data:\n", "  web-data: /srv/web-data\n")
        defer { c.h.tmp.cleanup() }
        #expect(Self.findings(c).map(\.description) == ["spec.yml volumes.web-data is the host path /srv/web-data"])
        #expect(Self.findings(c).first?.kind == .privilege)
        #expect(Self.findings(c, podSecurity: "privileged").isEmpty)
    }

    /// A stack with start commands, inside the directory or of this machine: each command named.
    @Test func startCommandsAreNamed() async throws {
        let t = try TempDir("so-record-trust")
        defer { t.cleanup() }
        let stack = try StartCommandsTests.makeStack(t)
        let c = try await ClusterHarness(stack: stack, environment: ["SO_REPO_BASE_DIR": t.file("repos")])
        defer { c.h.tmp.cleanup() }
        #expect(
            Self.findings(c).map(\.description) == [
                "spec.yml stack names \(stack)/stack.yml, whose pods.web.pre_start_command runs a command on this machine",
                "spec.yml stack names \(stack)/stack.yml, whose pods.web.post_start_command runs a command on this machine",
            ])
        try FileManager.default.copyItem(atPath: stack, toPath: c.h.path("dep/config/app-stack"))
        let spec = try c.h.read("dep/spec.yml")
        try c.h.tmp.write("dep/spec.yml", spec.replacingOccurrences(of: stack, with: "./config/app-stack"))
        #expect(
            Self.findings(c).map(\.description) == [
                "config/app-stack/stack.yml pods.web.pre_start_command runs a command on this machine",
                "config/app-stack/stack.yml pods.web.post_start_command runs a command on this machine",
            ])
    }

    /// Starts of one home at once each remember their revision (`StartedRevisions.add`, under a host lock): none is
    /// lost to another's write of the list.
    @Test func startsAtOnceEachRememberTheirRevision() async throws {
        let t = try TempDir("so-record-trust")
        defer { t.cleanup() }
        let h = try Harness(environment: ["SO_HOME": t.file("home")])
        defer { h.tmp.cleanup() }
        let ctx = h.ctx
        let digests = (0..<24).map { SHA256.hex(Data("revision \($0)".utf8)) }
        await withTaskGroup(of: Void.self) { g in
            for d in digests { g.addTask { await StartedRevisions(ctx).add(d) } }
        }
        #expect(digests.filter { !StartedRevisions(ctx).contains($0) }.isEmpty)
        #expect(try t.read("home/record-trust").split(separator: "\n").count == 24)
        #expect(try FileManager.default.contentsOfDirectory(atPath: t.file("home")) == ["record-trust"], "no tmp left")
    }
}
