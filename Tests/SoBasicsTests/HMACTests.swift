import Foundation
import SoBasics
import Testing

/// HMAC-SHA256 against RFC 4231's vectors and GitHub's documented example, and SHA-256's fast path against its
/// byte-by-byte one.
@Suite struct HMACTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            out.append(UInt8(hex[i..<j], radix: 16) ?? 0)
            i = j
        }
        return out
    }

    @Test(arguments: [
        (
            [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        (
            Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
        (
            [UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        ),
        (
            Array(1...25), [UInt8](repeating: 0xcd, count: 50),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        ),
        (
            [UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
        (
            [UInt8](repeating: 0xaa, count: 131),
            Array(
                ("This is a test using a larger than block-size key and a larger than block-size data. The key needs "
                    + "to be hashed before being used by the HMAC algorithm.").utf8),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
        ),
    ])
    func rfc4231(key: [UInt8], data: [UInt8], expected: String) {
        #expect(HMAC.sha256Hex(key: key, message: data) == expected)
        #expect(HMAC.sha256(key: key, message: data) == Self.bytes(expected))
    }

    @Test func rfc4231TruncatedOutput() {
        // Test case 5: only the first 128 bits are given.
        let mac = HMAC.sha256Hex(
            key: [UInt8](repeating: 0x0c, count: 20), message: Array("Test With Truncation".utf8))
        #expect(mac.hasPrefix("a3b6167473100ee06e0c796c2955552b"))
    }

    @Test func githubsDocumentedExample() {
        let secret = Array("It's a Secret to Everybody".utf8)
        let body = Array("Hello, World!".utf8)
        let header = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
        #expect(HMAC.sha256Hex(key: secret, message: body) == String(header.dropFirst(7)))
        #expect(HMAC.validGitHubSignature(header, body: body, secret: secret))
        for bad in [
            nil, "", "sha256=", String(header.dropLast()), header + "0", header.uppercased(),
            "sha1=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
            String(header.dropLast()) + "8", " " + header,
        ] {
            #expect(!HMAC.validGitHubSignature(bad, body: body, secret: secret), "\(bad ?? "nil")")
        }
        #expect(!HMAC.validGitHubSignature(header, body: Array("Hello, World?".utf8), secret: secret))
        #expect(!HMAC.validGitHubSignature(header, body: body, secret: Array("It's a Secret to Everybody!".utf8)))
        #expect(!HMAC.validGitHubSignature(header, body: body, secret: []), "an empty secret signs nothing")
    }

    @Test func constantTimeComparison() {
        #expect(HMAC.sameInConstantTime("abc", "abc"))
        #expect(!HMAC.sameInConstantTime("abc", "abd"))
        #expect(!HMAC.sameInConstantTime("abc", "abcd"))
        #expect(!HMAC.sameInConstantTime("", ""))
    }

    @Test func sha256sBlockPathIsItsByteByBytePath() {
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        for n in [0, 1, 55, 56, 63, 64, 65, 127, 128, 129, 1000] {
            let data = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            // A lazy map has no contiguous storage: the byte-by-byte path.
            #expect(SHA256.hex(data) == SHA256.hex(data.lazy.map { $0 }), "\(n)")
            // Fed in uneven pieces: the buffer's path and the blocks' path mixed.
            var h = SHA256()
            var i = 0
            var step = 1
            while i < n {
                let j = min(n, i + step)
                h.update(Array(data[i..<j]))
                i = j
                step = step * 3 + 1
            }
            #expect(h.hex() == SHA256.hex(data), "\(n) in pieces")
        }
        #expect(
            SHA256.hex([UInt8](repeating: 0x61, count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// A copy of a SHA-256 in progress goes on on its own: the original's digest is not changed by the copy's input.
    @Test func aCopyOfASHA256GoesOnOnItsOwn() {
        var a = SHA256()
        a.update("ab")
        var b = a
        b.update("x")
        a.update("c")
        #expect(a.hex() == SHA256.hex(Array("abc".utf8)))
        #expect(b.hex() == SHA256.hex(Array("abx".utf8)))
    }
}
