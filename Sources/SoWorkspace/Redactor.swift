import Foundation
import SoActions
import SoBasics
import SoKube

/// Replaces secret values in text someone else will read (an agent that printed a key, a service that logged its
/// password: a comment on an issue, a dashboard's page) with `<secret>`: the values of the Secrets given, line by
/// line too (an env file's), and this process's GitHub tokens, as written and as they are found encoded (base64 and
/// base64url at any offset in a longer run, percent- and form-encoded, JSON-escaped). Longest first, so a value
/// holding another is replaced whole. A value of 8 characters or more is replaced wherever it is; one of 4 to 7 only
/// as a whole word (a 4-digit PIN, not the digits of a longer number); one under 4 is left (it would blank words
/// and no key is that short).
public struct Redactor: Sendable {
    /// Forms replaced wherever they are found, and forms replaced only as a whole word.
    var anywhere: [String]
    var words: [String]

    public static let shortest = 4
    static let anywhereFrom = 8

    public init(values: [String]) {
        var anywhere = Set<String>()
        var words = Set<String>()
        for v in Set(values) where v.count >= Self.shortest {
            let forms = Self.encodings(v)
            if v.count >= Self.anywhereFrom {
                anywhere.formUnion(forms)
            } else {
                words.formUnion(forms)
            }
        }
        let order: (String, String) -> Bool = { ($0.count, $0) > ($1.count, $1) }
        self.anywhere = anywhere.sorted(by: order)
        self.words = words.sorted(by: order)
    }

    /// `v` as written and in the encodings a value is found in when something printed it on its way somewhere.
    static func encodings(_ v: String) -> Set<String> {
        let percent = PercentEncoding.component(v)
        var forms: Set<String> = [v, percent, percent.replacingOccurrences(of: "%2F", with: "/")]
        forms.insert(percent.replacingOccurrences(of: "%20", with: "+"))
        forms.insert(percent.replacingOccurrences(of: "%20", with: "+").replacingOccurrences(of: "%2F", with: "/"))
        forms.insert(jsonEscaped(v, asciiOnly: false))
        forms.insert(jsonEscaped(v, asciiOnly: true))
        forms.insert(jsonEscaped(v, asciiOnly: false).replacingOccurrences(of: "/", with: "\\/"))
        if v.utf8.count >= 6 { forms.formUnion(base64Runs(Array(v.utf8))) }
        return forms.filter { $0.count >= Self.shortest }
    }

    /// The base64 and base64url characters that only `bytes` decide, for each of the 3 offsets it can start at in
    /// a longer encoded run (the characters shared with what comes before or after are dropped).
    static func base64Runs(_ bytes: [UInt8]) -> Set<String> {
        var out = Set<String>()
        for offset in 0..<3 {
            let encoded = Data(Array(repeating: 0, count: offset) + bytes).base64EncodedString()
                .trimmingCharacters(in: CharacterSet(charactersIn: "="))
            let lead = [0, 2, 3][offset]
            let tail = (offset + bytes.count) % 3 == 0 ? 0 : 1
            guard encoded.count > lead + tail + 5 else { continue }
            let run = String(encoded.dropFirst(lead).dropLast(tail))
            out.insert(run)
            out.insert(run.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"))
        }
        return out
    }

    /// `v` inside a JSON string: `"`, `\` and control characters escaped (and, `asciiOnly`, everything outside
    /// ASCII as `\uXXXX`).
    static func jsonEscaped(_ v: String, asciiOnly: Bool) -> String {
        let quoted = DoubleQuoted.string(v) { u in
            guard u.value < 0x20 || (asciiOnly && u.value > 0x7E) else { return nil }
            return String(u).utf16.map { String(format: "\\u%04x", $0) }.joined()
        }
        return String(quoted.dropFirst().dropLast())
    }

    /// The values of `secrets` and of the GitHub tokens in `environment`.
    public init(secrets: [JSON], environment: [String: String]) {
        var values: [String] = []
        for s in secrets {
            for v in (s["data"]?.object ?? [:]).values {
                guard let data = v.string.flatMap({ Data(base64Encoded: $0) }) else { continue }
                let text = String(decoding: data, as: UTF8.self)
                values.append(text)
                for line in text.split(separator: "\n").map({ String($0).trimmingCharacters(in: .whitespaces) }) {
                    values.append(line)
                    if let eq = line.firstIndex(of: "=") { values.append(String(line[line.index(after: eq)...])) }
                }
            }
        }
        values += ["GITHUB_TOKEN", "GH_TOKEN", "GIT_TOKEN"].compactMap { environment[$0] }
        self.init(values: values)
    }

    /// Every Secret of `namespace` (one list).
    public static func read(_ client: ClusterClient, namespace: String, ctx: SoContext) async throws -> Redactor {
        Redactor(
            secrets: try await client.list(.secret, namespace: namespace, labelSelector: nil),
            environment: ctx.environment)
    }

    public func apply(_ text: String) -> String {
        var text = text
        for v in anywhere where text.contains(v) { text = text.replacingOccurrences(of: v, with: "<secret>") }
        for v in words where text.contains(v) { text = Self.replacingWords(v, in: text) }
        return text
    }

    /// `text` with each `word` that no letter or digit touches replaced.
    static func replacingWords(_ word: String, in text: String) -> String {
        var out = ""
        var rest = text[...]
        while let r = rest.range(of: word) {
            let before = r.lowerBound > rest.startIndex ? rest[rest.index(before: r.lowerBound)] : nil
            let after = r.upperBound < rest.endIndex ? rest[r.upperBound] : nil
            let alone =
                !(out.last.map(Self.wordy) ?? false) && !(before.map(Self.wordy) ?? false)
                && !(after.map(Self.wordy) ?? false)
            out += rest[..<r.lowerBound]
            out += alone ? "<secret>" : String(rest[r])
            rest = rest[r.upperBound...]
        }
        return out + rest
    }

    static func wordy(_ c: Character) -> Bool { c.isLetter || c.isNumber }
}
