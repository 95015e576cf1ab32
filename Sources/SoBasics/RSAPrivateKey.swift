import CLibcrypto
import Foundation

/// An RSA private key, read from PEM (PKCS#1 `RSA PRIVATE KEY`, as GitHub hands an App's key out, or PKCS#8
/// `PRIVATE KEY`), that signs with RSASSA-PKCS1-v1_5 and SHA-256 (JWT's RS256): the GitHub loop's App token. Read,
/// checked and used by the system's libcrypto (OpenSSL 3: blinded, constant-time exponentiation, the CRT result
/// verified). Errors name the key's source, never its bytes; a key whose parts disagree is an error when it is
/// read, never a crash.
public struct RSAPrivateKey: Sendable {
    private let key: Key
    /// The modulus' length in bytes: a signature's length.
    public let byteCount: Int
    public let bits: Int

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
        let kinds = ["RSA PRIVATE KEY", "PRIVATE KEY"]
        guard
            let label = kinds.first(where: { text.contains("-----BEGIN \($0)-----") }),
            let begin = text.range(of: "-----BEGIN \(label)-----"),
            let end = text.range(of: "-----END \(label)-----", range: begin.upperBound..<text.endIndex)
        else { throw SoError("\(source): no PEM private key (its BEGIN and END lines) in it", hint: hint) }
        let body = text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        guard Data(base64Encoded: String(body)) != nil else {
            throw SoError("\(source): the private key's PEM body is not base64", hint: hint)
        }
        // Only the block found is handed to libcrypto, with no passphrase callback that could ask a terminal.
        let block = Array("-----BEGIN \(label)-----\n\(body)\n-----END \(label)-----\n".utf8)
        let read: OpaquePointer? = block.withUnsafeBytes { bytes in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil)
        }
        ERR_clear_error()
        guard let pkey = read else {
            throw SoError(
                "\(source): the private key is not an RSA key's DER (libcrypto could not read it)", hint: hint)
        }
        let key = Key(pkey)
        guard EVP_PKEY_is_a(pkey, "RSA") == 1 else {
            throw SoError("\(source): the private key is not an RSA key", hint: hint)
        }
        let bits = Int(EVP_PKEY_get_bits(pkey))
        guard (2048...16384).contains(bits) else {
            throw SoError("\(source): the private key's modulus has \(bits) bits, not 2048 to 16384", hint: hint)
        }
        guard key.consistent() else {
            throw SoError(
                "\(source): the private key's parts do not agree (its exponents or primes are not one key's)",
                hint: "give the key as GitHub generated it; make a new one on the App's settings page if it was edited")
        }
        self.key = key
        self.bits = bits
        self.byteCount = Int(EVP_PKEY_get_size(pkey))
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256 of `message` (RFC 8017 8.2.1): deterministic, so the same key and message
    /// give the same bytes as `openssl dgst -sha256 -sign`.
    public func signSHA256(_ message: some Sequence<UInt8>) throws -> [UInt8] {
        let signature = Bytes.with(message) { key.sign($0, length: byteCount) }
        guard let signature else {
            throw SoError(
                "libcrypto could not sign with the App's private key",
                hint: "check the key (openssl rsa -check -noout -in KEY) and the memory the loop has")
        }
        return signature
    }

    /// Whether `signature` is this key's RSASSA-PKCS1-v1_5 SHA-256 signature of `message` (the public half).
    public func verifySHA256(_ message: some Sequence<UInt8>, signature: [UInt8]) -> Bool {
        Bytes.with(message) { key.verify($0, signature: signature) }
    }

    /// libcrypto's key, freed with the last `RSAPrivateKey` holding it; libcrypto's keys are safe to share between
    /// threads for signing.
    private final class Key: @unchecked Sendable {
        let pkey: OpaquePointer

        init(_ pkey: OpaquePointer) { self.pkey = pkey }

        deinit { EVP_PKEY_free(pkey) }

        /// libcrypto's full check: the primes, the modulus, the exponents (RSA_check_key).
        func consistent() -> Bool {
            guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { return false }
            defer { EVP_PKEY_CTX_free(ctx) }
            let ok = EVP_PKEY_check(ctx) == 1
            ERR_clear_error()
            return ok
        }

        func sign(_ message: UnsafeRawBufferPointer, length: Int) -> [UInt8]? {
            guard let ctx = EVP_MD_CTX_new() else { return nil }
            defer {
                EVP_MD_CTX_free(ctx)
                ERR_clear_error()
            }
            var out = [UInt8](repeating: 0, count: length)
            var written = length
            guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, pkey) == 1,
                Bytes.withNonNull(message, { EVP_DigestSign(ctx, &out, &written, $0, message.count) }) == 1
            else { return nil }
            return Array(out.prefix(written))
        }

        func verify(_ message: UnsafeRawBufferPointer, signature: [UInt8]) -> Bool {
            guard let ctx = EVP_MD_CTX_new() else { return false }
            defer {
                EVP_MD_CTX_free(ctx)
                ERR_clear_error()
            }
            guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else { return false }
            return Bytes.withNonNull(message) { EVP_DigestVerify(ctx, signature, signature.count, $0, message.count) }
                == 1
        }
    }
}
