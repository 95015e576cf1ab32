import Foundation
import Logging
import SoBasics
import SoTestSupport
import Testing

@testable import SoCLI

/// `SO_TRACE_API`'s program lines name the program and its verb, never an argument that could hold a secret.
@Suite struct TracingTests {
    @Test func aProgramIsNamedByItsVerbOnly() {
        #expect(
            TracingProcessRunner.name(["kubectl", "--kubeconfig", "/k", "-n", "ns", "exec", "-i", "pod-1", "--", "sh"])
                == "kubectl exec")
        #expect(TracingProcessRunner.name(["/usr/bin/git", "-C", "/tmp/x", "log", "-1"]) == "git log")
        #expect(TracingProcessRunner.name(["git", "clone", "https://user:token@example.invalid/r.git"]) == "git clone")
        #expect(TracingProcessRunner.name(["kind", "--name=so", "get", "clusters"]) == "kind get")
        #expect(TracingProcessRunner.name(["sh", "/tmp/x.sh"]) == "sh")
        #expect(TracingProcessRunner.name([]) == "?")
    }

    @Test func eachRunIsLoggedWithItsTimeAndExit() async throws {
        let runner = FakeProcessRunner()
        runner.expect(["kubectl", "-n", "ns", "exec", "p", "--", "true"], exitCode: 3)
        let lines = LockedLines()
        var logger = Logger(label: "so.proc") { _ in lines }
        logger.logLevel = .debug
        let traced = TracingProcessRunner(inner: runner, logger: logger)
        let r = try await traced.run(["kubectl", "-n", "ns", "exec", "p", "--", "true"])
        #expect(r.exitCode == 3)
        let said = lines.all
        #expect(said.count == 1 && said[0].hasPrefix("kubectl exec ") && said[0].hasSuffix("ms exit 3"), "\(said)")
        #expect(runner.unexpected.isEmpty && runner.pending.isEmpty)
    }
}
