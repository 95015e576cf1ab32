import Foundation
import SoBasics
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoAuthoring

@Suite struct RepoLocatorTests {
    @Test func parses() throws {
        #expect(
            try RepoLocator.parse("cerc-io/stack-orchestrator")
                == RepoLocator(host: "github.com", org: "cerc-io", repo: "stack-orchestrator", ref: nil))
        #expect(
            try RepoLocator.parse("git.vdb.to/cerc-io/test-project@test-branch")
                == RepoLocator(host: "git.vdb.to", org: "cerc-io", repo: "test-project", ref: "test-branch"))
        #expect(try RepoLocator.parse("github.com/a/b@v1.2.3").cloneURL(ssh: true) == "git@github.com:a/b.git")
        #expect(try RepoLocator.parse("github.com/a/b").cloneURL(ssh: false) == "https://github.com/a/b")
        for bad in ["a", "a/b/c/d", "a//b", "a/b@", "a/b@-x", "a/../b", "a/b c", "a/b@x..y"] {
            #expect(throws: SoError.self, "\(bad)") { try RepoLocator.parse(bad) }
        }
    }
}
