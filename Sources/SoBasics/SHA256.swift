import CLibcrypto
import Foundation

/// SHA-256 from the system's libcrypto (OpenSSL 3, Debian's libssl-dev): what a deployment's record names its
/// content by, and the GitHub loop its names of repositories too long for a label. Streamed (`update` as often as
/// needed); `digest` may be asked more than once (it finishes a copy of the state). A value: a copy goes on
/// on its own (the state is copied when a shared one is updated).
public struct SHA256: Sendable {
    private var context = DigestContext()

    public init() {}

    public mutating func update(_ data: some Sequence<UInt8>) {
        if !isKnownUniquelyReferenced(&context) { context = context.copy() }
        Bytes.with(data) { context.update($0) }
    }

    public mutating func update(_ text: String) { update(Array(text.utf8)) }

    /// The digest, as 64 lowercase hex digits.
    public mutating func hex() -> String { Bytes.hex(digest()) }

    /// The digest's 32 bytes.
    public mutating func digest() -> [UInt8] { context.digest() }

    public static func digest(_ data: some Sequence<UInt8>) -> [UInt8] {
        var h = SHA256()
        h.update(data)
        return h.digest()
    }

    public static func hex(_ data: some Sequence<UInt8>) -> String { Bytes.hex(digest(data)) }

    /// libcrypto's digest state, freed with its last `SHA256`; only read while shared (updated when unique).
    private final class DigestContext: @unchecked Sendable {
        let ctx: OpaquePointer

        init() {
            // Allocation and SHA-256's init fail only when memory does: nothing a caller could do otherwise.
            guard let ctx = EVP_MD_CTX_new(), EVP_DigestInit_ex(ctx, EVP_sha256(), nil) == 1 else {
                fatalError("libcrypto could not start a SHA-256 (out of memory)")
            }
            self.ctx = ctx
        }

        private init(copying other: DigestContext) {
            guard let ctx = EVP_MD_CTX_new(), EVP_MD_CTX_copy_ex(ctx, other.ctx) == 1 else {
                fatalError("libcrypto could not copy a SHA-256 (out of memory)")
            }
            self.ctx = ctx
        }

        func copy() -> DigestContext { DigestContext(copying: self) }

        deinit { EVP_MD_CTX_free(ctx) }

        func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, bytes.count > 0 else { return }
            guard EVP_DigestUpdate(ctx, base, bytes.count) == 1 else { fatalError("libcrypto's SHA-256 failed") }
        }

        func digest() -> [UInt8] {
            guard let copy = EVP_MD_CTX_new() else { fatalError("libcrypto could not copy a SHA-256 (out of memory)") }
            defer { EVP_MD_CTX_free(copy) }
            var out = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 0
            guard EVP_MD_CTX_copy_ex(copy, ctx) == 1, EVP_DigestFinal_ex(copy, &out, &length) == 1, length == 32 else {
                fatalError("libcrypto's SHA-256 failed")
            }
            return out
        }
    }
}
