import Foundation

/// A reader of the few DER shapes a private key has: SEQUENCE, INTEGER, OBJECT IDENTIFIER, NULL, OCTET STRING.
/// Every length is checked against what is left; nothing is read past the end.
struct DERReader {
    var rest: ArraySlice<UInt8>
    init(_ bytes: ArraySlice<UInt8>) { rest = bytes }

    /// The next element's contents, when its tag is `tag`.
    mutating func element(tag: UInt8) throws -> ArraySlice<UInt8> {
        guard let t = rest.first else { throw RSAPrivateKey.DERError(what: "it ends early") }
        guard t == tag else { throw RSAPrivateKey.DERError(what: "tag \(t) where \(tag) was expected") }
        rest = rest.dropFirst()
        guard let first = rest.first else { throw RSAPrivateKey.DERError(what: "it ends early") }
        rest = rest.dropFirst()
        var length = Int(first)
        if first >= 0x80 {
            let count = Int(first & 0x7f)
            guard (1...3).contains(count), rest.count >= count else {
                throw RSAPrivateKey.DERError(what: "a length it cannot read")
            }
            length = rest.prefix(count).reduce(0) { $0 << 8 | Int($1) }
            rest = rest.dropFirst(count)
        }
        guard length <= rest.count else { throw RSAPrivateKey.DERError(what: "a length past its end") }
        let body = rest.prefix(length)
        rest = rest.dropFirst(length)
        return body
    }

    mutating func sequence() throws -> DERReader { DERReader(try element(tag: 0x30)) }

    /// A non-negative INTEGER's big-endian bytes, without its leading zeros (at least one byte).
    mutating func integer() throws -> [UInt8] {
        let body = try element(tag: 0x02)
        guard let first = body.first else { throw RSAPrivateKey.DERError(what: "an empty integer") }
        guard first < 0x80 else { throw RSAPrivateKey.DERError(what: "a negative integer") }
        let digits = body.drop { $0 == 0 }
        return digits.isEmpty ? [0] : Array(digits)
    }
}
