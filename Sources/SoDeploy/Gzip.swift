import CZlib
import Foundation
import SoBasics

/// gzip (RFC 1952) through the system's zlib: a deployment's record is stored compressed, as Helm's releases
/// are. Reading checks gzip's CRC-32 and length, so a record changed by hand fails to read rather than read wrong.
enum Gzip {
    /// `data`, gzip-compressed at zlib's default level.
    static func compress(_ data: Data) throws -> Data {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip header and trailer, not zlib's.
        guard
            deflateInit2_(
                &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { throw SoError("zlib could not start compressing") }
        defer { deflateEnd(&stream) }
        let (out, status) = try pump(&stream, data, limit: .max) { deflate(&$0, Z_FINISH) }
        guard status == Z_STREAM_END else { throw SoError("zlib could not compress (status \(status))") }
        return out
    }

    /// What `data` (gzip) holds, at most `limit` bytes (more is refused: a small record must not unpack into
    /// gigabytes). Throws `Failure` on anything that is not whole, valid gzip.
    static func decompress(_ data: Data, limit: Int) throws -> Data {
        var stream = z_stream()
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Failure(reason: "zlib could not start")
        }
        defer { inflateEnd(&stream) }
        let (out, status) = try pump(&stream, data, limit: limit) { inflate(&$0, Z_NO_FLUSH) }
        guard status == Z_STREAM_END else {
            throw Failure(reason: status == Z_OK || status == Z_BUF_ERROR ? "it is cut short" : "it is not valid gzip")
        }
        guard stream.avail_in == 0 else { throw Failure(reason: "bytes follow its end") }
        return out
    }

    struct Failure: Error { let reason: String }

    /// Feeds `data` through `step` (deflate or inflate) 64 KiB of output at a time, until it says more than Z_OK
    /// or has neither input left nor a full buffer; the output, and the last status. More than `limit` bytes out
    /// is a `Failure`.
    private static func pump(_ stream: inout z_stream, _ data: Data, limit: Int, _ step: (inout z_stream) -> Int32)
        throws -> (Data, Int32)
    {
        var input = [UInt8](data)
        var out = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let status: Int32 = try input.withUnsafeMutableBufferPointer { inBuf in
            stream.next_in = inBuf.baseAddress
            stream.avail_in = uInt(inBuf.count)
            var status = Z_OK
            repeat {
                status = chunk.withUnsafeMutableBufferPointer { outBuf in
                    stream.next_out = outBuf.baseAddress
                    stream.avail_out = uInt(outBuf.count)
                    return step(&stream)
                }
                out.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
                if out.count > limit { throw Failure(reason: "it unpacks to more than \(limit) bytes") }
            } while status == Z_OK && (stream.avail_in > 0 || stream.avail_out == 0)
            return status
        }
        return (out, status)
    }
}
