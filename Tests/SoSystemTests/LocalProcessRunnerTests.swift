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

    /// A program that ends without reading what it is fed (kubectl that fails before it reads, a script that does not
    /// need its stdin) ends the run with its own status: the bytes not taken are dropped, and nothing of the runner's
    /// crashes (swift-subprocess's own writer stopped this process when its write failed and its pipe was left open;
    /// and this test process, which does not handle SIGPIPE as `so` does, is not ended by the failed write).
    @Test func bytesAProgramDoesNotReadAreDropped() async throws {
        for size in [16, 1 << 20] {
            for _ in 0..<20 {
                let r = try await runner.runFeeding(
                    ["sh", "-c", "echo gone >&2; exit 3"], input: [UInt8](repeating: 65, count: size), environment: nil,
                    timeout: 30)
                #expect(r.exitCode == 3 && r.stderr == "gone\n", "\(r)")
            }
        }
    }

    /// Lines come as the program prints them, a long one whole and the last one without its newline too.
    @Test func linesComeOneByOne() async throws {
        let got = Lines()
        let long = String(repeating: "x", count: 300_000)
        let code = try await runner.runLines(
            ["sh", "-c", "echo one; head -c 300000 /dev/zero | tr '\\0' x; echo; echo; printf last; exit 4"],
            environment: nil
        ) { got.add($0) }
        #expect(code == 4 && got.all == ["one", long, "", "last"], "\(got.all.map(\.count))")
    }

    /// A detached program runs on in a session of its own (its process id is its session's), at the lowest priority,
    /// stdin empty, its output appended to the file; `so` does not wait for it.
    @Test func aDetachedProgramRunsInASessionOfItsOwn() async throws {
        let t = try TempDir("so-detached")
        defer { t.cleanup() }
        try t.write("out.log", "before\n")
        // Its niceness read a moment later (the lowest priority is set as it starts): field 19 of its stat.
        let pid = try runner.spawnDetached(
            [
                "sh", "-c",
                "cat; sleep 0.3; echo \"sid=$(cut -d' ' -f6 /proc/$$/stat) pid=$$ nice=$(cut -d' ' -f19 /proc/$$/stat)\"; "
                    + "echo err >&2; echo done",
            ],
            environment: nil, output: t.file("out.log"))
        var text = ""
        for _ in 0..<600 where !text.hasSuffix("done\n") {
            try await Task.sleep(nanoseconds: 50_000_000)
            text = try t.read("out.log")
        }
        #expect(text == "before\nsid=\(pid) pid=\(pid) nice=19\nerr\ndone\n", "\(text)")
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

/// Lines handed over by `runLines`, in order.
final class Lines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
