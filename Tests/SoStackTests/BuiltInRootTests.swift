import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

@testable import SoStack

/// Where `so` finds its built-in stacks: `--root`, `SO_ROOT`, `<prefix>/share/so` beside an installed
/// `<prefix>/bin/so` (through the executable's real path), or the checkout it was built in.
@Suite struct BuiltInRootTests {
    /// `make install PREFIX=/opt/so`'s layout.
    static func installed(at prefix: String = "/opt/so") -> MemoryFileSystem {
        let fs = MemoryFileSystem(currentDirectory: "/home/user/project")
        fs.addFile("\(prefix)/bin/so", executable: true)
        fs.addFile("\(prefix)/share/so/stacks/example/stack.yml", "name: example\npods: [web]\n")
        fs.addFile("\(prefix)/share/so/compose/docker-compose-web.yml", "services:\n  web:\n    image: nginx\n")
        return fs
    }

    func lookUp(_ fs: FileSystem, _ exe: String, env: [String: String] = [:], explicit: String? = nil)
        -> BuiltInRootLookup
    {
        StackLocator.lookUpBuiltInRoot(explicit: explicit, environment: env, executable: exe, fs: fs)
    }

    @Test func installedBinaryFindsShareSo() throws {
        let fs = Self.installed()
        let found = lookUp(fs, "/opt/so/bin/so")
        #expect(found.root == "/opt/so/share/so")
        let locator = StackLocator(
            fs: fs, builtInRoot: found.root, builtInSearched: found.searched, environment: [:],
            currentDirectory: fs.currentDirectory)
        #expect(try locator.builtInStackNames() == ["example"])
        let stack = try locator.resolve("example", diagnostics: DiagnosticSink())
        #expect(stack.isBuiltIn && stack.stackDir == "/opt/so/share/so/stacks/example")
    }

    @Test func symlinkedBinaryResolvesToItsPrefix() {
        let fs = Self.installed()
        fs.addSymlink("/usr/local/bin/so", to: "../../../opt/so/bin/so")
        #expect(lookUp(fs, "/usr/local/bin/so").root == "/opt/so/share/so")
        fs.addSymlink("/opt/current", to: "/opt/so")  // a symlinked prefix, as version managers make
        #expect(lookUp(fs, "/opt/current/bin/so").root == "/opt/so/share/so")
    }

    @Test func checkoutBuildFindsTheCheckout() {
        let fs = MemoryFileSystem()
        fs.addFile("/src/so/.build/x86_64-unknown-linux-gnu/debug/so", executable: true)
        fs.addSymlink("/src/so/.build/debug", to: "x86_64-unknown-linux-gnu/debug")
        fs.addFile("/src/so/stacks/example/stack.yml", "name: example\n")
        fs.addFile("/src/so/compose/docker-compose-web.yml", "services: {}\n")
        #expect(lookUp(fs, "/src/so/.build/debug/so").root == "/src/so")
    }

    @Test func explicitAndEnvironmentWin() {
        let fs = Self.installed()
        #expect(lookUp(fs, "/opt/so/bin/so", env: ["SO_ROOT": "stacks-here"]).root == "/home/user/project/stacks-here")
        #expect(lookUp(fs, "/opt/so/bin/so", env: ["SO_ROOT": "/env"], explicit: "/cli").root == "/cli")
        #expect(lookUp(fs, "/opt/so/bin/so", env: ["SO_ROOT": ""]).root == "/opt/so/share/so")
    }

    /// A binary copied alone finds nothing, and commands that need built-in stacks say where they looked.
    @Test func copiedBinaryFailsNamingWhereItLooked() throws {
        let fs = Self.installed()
        fs.addFile("/tmp/x/so", executable: true)
        let found = lookUp(fs, "/tmp/x/so")
        #expect(found.root == nil)
        #expect(found.searched == ["/tmp/share/so", "a checkout at or above /tmp/x"])
        let locator = StackLocator(
            fs: fs, builtInRoot: nil, builtInSearched: found.searched, environment: [:], currentDirectory: "/")
        for body in [
            { _ = try locator.builtInStackNames() },
            { _ = try locator.resolve("example", diagnostics: DiagnosticSink()) },
        ] {
            do {
                try body()
                Issue.record("expected an error")
            } catch let e as SoError {
                #expect(e.message.hasPrefix("no built-in stacks found"))
                #expect(e.message.contains("looked in /tmp/share/so, a checkout at or above /tmp/x"), "\(e.message)")
                #expect(
                    e.hint?.contains("--root") == true && e.hint?.contains("SO_ROOT") == true
                        && e.hint?.contains("make install") == true)
                #expect(!e.line.contains("\n"))
            }
        }
    }

    @Test func rootWithoutStacksIsAnError() {
        let fs = MemoryFileSystem()
        try? fs.createDirectory("/empty")
        let found = lookUp(fs, "/opt/so/bin/so", explicit: "/empty")
        let locator = StackLocator(
            fs: fs, builtInRoot: found.root, builtInSearched: found.searched, environment: [:], currentDirectory: "/")
        #expect(throws: SoError.self) { try locator.builtInStackNames() }
    }
}

/// `make install-share` (the part of `make install` that needs no build) lays out `share/so` where the
/// lookup finds it, and every built-in stack loads from there with its compose files.
@Suite struct InstallLayoutTests {
    static let make = LocalProcessRunner.which("make", path: ProcessInfo.processInfo.environment["PATH"] ?? "")

    /// `make install-bin` installs the release binary and strips it (STRIP names the tool; here a stand-in
    /// that records its argument, with a stand-in `swift` naming where the build put the binary).
    @Test(.enabled(if: make != nil, "make is not installed"))
    func theInstalledBinaryIsStripped() async throws {
        let tmp = try TempDir("so-install-bin")
        defer { tmp.cleanup() }
        try tmp.write("build/so", "binary\n")
        try tmp.write("swift", "#!/bin/sh\necho \(tmp.file("build"))\n")
        try tmp.write("strip", "#!/bin/sh\necho \"$@\" > \(tmp.file("stripped"))\n")
        for tool in ["swift", "strip"] { chmod(tmp.file(tool), 0o755) }
        let prefix = tmp.file("prefix")
        let r = try await LocalProcessRunner().run(
            [
                try #require(Self.make), "-s", "-C", RepoPaths.root, "install-bin", "PREFIX=\(prefix)",
                "SWIFT=\(tmp.file("swift"))", "STRIP=\(tmp.file("strip"))",
            ], workingDirectory: nil, environment: nil, timeout: 60)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(try tmp.read("prefix/bin/so") == "binary\n")
        #expect(try tmp.read("stripped") == Path.join(prefix, "bin/so") + "\n")
    }

    @Test(.enabled(if: make != nil, "make is not installed"))
    func installedShareHoldsEveryBuiltInStack() async throws {
        let tmp = try TempDir("so-install")
        defer { tmp.cleanup() }
        let prefix = tmp.file("prefix")
        let r = try await LocalProcessRunner().run(
            [try #require(Self.make), "-s", "-C", RepoPaths.root, "install-share", "PREFIX=\(prefix)"],
            workingDirectory: nil, environment: nil, timeout: 60)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        try LocalFileSystem().writeText("#!/bin/sh\n", to: Path.join(prefix, "bin/so"))
        let fs = LocalFileSystem()
        let found = StackLocator.lookUpBuiltInRoot(
            explicit: nil, environment: [:], executable: Path.join(prefix, "bin/so"), fs: fs)
        #expect(found.root == Path.join(fs.realpath(prefix), "share/so"))
        let installed = StackLocator(fs: fs, builtInRoot: found.root, environment: [:], currentDirectory: tmp.path)
        let checkout = StackLocator(fs: fs, builtInRoot: RepoPaths.root, environment: [:], currentDirectory: tmp.path)
        let names = try installed.builtInStackNames()
        let expected = try checkout.builtInStackNames()
        #expect(!names.isEmpty && names == expected)
        for name in names {
            let stack = try installed.resolve(name, diagnostics: DiagnosticSink())
            for c in stack.pods + stack.optionalPods + stack.jobs {
                #expect(fs.isFile(c.composePath), "\(name)/\(c.name)")
            }
        }
        for dir in ["stacks", "compose", "compose-jobs", "config", "container-build"] {
            let source = try fs.walk(Path.join(RepoPaths.root, dir)).map(\.relative)
            #expect(try fs.walk(Path.join(found.root ?? "", dir)).map(\.relative) == source, "\(dir)")
        }
    }
}
