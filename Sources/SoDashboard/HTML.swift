import Foundation
import SoBasics

/// HTML text: every string from a user, an agent or the cluster goes through `escape` (task text, commit
/// subjects, logs, names), so a task whose text is `<script>…` shows as text.
public enum HTML {
    /// `s` as HTML text or a quoted attribute's value: `& < > " '` as entities, control characters other
    /// than tab and newline (an agent's terminal escapes) as U+FFFD, and the invisible characters that make text
    /// read other than it is (bidirectional overrides and isolates, zero-width spaces and marks) shown as
    /// `\u{…}`, as the terminal's `TerminalText.safe` shows them.
    public static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count + 16)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value) {
                    out += "\u{FFFD}"
                } else if invisible(scalar) {
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// `s` with each invisible character (`invisible`) shown as `\u{…}`, nothing else changed: text a script
    /// writes with `textContent` (a log's lines).
    public static func visible(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: invisible) else { return s }
        var out = ""
        for u in s.unicodeScalars {
            if invisible(u) { out += "\\u{\(String(u.value, radix: 16))}" } else { out.unicodeScalars.append(u) }
        }
        return out
    }

    /// Bidirectional embeddings, overrides, isolates and marks, zero-width spaces, line and paragraph separators,
    /// invisible operators and the byte-order mark (a zero-width joiner is kept: emoji need it).
    static func invisible(_ u: Unicode.Scalar) -> Bool {
        switch u.value {
        case 0x061C, 0x200B, 0x200E, 0x200F, 0x2028...0x202E, 0x2060...0x2069, 0xFEFF: return true
        default: return false
        }
    }

    /// `s` without a terminal's escape sequences (colours, cursor moves): what an agent's or a service's output
    /// holds for a terminal, not a page.
    public static func stripTerminal(_ s: String) -> String { TerminalText.withoutEscapes(s) }

    /// A URL's query value or path segment, percent-encoded (unreserved characters kept).
    public static func urlComponent(_ s: String) -> String { PercentEncoding.component(s) }

    /// A link to an http(s) URL an agent or a user gave (a pull request, an issue, an ingress host): only those
    /// two schemes become links; anything else is shown as text.
    public static func link(_ url: String, _ text: String? = nil) -> String {
        let lower = url.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else { return escape(text ?? url) }
        return "<a href=\"\(escape(url))\" rel=\"noreferrer noopener\" target=\"_blank\">\(escape(text ?? url))</a>"
    }

    /// A whole page: the shared header, `body` (HTML already escaped), and the live-update hook the script reads
    /// (`data-live`: the events URL; the page's own URL is fetched again, as a fragment, on each change). `github`:
    /// the GitHub loop's page is one of the links.
    public static func page(title: String, live: String, body: String, nav: Nav, github: Bool = false) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title)) · so</title>
        <link rel="stylesheet" href="/static/app.css">
        <script src="/static/app.js" defer></script>
        </head>
        <body data-live="\(escape(live))">
        <header>
        <a class="brand" href="/">so</a>
        <nav>\((Nav.allCases + (github ? [.github] : [])).map { n in
            "<a href=\"\(n.path)\"\(n == nav ? " aria-current=\"page\"" : "")>\(n.title)</a>"
        }.joined())</nav>
        <span id="live-state" class="live-state" title="updates as the cluster changes">connecting…</span>
        <form class="signout" method="post" action="/signout"><button type="submit">Sign out</button></form>
        </header>
        \(body)
        </body>
        </html>

        """
    }

    public enum Nav: CaseIterable, Sendable {
        case everything, cost, github, other
        var path: String { self == .cost ? "/cost" : self == .github ? "/github" : "/" }
        var title: String { self == .cost ? "Cost and time" : self == .github ? "GitHub loop" : "Everything" }
        public static var allCases: [Nav] { [.everything, .cost] }
    }

    /// A table: a header row and rows of cells already escaped; `rowAttributes` per row (e.g. a filter's text).
    public static func table(_ header: [String], _ rows: [[String]], id: String? = nil, rowAttributes: [String] = [])
        -> String
    {
        var out = "<table\(id.map { " id=\"\($0)\"" } ?? "")><thead><tr>"
        out += header.map { "<th>\(escape($0))</th>" }.joined()
        out += "</tr></thead><tbody>"
        for (i, row) in rows.enumerated() {
            let attributes = i < rowAttributes.count ? rowAttributes[i] : ""
            out += "<tr\(attributes)>" + row.map { "<td>\($0)</td>" }.joined() + "</tr>"
        }
        return out + "</tbody></table>"
    }
}
