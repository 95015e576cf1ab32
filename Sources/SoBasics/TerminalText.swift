/// Text from an agent or a user, made safe to print on a terminal: escape sequences (colours, cursor moves, window
/// titles, links) are dropped, and every other control character, and the bidirectional overrides that make text
/// read other than it is, is shown as `\u{…}`. Printable text, tabs included, is kept as it is; a newline is a
/// control character here too (callers split lines first).
public enum TerminalText {
    public static func safe(_ text: String) -> String {
        scan(text) { u, out in
            if shown(u) {
                out.append(u)
            } else {
                out.append(contentsOf: "\\u{\(String(u.value, radix: 16))}".unicodeScalars)
            }
        }
    }

    /// `text` without its escape sequences, every other character kept as it is (newlines and controls too): output
    /// meant for a terminal, shown where something else escapes it (a web page).
    public static func withoutEscapes(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value == 0x1B || $0.value == 0x9B }) else { return text }
        return scan(text) { u, out in out.append(u) }
    }

    /// Each scalar of `text` outside an escape sequence, handed to `keep` with the output.
    static func scan(_ text: String, _ keep: (Unicode.Scalar, inout String.UnicodeScalarView) -> Void) -> String {
        var out = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        var pending = scalars.next()
        while let u = pending {
            pending = scalars.next()
            if u.value == 0x1B {
                pending = skipEscape(after: pending, &scalars)
            } else if u.value == 0x9B {  // the one-byte CSI
                pending = skipCSI(pending, &scalars)
            } else {
                keep(u, &out)
            }
        }
        return String(out)
    }

    /// Printable: not a C0 or C1 control (tab aside), not DEL, not a bidirectional embedding, override or isolate.
    static func shown(_ u: Unicode.Scalar) -> Bool {
        switch u.value {
        case 0x09: return true
        case 0x00...0x1F, 0x7F...0x9F: return false
        case 0x202A...0x202E, 0x2066...0x2069: return false
        default: return true
        }
    }

    /// After ESC: a CSI (`ESC [ … final`), an OSC or other string (`ESC ] … BEL` or `ESC \`), or one character.
    static func skipEscape(after next: Unicode.Scalar?, _ it: inout String.UnicodeScalarView.Iterator)
        -> Unicode.Scalar?
    {
        guard let next else { return nil }
        switch next {
        case "[": return skipCSI(it.next(), &it)
        case "]", "P", "X", "^", "_":
            var prev: Unicode.Scalar?
            while let c = it.next() {
                if c.value == 0x07 || (prev?.value == 0x1B && c == "\\") { return it.next() }
                prev = c
            }
            return nil
        default: return it.next()
        }
    }

    /// Parameters and intermediates (0x20–0x3F), then one final byte (0x40–0x7E).
    static func skipCSI(_ first: Unicode.Scalar?, _ it: inout String.UnicodeScalarView.Iterator) -> Unicode.Scalar? {
        var c = first
        while let u = c, (0x20...0x3F).contains(u.value) { c = it.next() }
        if let u = c, (0x40...0x7E).contains(u.value) { return it.next() }
        return c
    }
}
