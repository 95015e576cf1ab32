import Foundation
import SoSystem
import SoTestSupport
import Testing

@testable import SoBasics

/// The live process runner (swift-subprocess), on `sh`.
@Suite struct ProcessRunnerTests {
    let runner = LocalProcessRunner(environment: ["PATH": "/usr/bin:/bin", "GREETING": "hi"])

    @Test func capturesOutputExitCodeDirectoryAndEnvironment() async throws {
        let t = try TempDir("so-proc")
        defer { t.cleanup() }
        let r = try await runner.run(
            ["sh", "-c", "echo \"$GREETING from $(pwd)\"; echo oops >&2; read x; echo \"stdin:$x\"; exit 3"],
            workingDirectory: t.path, environment: nil, timeout: 30)
        #expect(r.exitCode == 3)
        #expect(r.stdout == "hi from \(LocalFileSystem().realpath(t.path))\nstdin:\n")
        #expect(r.stderr == "oops\n")
        // A given environment replaces the inherited one.
        let own = try await runner.run(
            ["sh", "-c", "echo \"[$GREETING]\""], workingDirectory: nil, environment: ["PATH": "/usr/bin:/bin"],
            timeout: nil)
        #expect(own.stdout == "[]\n")
    }

    @Test func bytesFedAreTheProgramsStdinAndNoFile() async throws {
        let r = try await runner.runFeeding(
            ["sh", "-c", "cat; echo \" end $#\"; exit 2"], input: Array("it's fed\nsecond".utf8), environment: nil,
            timeout: 30)
        #expect(r.exitCode == 2 && r.stdout == "it's fed\nsecond end 0\n", "\(r)")
    }

    @Test func aMissingProgramSaysSoAsAField() async throws {
        await #expect { _ = try await runner.run(["no-such-program-so-test"]) } throws: { e in
            (e as? SoError)?.missingProgram == "no-such-program-so-test"
        }
    }

    @Test func aProgramPastItsTimeoutIsStoppedAndNamed() async throws {
        await #expect {
            _ = try await runner.run(
                ["sh", "-c", "exec sleep 30"], workingDirectory: nil, environment: nil, timeout: 0.3)
        } throws: { e in
            (e as? SoError)?.message == "sh did not finish within 0.3 s and was stopped"
        }
    }

    @Test func attachedRunsReturnTheExitCode() async throws {
        #expect(try await runner.runAttached(["sh", "-c", "exit 4"], environment: nil) == 4)
    }
}
