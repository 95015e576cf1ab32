import CLibcrypto
import Foundation

/// HMAC-SHA256 (RFC 2104) from libcrypto: what GitHub signs a webhook's body with (`X-Hub-Signature-256`), so a
/// delivery is known to come from whoever holds the webhook's secret.
public enum HMAC {
    /// The 32-byte HMAC-SHA256 of `message` under `key`.
    public static func sha256(key: some Sequence<UInt8>, message: some Sequence<UInt8>) -> [UInt8] {
        let k = Array(key)
        precondition(k.count <= Int(Int32.max), "an HMAC key of 2 GiB")
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let done = k.withUnsafeBytes { kb in
            Bytes.with(message) { mb in
                Bytes.withNonNull(kb) { kp in
                    Bytes.withNonNull(mb) {
                        CLibcrypto.HMAC(EVP_sha256(), kp, Int32(kb.count), $0, mb.count, &out, &length) != nil
                    }
                }
            }
        }
        guard done, length == 32 else { fatalError("libcrypto's HMAC-SHA256 failed") }
        return out
    }

    /// The same, as 64 lowercase hex digits.
    public static func sha256Hex(key: some Sequence<UInt8>, message: some Sequence<UInt8>) -> String {
        Bytes.hex(sha256(key: key, message: message))
    }

    /// Equal, in a time that does not depend on where they first differ (libcrypto's `CRYPTO_memcmp`; only on their
    /// lengths). Two empty strings are not: nothing proves nothing.
    public static func sameInConstantTime(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count, !x.isEmpty else { return false }
        return CRYPTO_memcmp(x, y, x.count) == 0
    }

    /// Whether `header` (a request's `X-Hub-Signature-256`: `sha256=` and 64 hex digits) is the HMAC-SHA256 of `body`
    /// under `secret`. A missing, malformed or uppercase header is not.
    public static func validGitHubSignature(_ header: String?, body: some Sequence<UInt8>, secret: [UInt8]) -> Bool {
        guard let header, header.utf8.count == 71, header.hasPrefix("sha256="), !secret.isEmpty else { return false }
        return sameInConstantTime(header, "sha256=" + sha256Hex(key: secret, message: body))
    }
}
