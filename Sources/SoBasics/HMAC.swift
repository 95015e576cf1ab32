import Foundation

/// HMAC-SHA256 (RFC 2104) over `SHA256`: what GitHub signs a webhook's body with (`X-Hub-Signature-256`), so a
/// delivery is known to come from whoever holds the webhook's secret.
public enum HMAC {
    static let blockSize = 64

    /// The 32-byte HMAC-SHA256 of `message` under `key`.
    public static func sha256(key: some Sequence<UInt8>, message: some Sequence<UInt8>) -> [UInt8] {
        var k = Array(key)
        if k.count > blockSize { k = SHA256.digest(k) }
        k += [UInt8](repeating: 0, count: blockSize - k.count)
        var inner = SHA256()
        inner.update(k.map { $0 ^ 0x36 })
        inner.update(message)
        var outer = SHA256()
        outer.update(k.map { $0 ^ 0x5c })
        outer.update(inner.digest())
        return outer.digest()
    }

    /// The same, as 64 lowercase hex digits.
    public static func sha256Hex(key: some Sequence<UInt8>, message: some Sequence<UInt8>) -> String {
        sha256(key: key, message: message).map { byte in
            let s = String(byte, radix: 16)
            return s.count == 1 ? "0" + s : s
        }.joined()
    }

    /// Equal, in a time that does not depend on where they first differ (only on their lengths).
    public static func sameInConstantTime(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var diff: UInt8 = x.count == y.count ? 0 : 1
        for i in 0..<min(x.count, y.count) { diff |= x[i] ^ y[i] }
        return diff == 0 && !x.isEmpty
    }

    /// Whether `header` (a request's `X-Hub-Signature-256`: `sha256=` and 64 hex digits) is the HMAC-SHA256 of `body`
    /// under `secret`. A missing, malformed or uppercase header is not.
    public static func validGitHubSignature(_ header: String?, body: some Sequence<UInt8>, secret: [UInt8]) -> Bool {
        guard let header, header.utf8.count == 71, header.hasPrefix("sha256="), !secret.isEmpty else { return false }
        return sameInConstantTime(header, "sha256=" + sha256Hex(key: secret, message: body))
    }
}
