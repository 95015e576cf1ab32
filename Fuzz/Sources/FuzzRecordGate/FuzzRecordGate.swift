import Foundation
import FuzzSupport
import SoBasics
import SoCompose
import SoStack

@testable import SoRecord

/// A revision of a deployment's record, as anyone who may write Secrets in its namespace can write it. The input is
/// cut at NULs: the first part is the stored record (read as gzip, and as the JSON inside one), the next parts are
/// spec.yml, deployment.yml, stack.yml, config.env and a compose file of a revision written into a scratch directory
/// as the record's gate writes it. Properties: a record that reads is written and read back to itself; whatever the
/// gate's reads (`RecordReads`) accept, the deployment's load and the files its start reads read nothing outside
/// the scratch directory.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecordGate(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Fuzz.data(start, count)
    let parts = data.split(separator: 0, omittingEmptySubsequences: false).map { Data($0) }
    var records: [DeploymentRecord] = []
    for stored in [parts[0], (try? Gzip.compress(parts[0])) ?? Data()] {
        guard let record = try? DeploymentRecord.decoded(stored, what: "Secret ns/so.record.d.v1") else { continue }
        roundTrip(record)
        records.append(record)
    }
    let names = ["spec.yml", "deployment.yml", "stack.yml", "config.env", "compose/docker-compose-web.yml"]
    let files = zip(names, parts.dropFirst()).map { DeploymentRecord.File(path: $0, data: $1) }
    if !files.isEmpty {
        records.append(
            DeploymentRecord(
                deployment: "d", revision: 1, parent: nil, writer: .init(user: "u", host: "h"), time: .now,
                verb: "start",
                files: files))
    }
    for record in records { gate(record) }
    return 0
}

/// A record that reads is written (`encoded`) and read back to the same record.
func roundTrip(_ record: DeploymentRecord) {
    do {
        let back = try DeploymentRecord.decoded(try record.encoded(), what: "the record written again")
        Fuzz.check(back == record, "a record written and read back differs: \(record.files.map(\.path))")
    } catch {
        Fuzz.check(false, "a record that read does not read back once written: \(error)")
    }
}

/// The files this machine has outside the deployments: what a hostile revision would want read.
func machine() -> MemoryFileSystem {
    let fs = MemoryFileSystem(currentDirectory: "/home/user", homeDirectory: "/home/user")
    fs.addFile("/home/user/.ssh/id_ed25519", "PRIVATE\n")
    fs.addFile("/home/user/.aws/credentials", "AWS_SECRET=1\n")
    fs.addFile("/etc/passwd", "root:x:0:0\n")
    fs.addFile("/home/user/stacks/app/stack.yml", "version: \"1.0\"\nname: app\npods: [web]\n")
    fs.addFile("/home/user/stacks/app/docker-compose-web.yml", "services:\n  web:\n    image: x\n")
    try? fs.createDirectory("/home/user/.so/deployments")
    return fs
}

/// The record written into a scratch directory as the gate writes it; if its reads accept it, loading it (and the
/// files a start reads) through a file system that records every read reads nothing outside the scratch directory.
func gate(_ record: DeploymentRecord) {
    let fs = machine()
    let place = "/home/user/.so/deployments/d"
    guard let scratch = try? fs.temporaryDirectory(beside: place, prefix: "d.pulling") else { return }
    // A record that names a file outside the layout is refused here, before any file is written.
    do { try RecordFiles.write(record, to: scratch, fs: fs) } catch {
        // Refused only for a path outside the layout, or for paths that cannot all be files (one twice, or one a
        // folder of another).
        let paths = record.files.map(\.path)
        let clash = Set(paths).count != paths.count || paths.contains { p in paths.contains { $0.hasPrefix(p + "/") } }
        Fuzz.check(
            paths.contains { !RecordFiles.isSafe($0) } || clash, "a record of safe paths was not written: \(error)")
        return
    }
    for f in record.files {
        Fuzz.check(Path.isWithin(fs.realpath(Path.join(scratch, f.path)), scratch), "\(f.path) was written outside")
    }
    let reads = RecordReads(dir: scratch, fs: fs, origin: RecordOrigin(namespace: "d", deployment: "d"))
    guard case .success(let (identity, spec)) = reads.identity() else { return }
    let findings = reads.findings(identity, spec, before: nil)
    let (model, outside) = reads.load()
    guard !findings.contains(where: { $0.kind == .reach }), outside == nil, model != nil else { return }
    // Accepted: the same load, unconfined, reads only the scratch directory.
    let recording = RecordingFileSystem(base: fs)
    let probe = DiagnosticSink.dropped("fuzz")
    guard let loaded = try? DeploymentLoader.load(scratch, fs: recording, diagnostics: probe) else {
        Fuzz.check(false, "the confined load read, the unconfined one did not")
        return
    }
    let root = fs.realpath(scratch)
    for path in recording.read where !Path.isWithin(fs.realpath(path), root) {
        Fuzz.check(false, "an accepted revision's load read \(path), outside \(root)")
    }
    // And what its start reads: compose secrets' files, credentials files, the pull token's file.
    var started: [String] = loaded.credentialsFiles.map(\.path)
    if let token = loaded.spec.sections.imagePullSecret?.tokenFile { started.append(token) }
    started += spec.credentialsFiles
    for c in loaded.pods + loaded.jobs {
        for s in c.compose.secrets {
            if let file = s.file { started.append(Path.join(Path.dirname(Path.join(scratch, c.relativePath)), file)) }
        }
    }
    for p in started {
        let abs =
            p.hasPrefix("/") || p.hasPrefix("~")
            ? Path.normalize(Path.expandTilde(p, home: fs.homeDirectory)) : Path.absolute(p, relativeTo: scratch)
        Fuzz.check(Path.isWithin(fs.realpath(abs), root), "an accepted revision's start reads \(p), outside \(root)")
    }
}

/// `base`, remembering every path whose content is read or listed.
final class RecordingFileSystem: FileSystem, @unchecked Sendable {
    let base: FileSystem
    private let lock = NSLock()
    private var paths: [String] = []
    var read: [String] { lock.withLock { paths } }
    init(base: FileSystem) { self.base = base }

    func note(_ path: String) { lock.withLock { paths.append(path) } }
    func kind(_ path: String) -> FileKind? { base.kind(path) }
    func readData(_ path: String) throws -> Data {
        note(path)
        return try base.readData(path)
    }
    func write(_ data: Data, to path: String) throws { try base.write(data, to: path) }
    func list(_ directory: String) throws -> [String] {
        note(directory)
        return try base.list(directory)
    }
    func createDirectory(_ path: String) throws { try base.createDirectory(path) }
    func remove(_ path: String) throws { try base.remove(path) }
    func removeTree(_ path: String) throws { try base.removeTree(path) }
    func move(_ from: String, to: String) throws { try base.move(from, to: to) }
    func replace(_ path: String, with from: String) throws { try base.replace(path, with: from) }
    func size(_ path: String) throws -> UInt64 {
        note(path)
        return try base.size(path)
    }
    func realpath(_ path: String) -> String { base.realpath(path) }
    func isExecutable(_ path: String) -> Bool { base.isExecutable(path) }
    func setExecutable(_ path: String, _ executable: Bool) throws { try base.setExecutable(path, executable) }
    var currentDirectory: String { base.currentDirectory }
    var homeDirectory: String { base.homeDirectory }
    func temporaryDirectory(beside path: String, prefix: String) throws -> String {
        try base.temporaryDirectory(beside: path, prefix: prefix)
    }
    func modificationDate(_ path: String) -> Date? { base.modificationDate(path) }
}
