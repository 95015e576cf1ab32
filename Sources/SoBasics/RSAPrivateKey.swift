import Foundation

/// An RSA private key, read from PEM (PKCS#1 `RSA PRIVATE KEY`, as GitHub hands an App's key out, or PKCS#8
/// `PRIVATE KEY`), that signs with RSASSA-PKCS1-v1_5 and SHA-256 (JWT's RS256). In Swift, for one use: the GitHub
/// loop's App token, signed once per token (about an hour). Not constant-time: whoever could time it could already
/// read the key from the loop's Secret. Errors name the key's source, never its bytes.
public struct RSAPrivateKey: Sendable {
    /// The modulus and the two exponents, little-endian 64-bit limbs.
    let n: [UInt64]
    let e: [UInt64]
    let d: [UInt64]
    /// The modulus' length in bytes: a signature's length.
    public let byteCount: Int

    public var bits: Int { Self.bitLength(n) }

    /// The key in `pem`; `source` names it in errors (a file, a variable).
    public init(pem: String, source: String) throws {
        // A PEM pasted into a variable sometimes keeps its line breaks as the two characters \n.
        let text = pem.replacingOccurrences(of: "\\n", with: "\n")
        let hint =
            "give the App's private key as GitHub downloads it (a PEM file whose first line names an RSA private key)"
        guard !text.contains("ENCRYPTED") else {
            throw SoError(
                "\(source): the private key is encrypted", hint: "decrypt it: openssl rsa -in KEY -out KEY.pem")
        }
        let kinds = [("RSA PRIVATE KEY", false), ("PRIVATE KEY", true)]
        guard
            let (label, wrapped) = kinds.first(where: { text.contains("-----BEGIN \($0.0)-----") }),
            let begin = text.range(of: "-----BEGIN \(label)-----"),
            let end = text.range(of: "-----END \(label)-----", range: begin.upperBound..<text.endIndex)
        else { throw SoError("\(source): no PEM private key (its BEGIN and END lines) in it", hint: hint) }
        let body = text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        guard let der = Data(base64Encoded: String(body)) else {
            throw SoError("\(source): the private key's PEM body is not base64", hint: hint)
        }
        do { try self.init(der: [UInt8](der), pkcs8: wrapped) } catch let e as DERError {
            throw SoError("\(source): the private key is not an RSA key's DER (\(e.what))", hint: hint)
        }
    }

    struct DERError: Error { let what: String }

    init(der: [UInt8], pkcs8: Bool) throws {
        var outer = DERReader(der[...])
        var key = try outer.sequence()
        if pkcs8 {
            // PrivateKeyInfo: version, AlgorithmIdentifier (rsaEncryption), OCTET STRING holding RSAPrivateKey.
            _ = try key.integer()
            var alg = try key.sequence()
            let rsaEncryption: [UInt8] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01]
            guard try Array(alg.element(tag: 0x06)) == rsaEncryption else { throw DERError(what: "not rsaEncryption") }
            var inner = DERReader(try key.element(tag: 0x04))
            key = try inner.sequence()
        }
        guard try key.integer() == [0] else { throw DERError(what: "a multi-prime or unknown version") }
        let n = try key.integer()
        let e = try key.integer()
        let d = try key.integer()
        let bits = Self.bitLength(Self.limbs(n))
        guard (1024...16384).contains(bits), n.last.map({ $0 & 1 == 1 }) == true else {
            throw DERError(what: "a modulus of \(bits) bits")
        }
        guard !e.isEmpty, !d.isEmpty, e.count <= n.count, d.count <= n.count else {
            throw DERError(what: "exponents out of range")
        }
        self.byteCount = n.count
        self.n = Self.limbs(n)
        self.e = Self.limbs(e)
        self.d = Self.limbs(d)
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256 of `message` (RFC 8017 8.2.1): deterministic, so the same key and message
    /// give the same bytes as `openssl dgst -sha256 -sign`. Checked with the public exponent before it is returned.
    public func signSHA256(_ message: some Sequence<UInt8>) -> [UInt8] {
        let em = Self.encodedSHA256(SHA256.digest(message), length: byteCount)
        let m = Self.limbs(em[...])
        let arithmetic = Montgomery(n)
        let s = arithmetic.power(m, d)
        precondition(arithmetic.power(s, e) == Self.padded(m, n.count), "an RSA signature that does not verify")
        return Self.bytes(s, count: byteCount)
    }

    /// Whether `signature` is this key's RSASSA-PKCS1-v1_5 SHA-256 signature of `message` (the public half).
    public func verifySHA256(_ message: some Sequence<UInt8>, signature: [UInt8]) -> Bool {
        guard signature.count == byteCount else { return false }
        let s = Self.limbs(signature[...])
        guard Self.compare(s, n) < 0 else { return false }
        let em = Self.encodedSHA256(SHA256.digest(message), length: byteCount)
        return Montgomery(n).power(s, e) == Self.padded(Self.limbs(em[...]), n.count)
    }

    /// EMSA-PKCS1-v1_5: 00 01 FF… 00, SHA-256's DigestInfo, the digest.
    static func encodedSHA256(_ digest: [UInt8], length: Int) -> [UInt8] {
        let info: [UInt8] = [
            0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04,
            0x20,
        ]
        let t = info + digest
        return [0x00, 0x01] + [UInt8](repeating: 0xff, count: length - t.count - 3) + [0x00] + t
    }

    // MARK: numbers as little-endian limbs

    /// Big-endian bytes as limbs (leading zeros dropped, at least one limb).
    static func limbs(_ bytes: ArraySlice<UInt8>) -> [UInt64] {
        var out: [UInt64] = []
        var i = bytes.endIndex
        while i > bytes.startIndex {
            let from = max(bytes.startIndex, i - 8)
            out.append(bytes[from..<i].reduce(0) { $0 << 8 | UInt64($1) })
            i = from
        }
        while out.count > 1, out.last == 0 { out.removeLast() }
        return out.isEmpty ? [0] : out
    }

    static func limbs(_ bytes: [UInt8]) -> [UInt64] { limbs(bytes[...]) }

    /// Limbs as `count` big-endian bytes.
    static func bytes(_ x: [UInt64], count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        for i in 0..<count {
            let limb = i / 8
            guard limb < x.count else { break }
            out[count - 1 - i] = UInt8(truncatingIfNeeded: x[limb] >> (UInt64(i % 8) * 8))
        }
        return out
    }

    static func padded(_ x: [UInt64], _ count: Int) -> [UInt64] {
        x.count >= count ? Array(x.prefix(count)) : x + [UInt64](repeating: 0, count: count - x.count)
    }

    static func bitLength(_ x: [UInt64]) -> Int {
        guard let top = x.lastIndex(where: { $0 != 0 }) else { return 0 }
        return top * 64 + (64 - x[top].leadingZeroBitCount)
    }

    /// -1, 0 or 1, for numbers of any limb counts.
    static func compare(_ a: [UInt64], _ b: [UInt64]) -> Int {
        for i in stride(from: max(a.count, b.count) - 1, through: 0, by: -1) {
            let x = i < a.count ? a[i] : 0
            let y = i < b.count ? b[i] : 0
            if x != y { return x < y ? -1 : 1 }
        }
        return 0
    }

    /// `a - b` in place, `a >= b`, over `a`'s limbs.
    static func subtract(_ a: inout [UInt64], _ b: [UInt64]) {
        var borrow = false
        for i in 0..<a.count {
            let (d1, o1) = a[i].subtractingReportingOverflow(i < b.count ? b[i] : 0)
            let (d2, o2) = d1.subtractingReportingOverflow(borrow ? 1 : 0)
            a[i] = d2
            borrow = o1 || o2
        }
    }

    /// Montgomery arithmetic modulo an odd `n` (CIOS multiplication, R = 2^(64·limbs)).
    struct Montgomery {
        let n: [UInt64]
        let k: Int
        let inverse: UInt64  // -n⁻¹ mod 2^64
        let r2: [UInt64]  // R² mod n

        init(_ n: [UInt64]) {
            self.n = n
            k = n.count
            var x = n[0]  // n·x ≡ 1 (mod 8); each step doubles the bits that are right
            for _ in 0..<6 { x = x &* (2 &- n[0] &* x) }
            inverse = 0 &- x
            // R² mod n by doubling 1, 2·64·k times.
            var r = [UInt64](repeating: 0, count: n.count + 1)
            r[0] = 1
            for _ in 0..<(2 * 64 * n.count) {
                var carry: UInt64 = 0
                for i in 0..<r.count {
                    let next = r[i] >> 63
                    r[i] = r[i] << 1 | carry
                    carry = next
                }
                if RSAPrivateKey.compare(r, n) >= 0 { RSAPrivateKey.subtract(&r, n) }
            }
            r2 = Array(r.prefix(n.count))
        }

        /// a·b·R⁻¹ mod n, for a, b < n of `k` limbs.
        func multiply(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
            var t = [UInt64](repeating: 0, count: k + 2)
            for i in 0..<k {
                var carry: UInt64 = 0
                for j in 0..<k {
                    let (hi, lo) = a[j].multipliedFullWidth(by: b[i])
                    let (s1, c1) = lo.addingReportingOverflow(t[j])
                    let (s2, c2) = s1.addingReportingOverflow(carry)
                    t[j] = s2
                    carry = hi &+ (c1 ? 1 : 0) &+ (c2 ? 1 : 0)
                }
                let (s, c) = t[k].addingReportingOverflow(carry)
                t[k] = s
                t[k + 1] = c ? 1 : 0
                let m = t[0] &* inverse
                let (hi0, lo0) = m.multipliedFullWidth(by: n[0])
                carry = hi0 &+ (lo0.addingReportingOverflow(t[0]).overflow ? 1 : 0)
                for j in 1..<k {
                    let (hi, lo) = m.multipliedFullWidth(by: n[j])
                    let (s1, c1) = lo.addingReportingOverflow(t[j])
                    let (s2, c2) = s1.addingReportingOverflow(carry)
                    t[j - 1] = s2
                    carry = hi &+ (c1 ? 1 : 0) &+ (c2 ? 1 : 0)
                }
                let (s3, c3) = t[k].addingReportingOverflow(carry)
                t[k - 1] = s3
                t[k] = t[k + 1] &+ (c3 ? 1 : 0)
                t[k + 1] = 0
            }
            var out = Array(t.prefix(k + 1))
            if RSAPrivateKey.compare(out, n) >= 0 { RSAPrivateKey.subtract(&out, n) }
            return Array(out.prefix(k))
        }

        /// base^exponent mod n (left to right, square and multiply), `base < n`.
        func power(_ base: [UInt64], _ exponent: [UInt64]) -> [UInt64] {
            let b = multiply(RSAPrivateKey.padded(base, k), r2)
            var one = [UInt64](repeating: 0, count: k)
            one[0] = 1
            var acc = multiply(one, r2)
            for bit in stride(from: RSAPrivateKey.bitLength(exponent) - 1, through: 0, by: -1) {
                acc = multiply(acc, acc)
                if exponent[bit / 64] >> UInt64(bit % 64) & 1 == 1 { acc = multiply(acc, b) }
            }
            return multiply(acc, one)
        }
    }
}
