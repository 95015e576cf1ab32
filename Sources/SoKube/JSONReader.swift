import Foundation
import SoBasics

/// JSON bytes straight into `JSON` (RFC 8259): no Foundation `Any` in between, so no dynamic cast per
/// value — reading API responses and lists was a third of a start's CPU through JSONSerialization.
struct JSONReader {
    let bytes: [UInt8]
    var i = 0

    init(_ data: Data) { bytes = [UInt8](data) }

    struct Failure: Error, CustomStringConvertible {
        let offset: Int
        let what: String
        var description: String { "invalid JSON at byte \(offset): \(what)" }
    }

    static func parse(_ data: Data, keeping shape: JSONShape = .all) throws -> JSON {
        var r = JSONReader(data)
        r.skipSpace()
        let value = try r.value(depth: 0, shape: shape)
        r.skipSpace()
        guard r.i == r.bytes.count else { throw Failure(offset: r.i, what: "unexpected text after the value") }
        return value
    }

    mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0a || bytes[i] == 0x0d || bytes[i] == 0x09 { i += 1 }
    }

    /// The value at `i`, read to `shape`: what it does not name is skipped (`skip`), not built.
    mutating func value(depth: Int, shape: JSONShape = .all) throws -> JSON {
        guard depth < 512 else { throw Failure(offset: i, what: "nested too deeply") }
        guard i < bytes.count else { throw Failure(offset: i, what: "unexpected end") }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            var object: [String: JSON] = [:]
            try members(close: UInt8(ascii: "}")) { r in
                guard r.i < r.bytes.count, r.bytes[r.i] == UInt8(ascii: "\"") else {
                    throw Failure(offset: r.i, what: "expected a key")
                }
                let key = try r.string()
                r.skipSpace()
                guard r.i < r.bytes.count, r.bytes[r.i] == UInt8(ascii: ":") else {
                    throw Failure(offset: r.i, what: "expected ':'")
                }
                r.i += 1
                r.skipSpace()
                switch shape {
                case .all: object[key] = try r.value(depth: depth + 1)
                case .keys(let wanted):
                    if let sub = wanted[key] {
                        object[key] = try r.value(depth: depth + 1, shape: sub)
                    } else {
                        try r.skip(depth: depth + 1)
                    }
                }
            }
            return .object(object)
        case UInt8(ascii: "["):
            var array: [JSON] = []
            try members(close: UInt8(ascii: "]")) { r in array.append(try r.value(depth: depth + 1, shape: shape)) }
            return .array(array)
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default:
            return .number(try number())
        }
    }

    /// The members of the object or array opening at `i`, each read by `member` (at its first byte), up to
    /// `close`.
    mutating func members(close: UInt8, _ member: (inout JSONReader) throws -> Void) throws {
        i += 1
        skipSpace()
        if i < bytes.count, bytes[i] == close {
            i += 1
            return
        }
        while true {
            skipSpace()
            try member(&self)
            skipSpace()
            guard i < bytes.count else {
                throw Failure(
                    offset: i, what: close == UInt8(ascii: "}") ? "unterminated object" : "unterminated array")
            }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == close {
                i += 1
                return
            }
            throw Failure(offset: i, what: "expected ',' or '\(Character(Unicode.Scalar(close)))'")
        }
    }

    /// Past the value at `i`, building nothing: strings are passed over to their closing quote (an escape's
    /// next byte never closes one), numbers and literals to the next delimiter.
    mutating func skip(depth: Int) throws {
        guard depth < 512 else { throw Failure(offset: i, what: "nested too deeply") }
        guard i < bytes.count else { throw Failure(offset: i, what: "unexpected end") }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            try members(close: UInt8(ascii: "}")) { r in
                try r.skipString()
                r.skipSpace()
                guard r.i < r.bytes.count, r.bytes[r.i] == UInt8(ascii: ":") else {
                    throw Failure(offset: r.i, what: "expected ':'")
                }
                r.i += 1
                r.skipSpace()
                try r.skip(depth: depth + 1)
            }
        case UInt8(ascii: "["):
            try members(close: UInt8(ascii: "]")) { r in try r.skip(depth: depth + 1) }
        case UInt8(ascii: "\""):
            try skipString()
        default:
            let start = i
            while i < bytes.count {
                let b = bytes[i]
                if b == UInt8(ascii: ",") || b == UInt8(ascii: "}") || b == UInt8(ascii: "]") || b == 0x20
                    || b == 0x0a || b == 0x0d || b == 0x09
                {
                    break
                }
                i += 1
            }
            guard i > start else { throw Failure(offset: start, what: "expected a value") }
        }
    }

    /// Past the string opening at `i`.
    mutating func skipString() throws {
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
            throw Failure(offset: i, what: "expected a string")
        }
        let start = i
        i += 1
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "\""):
                i += 1
                return
            case UInt8(ascii: "\\"): i += 2
            default: i += 1
            }
        }
        throw Failure(offset: start, what: "unterminated string")
    }

    mutating func literal(_ word: StaticString) throws {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw Failure(offset: i, what: "unexpected end") }
        for k in 0..<n where bytes[i + k] != word.utf8Start[k] { throw Failure(offset: i, what: "expected \(word)") }
        i += n
    }

    mutating func number() throws -> Double {
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        var digits = 0
        while i < bytes.count, (0x30...0x39).contains(bytes[i]) {
            i += 1
            digits += 1
        }
        guard digits > 0 else { throw Failure(offset: start, what: "expected a value") }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            var fraction = 0
            while i < bytes.count, (0x30...0x39).contains(bytes[i]) {
                i += 1
                fraction += 1
            }
            guard fraction > 0 else { throw Failure(offset: i, what: "expected a digit") }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            var exponent = 0
            while i < bytes.count, (0x30...0x39).contains(bytes[i]) {
                i += 1
                exponent += 1
            }
            guard exponent > 0 else { throw Failure(offset: i, what: "expected a digit") }
        }
        guard let d = Double(String(decoding: bytes[start..<i], as: UTF8.self)) else {
            throw Failure(offset: start, what: "bad number")
        }
        return d
    }

    mutating func string() throws -> String {
        i += 1
        let start = i
        // Fast path: no escapes.
        while i < bytes.count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\") {
            guard bytes[i] >= 0x20 else { throw Failure(offset: i, what: "control character in a string") }
            i += 1
        }
        guard i < bytes.count else { throw Failure(offset: start, what: "unterminated string") }
        if bytes[i] == UInt8(ascii: "\"") {
            defer { i += 1 }
            return String(decoding: bytes[start..<i], as: UTF8.self)
        }
        var out = [UInt8](bytes[start..<i])
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                i += 1
                return String(decoding: out, as: UTF8.self)
            }
            guard b >= 0x20 else { throw Failure(offset: i, what: "control character in a string") }
            if b != UInt8(ascii: "\\") {
                out.append(b)
                i += 1
                continue
            }
            guard i + 1 < bytes.count else { break }
            let e = bytes[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5c)
            case UInt8(ascii: "/"): out.append(0x2f)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0c)
            case UInt8(ascii: "n"): out.append(0x0a)
            case UInt8(ascii: "r"): out.append(0x0d)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar), i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"),
                    bytes[i + 1] == UInt8(ascii: "u")
                {
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw Failure(offset: i, what: "bad surrogate pair") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                out.append(contentsOf: String(Unicode.Scalar(scalar).map(Character.init) ?? "\u{FFFD}").utf8)
            default: throw Failure(offset: i - 1, what: "bad escape")
            }
        }
        throw Failure(offset: start, what: "unterminated string")
    }

    mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw Failure(offset: i, what: "bad \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let d: UInt8
            switch b {
            case 0x30...0x39: d = b - 0x30
            case 0x41...0x46: d = b - 0x41 + 10
            case 0x61...0x66: d = b - 0x61 + 10
            default: throw Failure(offset: i, what: "bad \\u escape")
            }
            v = v << 4 | UInt32(d)
            i += 1
        }
        return v
    }
}
