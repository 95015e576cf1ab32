import Foundation
import SoKube
import Testing

/// How an exec ended, as its status channel's Status says.
@Suite struct ExecOutcomeTests {
    func status(_ state: String, exitCode: String) throws -> JSON {
        try JSON.parse(
            Data(
                (#"{"status":"\#(state)","message":"exit code \#(exitCode)","reason":"NonZeroExitCode","#
                    + #""details":{"causes":[{"reason":"ExitCode","message":"\#(exitCode)"}]}}"#).utf8))
    }

    @Test func aNonZeroExitCodeIsTheCommandsCode() throws {
        let (code, error) = ExecOutcome.ended(status: try status("Failure", exitCode: "3"))
        #expect(code == 3)
        #expect(error == nil)
    }

    // Found by the kube-json fuzz target (Fuzz/Corpus/kube-json/found-exit-code-0-on-failure): a Failure whose
    // ExitCode cause said 0 ended as a success (exit 0, no error), though the server said the command failed.
    @Test func aFailureIsNeverExitCodeZero() throws {
        let (code, error) = ExecOutcome.ended(status: try status("Failure", exitCode: "0"))
        #expect(code == 1)
        #expect(error == "error: exit code 0")
    }
}
