import Foundation

/// Test-only PKI, made with openssl the first time a test asks for it (in a temporary directory that is removed
/// again; nothing is checked in and nothing else trusts it): a CA, a server certificate for 127.0.0.1, localhost
/// and kube.test (serial 0x1001), one for api.internal only (0x1002), and two client certificates (serials
/// 0x2001, 0x2002). EC P-256 keys in PKCS#8.
enum TestPKI {
    struct Material {
        var ca, serverCertificate, serverKey, namedCertificate, namedKey: String
        var client1Certificate, client1Key, client2Certificate, client2Key: String
    }

    /// Whether openssl is here to make the material (the suites that need it say so when it is not).
    static let available = FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")

    static var ca: String { material.ca }
    static var serverCertificate: String { material.serverCertificate }
    static var serverKey: String { material.serverKey }
    static var namedCertificate: String { material.namedCertificate }
    static var namedKey: String { material.namedKey }
    static var client1Certificate: String { material.client1Certificate }
    static var client1Key: String { material.client1Key }
    static var client2Certificate: String { material.client2Certificate }
    static var client2Key: String { material.client2Key }

    private static let material: Material = {
        do { return try make() } catch { fatalError("cannot make the test PKI with openssl: \(error)") }
    }()

    private static let script = """
        set -e
        key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
        key ca.key
        openssl req -x509 -new -key ca.key -subj /CN=so-test-ca -days 36500 -set_serial 0x1000 \\
          -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign -out ca.pem 2>/dev/null
        leaf() {  # name subject serial usage [subjectAltName]
          key "$1.key"
          openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
          printf 'basicConstraints=CA:FALSE\\nkeyUsage=critical,digitalSignature,keyEncipherment\\nextendedKeyUsage=%s\\n' "$4" > "$1.ext"
          [ -z "$5" ] || printf 'subjectAltName=%s\\n' "$5" >> "$1.ext"
          openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -set_serial "$3" -days 36500 -extfile "$1.ext" -out "$1.pem" 2>/dev/null
        }
        leaf server /CN=so-test-server 0x1001 serverAuth IP:127.0.0.1,DNS:localhost,DNS:kube.test
        leaf named /CN=api.internal 0x1002 serverAuth DNS:api.internal
        leaf client1 /CN=exec-user-1/O=so-test 0x2001 clientAuth
        leaf client2 /CN=exec-user-2/O=so-test 0x2002 clientAuth
        """

    private static func make() throws -> Material {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("so-test-pki-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", script]
        p.currentDirectoryURL = dir
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
        func read(_ name: String) throws -> String {
            try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
        }
        return Material(
            ca: try read("ca.pem"), serverCertificate: try read("server.pem"), serverKey: try read("server.key"),
            namedCertificate: try read("named.pem"), namedKey: try read("named.key"),
            client1Certificate: try read("client1.pem"), client1Key: try read("client1.key"),
            client2Certificate: try read("client2.pem"), client2Key: try read("client2.key"))
    }
}
