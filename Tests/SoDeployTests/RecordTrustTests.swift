import Foundation
import SoBasics
import SoKube
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// A directory the CLI made from the cluster's record (`--name N` on a machine without it, a claim of another
/// machine's pool member): the record is whoever may write Secrets in the namespace's, so what would read this
/// machine's files into the cluster or run the record's own commands here is refused (`RecordTrust.checkHere`).
@Suite struct RecordTrustHereTests {
    @Test(arguments: [
        ("credentials", "config.env (credentials-files) names the credentials file"),
        ("ca", "spec.yml ca-certificates names"),
        ("token", "spec.yml image-pull-secret.token-file names"),
    ])
    func whatWouldReadThisMachinesFilesIsRefused(_ kind: String, _ said: String) async throws {
        let c = try await ClusterHarness()
        defer { c.h.tmp.cleanup() }
        let own = c.h.path("home/.aws/credentials")
        try c.h.tmp.write("home/.aws/credentials", "OWN=1\n")
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
        let e = #expect(throws: SoError.self) { try RecordTrust.checkHere(c.h.path("dep"), ctx: c.ctx) }
        #expect(e?.message.hasPrefix("the cluster's record made \(c.h.path("dep")), and it is refused: ") == true)
        #expect(e?.message.contains(said) == true, "\(kind): \(e?.message ?? "no error")")
        #expect(e?.hint?.contains("--dir") == true)
    }

    /// Host paths are the nodes' (as on the machine that wrote the record), and a stack outside the directory is
    /// this machine's own: both left to the start, as from a directory made here.
    @Test func hostPathsAndThisMachinesStackAreLeftToTheStart() async throws {
        let c = try await ClusterHarness.editingSpec("  web-data:\n", "  web-data: /srv/web-data\n")
        defer { c.h.tmp.cleanup() }
        try RecordTrust.checkHere(c.h.path("dep"), ctx: c.ctx)
    }

    /// A stack with start commands: run from this machine's copy (outside the directory), refused when it is the
    /// record's own (a stack inside the directory the record made).
    @Test func theRecordsOwnStartCommandsAreRefused() async throws {
        let t = try TempDir("so-record-trust")
        defer { t.cleanup() }
        let stack = try StartCommandsTests.makeStack(t)
        let c = try await ClusterHarness(stack: stack, environment: ["SO_REPO_BASE_DIR": t.file("repos")])
        defer { c.h.tmp.cleanup() }
        try RecordTrust.checkHere(c.h.path("dep"), ctx: c.ctx)
        try FileManager.default.copyItem(atPath: stack, toPath: c.h.path("dep/app-stack"))
        let spec = try c.h.read("dep/spec.yml")
        #expect(spec.contains(stack), "the spec names the stack's path")
        try c.h.tmp.write("dep/spec.yml", spec.replacingOccurrences(of: stack, with: "./app-stack"))
        let e = #expect(throws: SoError.self) { try RecordTrust.checkHere(c.h.path("dep"), ctx: c.ctx) }
        #expect(e?.message.contains("stack.yml pods.web runs a start command of the record on this machine") == true)
    }
}
