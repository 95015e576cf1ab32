import Foundation

/// The one JSON writer of `so`: ordered values (`YValue`, or any `Encodable` through `YValueEncoder`) to
/// JSON text, in the four layouts `so` sends and prints:
/// - `compact`: what goes to the API server and is hashed (`YValue.compactJSON()`), keys in order;
/// - `pretty`: `render -o json` and `--output-dir` files (`YValue.json()`), two-space indents, `"k": v`;
/// - `report`: the `-o json` output of the verbs, laid out as Foundation's JSONEncoder laid it out
///   (`"k" : v`, empty containers on two lines, `\b`/`\f` named and DEL kept) so it stays byte-identical;
/// - `line`: `--progress json` lines: one line each, with the report's escapes.
public enum JSONWriter {
    public struct Style: Sendable {
        var indent: Bool
        /// Foundation's pretty layout (`"k" : v`, `[\n\n]`) and escapes (`\b`, `\f`, DEL as is).
        var foundation: Bool

        public static let compact = Style(indent: false, foundation: false)
        public static let pretty = Style(indent: true, foundation: false)
        public static let report = Style(indent: true, foundation: true)
        public static let line = Style(indent: false, foundation: true)
    }

    public static func bytes(_ value: YValue, _ style: Style) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        write(value, style, depth: 0, into: &out)
        return out
    }

    public static func string(_ value: YValue, _ style: Style) -> String {
        String(decoding: bytes(value, style), as: UTF8.self)
    }

    /// An `Encodable` value with its keys sorted (as JSONEncoder's `.sortedKeys`); "{}" when it cannot be
    /// written (a number that is not whole: `YValue` has none).
    public static func encode<T: Encodable>(_ value: T, _ style: Style = .report) -> String {
        guard let v = try? YValueEncoder.encode(value) else { return "{}" }
        return string(v, style)
    }

    static func write(_ v: YValue, _ style: Style, depth: Int, into out: inout [UInt8]) {
        switch v {
        case .string(let s): appendString(s, foundation: style.foundation, into: &out)
        case .int(let n): out.append(contentsOf: String(n).utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .null: out.append(contentsOf: "null".utf8)
        case .list(let items):
            container(
                open: UInt8(ascii: "["), close: UInt8(ascii: "]"), count: items.count, style, depth: depth, into: &out
            ) { i, out in
                write(items[i], style, depth: depth + 1, into: &out)
            }
        case .map(let pairs):
            container(
                open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), count: pairs.count, style, depth: depth, into: &out
            ) { i, out in
                appendString(pairs[i].0, foundation: style.foundation, into: &out)
                if style.indent && style.foundation { out.append(UInt8(ascii: " ")) }
                out.append(UInt8(ascii: ":"))
                if style.indent { out.append(UInt8(ascii: " ")) }
                write(pairs[i].1, style, depth: depth + 1, into: &out)
            }
        }
    }

    static func container(
        open: UInt8, close: UInt8, count: Int, _ style: Style, depth: Int, into out: inout [UInt8],
        item: (Int, inout [UInt8]) -> Void
    ) {
        out.append(open)
        func newline(_ level: Int) {
            out.append(UInt8(ascii: "\n"))
            var n = 2 * level
            while n > 0 {
                out.append(0x20)
                n -= 1
            }
        }
        if count == 0 {
            // JSONEncoder writes an empty container pretty as two line breaks; ours as `[]`/`{}`.
            if style.indent && style.foundation {
                out.append(UInt8(ascii: "\n"))
                newline(depth)
            }
            out.append(close)
            return
        }
        for i in 0..<count {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            if style.indent { newline(depth + 1) }
            item(i, &out)
        }
        if style.indent { newline(depth) }
        out.append(close)
    }

    /// `\"`, `\\`, `\n`, `\r`, `\t`, other control characters as `\u00xx` (Foundation: `\b`, `\f` named);
    /// DEL as `\u007f` (Foundation: as is); everything else as its UTF-8 bytes.
    static func appendString(_ s: String, foundation: Bool, into out: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        out.append(0x22)
        for b in s.utf8 {
            switch b {
            case 0x22:
                out.append(0x5c)
                out.append(0x22)
            case 0x5c:
                out.append(0x5c)
                out.append(0x5c)
            case 0x0a:
                out.append(0x5c)
                out.append(UInt8(ascii: "n"))
            case 0x0d:
                out.append(0x5c)
                out.append(UInt8(ascii: "r"))
            case 0x09:
                out.append(0x5c)
                out.append(UInt8(ascii: "t"))
            case 0x08 where foundation:
                out.append(0x5c)
                out.append(UInt8(ascii: "b"))
            case 0x0c where foundation:
                out.append(0x5c)
                out.append(UInt8(ascii: "f"))
            case 0x00..<0x20:
                out.append(contentsOf: [0x5c, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xf)]])
            case 0x7f where !foundation:
                out.append(contentsOf: [0x5c, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xf)]])
            default: out.append(b)
            }
        }
        out.append(0x22)
    }
}

extension YValue {
    /// Compact JSON as bytes (what is sent and hashed): keys in order.
    public func compactJSON() -> [UInt8] { JSONWriter.bytes(self, .compact) }

    /// JSON with keys in order; ints and bools typed, everything else a string.
    public func json(pretty: Bool = true) -> String { JSONWriter.string(self, pretty ? .pretty : .compact) }
}
