import Foundation

/// Bytes handed to libcrypto without a copy when they are contiguous (a webhook's body may be 25 MB).
enum Bytes {
    static func with<R>(_ data: some Sequence<UInt8>, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let r = data.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return r }
        return Array(data).withUnsafeBytes(body)
    }

    /// The bytes' address, or a byte's (length 0) when they are empty: libcrypto refuses a null one.
    static func withNonNull<R>(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafePointer<UInt8>) -> R) -> R {
        if bytes.count > 0, let base = bytes.baseAddress { return body(base.assumingMemoryBound(to: UInt8.self)) }
        var zero: UInt8 = 0
        return withUnsafePointer(to: &zero) { body($0) }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
