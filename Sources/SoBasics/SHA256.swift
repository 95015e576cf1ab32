import Foundation

/// SHA-256 (FIPS 180-4), in Swift: what a deployment's record names its content by, so two records of the same
/// files are known to be the same. Not for secrets (nothing secret is hashed with it).
public struct SHA256: Sendable {
    private var state: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0

    public init() {}

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    public mutating func update(_ data: some Sequence<UInt8>) {
        // Whole blocks straight from contiguous storage (a webhook's body may be 25 MB); byte by byte otherwise.
        let done: Void? = data.withContiguousStorageIfAvailable { bytes in
            var i = 0
            while i < bytes.count {
                if buffer.isEmpty && bytes.count - i >= 64 {
                    compress(UnsafeBufferPointer(rebasing: bytes[i..<i + 64]))
                    length &+= 64
                    i += 64
                    continue
                }
                buffer.append(bytes[i])
                length &+= 1
                i += 1
                if buffer.count == 64 {
                    let block = buffer
                    block.withUnsafeBufferPointer { compress($0) }
                    buffer.removeAll(keepingCapacity: true)
                }
            }
        }
        guard done == nil else { return }
        for byte in data {
            buffer.append(byte)
            length &+= 1
            if buffer.count == 64 {
                let block = buffer
                block.withUnsafeBufferPointer { compress($0) }
                buffer.removeAll(keepingCapacity: true)
            }
        }
    }

    public mutating func update(_ text: String) { update(Array(text.utf8)) }

    /// The digest, as 64 lowercase hex digits.
    public mutating func hex() -> String {
        digest().map { byte in
            let s = String(byte, radix: 16)
            return s.count == 1 ? "0" + s : s
        }.joined()
    }

    /// The digest's 32 bytes (big-endian words, as FIPS 180-4 writes them).
    public mutating func digest() -> [UInt8] {
        let bits = length &* 8
        var pad: [UInt8] = [0x80]
        while (buffer.count + pad.count) % 64 != 56 { pad.append(0) }
        for i in (0..<8).reversed() { pad.append(UInt8(truncatingIfNeeded: bits >> (UInt64(i) * 8))) }
        let keep = length
        update(pad)
        length = keep
        return state.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * UInt32($0))) } }
    }

    public static func digest(_ data: some Sequence<UInt8>) -> [UInt8] {
        var h = SHA256()
        h.update(data)
        return h.digest()
    }

    public static func hex(_ data: some Sequence<UInt8>) -> String {
        var h = SHA256()
        h.update(data)
        return h.hex()
    }

    /// One 64-byte block into the state: unsafe pointers throughout, so a debug build hashes a 25 MB webhook body
    /// in a few seconds (bounds-checked arrays took several times as long).
    private mutating func compress(_ block: UnsafeBufferPointer<UInt8>) {
        guard let b = block.baseAddress, block.count >= 64 else { return }
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for i in 0..<16 {
                w[i] =
                    UInt32(b[i &* 4]) << 24 | UInt32(b[i &* 4 &+ 1]) << 16 | UInt32(b[i &* 4 &+ 2]) << 8
                    | UInt32(b[i &* 4 &+ 3])
            }
            for i in 16..<64 {
                let x = w[i &- 15]
                let y = w[i &- 2]
                let s0 = (x >> 7 | x << 25) ^ (x >> 18 | x << 14) ^ (x >> 3)
                let s1 = (y >> 17 | y << 15) ^ (y >> 19 | y << 13) ^ (y >> 10)
                w[i] = w[i &- 16] &+ s0 &+ w[i &- 7] &+ s1
            }
            state.withUnsafeMutableBufferPointer { st in
                Self.k.withUnsafeBufferPointer { k in
                    var (a, b, c, d, e, f, g, h) = (st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7])
                    for i in 0..<64 {
                        let s1 = (e >> 6 | e << 26) ^ (e >> 11 | e << 21) ^ (e >> 25 | e << 7)
                        let ch = (e & f) ^ (~e & g)
                        let t1 = h &+ s1 &+ ch &+ k[i] &+ w[i]
                        let s0 = (a >> 2 | a << 30) ^ (a >> 13 | a << 19) ^ (a >> 22 | a << 10)
                        let maj = (a & b) ^ (a & c) ^ (b & c)
                        let t2 = s0 &+ maj
                        h = g
                        g = f
                        f = e
                        e = d &+ t1
                        d = c
                        c = b
                        b = a
                        a = t1 &+ t2
                    }
                    st[0] &+= a
                    st[1] &+= b
                    st[2] &+= c
                    st[3] &+= d
                    st[4] &+= e
                    st[5] &+= f
                    st[6] &+= g
                    st[7] &+= h
                }
            }
        }
    }
}
