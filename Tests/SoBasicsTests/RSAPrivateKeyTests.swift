import Foundation
import Testing

@testable import SoBasics

/// RS256 signing against OpenSSL's own: a key made by `openssl genrsa` for the run (none is committed), the same
/// message signed by both, byte for byte (PKCS#1 v1.5 is deterministic), in PKCS#1 and PKCS#8 forms; and keys that
/// are not keys refused with their source named and no key bytes in the message.
@Suite struct RSAPrivateKeyTests {
    static let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// `openssl ARGS` in `dir`; its stdout.
    @discardableResult
    static func run(_ args: [String], in dir: String) throws -> Data {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: openssl!)
        p.arguments = args
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw SoError("openssl \(args.joined(separator: " ")) failed") }
        return data
    }

    /// A new 2048-bit key in a new directory: (directory, the PKCS#1 PEM, the PKCS#8 PEM).
    static func newKey() throws -> (String, String, String) {
        let dir = NSTemporaryDirectory() + "so-rsa-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // -traditional: PKCS#1 (BEGIN RSA PRIVATE KEY), as GitHub hands out an App's key; OpenSSL 3 writes PKCS#8
        // without it.
        try run(["genrsa", "-traditional", "-out", "key.pem", "2048"], in: dir)
        try run(["pkcs8", "-topk8", "-nocrypt", "-in", "key.pem", "-out", "key8.pem"], in: dir)
        return (
            dir, try String(contentsOfFile: dir + "/key.pem", encoding: .utf8),
            try String(contentsOfFile: dir + "/key8.pem", encoding: .utf8)
        )
    }

    @Test(.enabled(if: openssl != nil, "openssl is not installed"))
    func signaturesAreOpenSSLsByteForByte() throws {
        let (dir, pkcs1, pkcs8) = try Self.newKey()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let header = ["BEGIN", "PRIVATE", "KEY"]  // a PEM's header, said in parts (no key-shaped line in the tree)
        #expect(pkcs1.contains("\(header[0]) RSA \(header[1]) \(header[2])"))
        #expect(pkcs8.contains(header.joined(separator: " ")))
        let a = try RSAPrivateKey(pem: pkcs1, source: "key.pem")
        let b = try RSAPrivateKey(pem: pkcs8, source: "key8.pem")
        #expect(a.bits == 2048 && a.byteCount == 256)
        for message in ["", "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIxIn0", String(repeating: "x", count: 1000)] {
            try Data(message.utf8).write(to: URL(fileURLWithPath: dir + "/m"))
            let theirs = [UInt8](try Self.run(["dgst", "-sha256", "-sign", "key.pem", "m"], in: dir))
            let ours = try a.signSHA256(Array(message.utf8))
            #expect(ours == theirs, "message of \(message.count) bytes")
            #expect(try b.signSHA256(Array(message.utf8)) == theirs)
            #expect(a.verifySHA256(Array(message.utf8), signature: theirs))
            var bent = theirs
            bent[100] ^= 1
            #expect(!a.verifySHA256(Array(message.utf8), signature: bent))
            #expect(!a.verifySHA256(Array((message + "!").utf8), signature: theirs))
        }
    }

    @Test(.enabled(if: openssl != nil, "openssl is not installed"))
    func aKeyPastedWithEscapedLineBreaksIsRead() throws {
        let (dir, pkcs1, _) = try Self.newKey()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let flat = pkcs1.replacingOccurrences(of: "\n", with: "\\n")
        let key = try RSAPrivateKey(pem: flat, source: "GITHUB_APP_PRIVATE_KEY")
        #expect(key.bits == 2048)
    }

    @Test(.enabled(if: openssl != nil, "openssl is not installed"))
    func aBrokenKeyIsRefusedNamingItsSourceNotItsBytes() throws {
        let (dir, pkcs1, _) = try Self.newKey()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let lines = pkcs1.split(separator: "\n").map(String.init)
        let body = lines.dropFirst().dropLast()
        // The body cut short, and a line of it dropped: the DER's lengths run past its end.
        let cuts = [
            ([lines[0]] + body.prefix(body.count / 2) + [lines.last!]).joined(separator: "\n"),
            ([lines[0]] + body.dropFirst(3) + [lines.last!]).joined(separator: "\n"),
        ]
        for pem in cuts {
            let e = #expect(throws: SoError.self) { try RSAPrivateKey(pem: pem, source: "k.pem") }
            #expect(e?.message.hasPrefix("k.pem: ") == true)
            for line in body.prefix(5) { #expect(e?.message.contains(line.prefix(16)) == false) }
        }
    }

    /// A PEM block of `label` around `body` (built here: no key-shaped block sits in the repository's files).
    static func pem(_ label: String, _ body: String, end: Bool = true) -> String {
        let dashes = String(repeating: "-", count: 5)
        return "\(dashes)BEGIN \(label)\(dashes)\n\(body)\n" + (end ? "\(dashes)END \(label)\(dashes)" : "")
    }

    /// DER bytes as a PEM body: every body below is made here from a few bytes, none copied from a key.
    static func body(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    @Test(arguments: [
        ("", "no PEM private key"),
        (pem("RSA PRIVATE KEY", "!!!!"), "not base64"),
        // An empty SEQUENCE; a lone INTEGER 0 where the SEQUENCE should be.
        (pem("RSA PRIVATE KEY", body([0x30, 0x00])), "not an RSA key's DER"),
        (pem("RSA PRIVATE KEY", body([0x02, 0x01, 0x00])), "not an RSA key's DER"),
        (pem("EC PRIVATE KEY", body([0x30, 0x03, 0x02, 0x01, 0x01])), "no PEM private key"),
        (pem("ENCRYPTED PRIVATE KEY", body([0x30, 0x00])), "encrypted"),
        // A header with no end line.
        (pem("RSA PRIVATE KEY", body([0x30, 0x82, 0x01, 0x3a, 0x02, 0x01, 0x00]), end: false), "no PEM private key"),
        // A SEQUENCE whose long-form length claims 2^24 bytes.
        (pem("RSA PRIVATE KEY", body([0x30, 0x83, 0xff, 0xff, 0xff])), "not an RSA key's DER"),
    ])
    func whatIsNotAKeyIsRefused(pem: String, says: String) {
        let e = #expect(throws: SoError.self) { try RSAPrivateKey(pem: pem, source: "GITHUB_APP_PRIVATE_KEY") }
        #expect(e?.message.hasPrefix("GITHUB_APP_PRIVATE_KEY: ") == true)
        #expect(e?.message.contains(says) == true, "\(e?.message ?? "")")
        #expect(e?.hint != nil)
    }

    /// A key whose private exponent was changed (one bit of its DER): read, it is an error naming its source; the
    /// hand-written RSA before issue 64 took it and stopped the loop on a `precondition` when it signed.
    @Test(.enabled(if: openssl != nil, "openssl is not installed"))
    func aKeyWhosePartsDisagreeIsAnErrorNotACrash() throws {
        let (dir, pkcs1, _) = try Self.newKey()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var der = [UInt8](try Self.run(["rsa", "-in", "key.pem", "-outform", "DER", "-traditional"], in: dir))
        // The DER's SEQUENCE holds version, n, e, then d: a byte in the middle of d (n is 257 bytes from offset 11).
        der[11 + 257 + 5 + 4 + 100] ^= 0x10
        let bent = Self.pem("RSA PRIVATE KEY", Data(der).base64EncodedString(options: .lineLength64Characters))
        let e = #expect(throws: SoError.self) { try RSAPrivateKey(pem: bent, source: "GITHUB_APP_PRIVATE_KEY_FILE") }
        #expect(
            e?.message
                == "GITHUB_APP_PRIVATE_KEY_FILE: the private key's parts do not agree (its exponents or primes are not one key's)"
        )
        #expect(throws: Never.self) { try RSAPrivateKey(pem: pkcs1, source: "k") }
    }

    @Test(.enabled(if: openssl != nil, "openssl is not installed"))
    func aKeyBelow2048BitsIsRefused() throws {
        let dir = NSTemporaryDirectory() + "so-rsa-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.run(["genrsa", "-traditional", "-out", "small.pem", "1024"], in: dir)
        let pem = try String(contentsOfFile: dir + "/small.pem", encoding: .utf8)
        let e = #expect(throws: SoError.self) { try RSAPrivateKey(pem: pem, source: "small.pem") }
        #expect(e?.message == "small.pem: the private key's modulus has 1024 bits, not 2048 to 16384")
    }
}
