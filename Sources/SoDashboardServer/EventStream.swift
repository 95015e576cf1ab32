import Foundation

/// Server-sent events, as a page's `EventSource` reads them (the HTML standard's event stream): what a container
/// prints reaches the page as one event with its text, whatever characters it holds. Foundation only, so the fuzz
/// package builds it (Fuzz/, `dashboard-input`: a frame reads back as the event it was made of).
enum EventStream {
    /// One event: its name, then a `data:` line for each line of `data` (a reader joins them with "\n"), then the
    /// blank line that ends it. Carriage returns are left out: a reader ends a line at a lone CR, and a progress
    /// bar's redraws collapse into one line.
    static func frame(event: String, data: String) -> String {
        var out = "event: \(event)\n"
        var line = String.UnicodeScalarView()
        for s in data.unicodeScalars {
            switch s {
            case "\r": continue
            case "\n":
                out += "data: " + String(line) + "\n"
                line = String.UnicodeScalarView()
            default: line.append(s)
            }
        }
        return out + "data: " + String(line) + "\n\n"
    }

    /// What a reader of the standard's stream makes of `text`: its events (name, data), in order. Lines end at CRLF,
    /// LF or CR; a line starting with ":" is a comment; `field: value` loses one space after the colon; an event is
    /// dispatched at a blank line when it has data (its last "\n" removed), named `message` when no `event:` said.
    static func read(_ text: String) -> [(event: String, data: String)] {
        var events: [(event: String, data: String)] = []
        var name = ""
        var data = ""
        var hasData = false
        var lines: [String] = []
        var current = String.UnicodeScalarView()
        var afterCR = false
        for s in text.unicodeScalars {
            if afterCR && s == "\n" {
                afterCR = false
                continue
            }
            afterCR = s == "\r"
            if s == "\r" || s == "\n" {
                lines.append(String(current))
                current = String.UnicodeScalarView()
            } else {
                current.append(s)
            }
        }
        // A line without its end is not a line yet: a reader waits for the rest (a stream cut there loses it). Code
        // points, not characters: a colon or a space followed by a combining mark is still a colon or a space.
        for line in lines {
            let scalars = line.unicodeScalars
            if scalars.isEmpty {
                if hasData {
                    events.append((name.isEmpty ? "message" : name, String(data.unicodeScalars.dropLast())))
                }
                (name, data, hasData) = ("", "", false)
                continue
            }
            if scalars.first == ":" { continue }
            let field: String
            var value: Substring.UnicodeScalarView
            if let colon = scalars.firstIndex(of: ":") {
                field = String(scalars[..<colon])
                value = Substring(line).unicodeScalars[scalars.index(after: colon)...]
                if value.first == " " { value = value.dropFirst() }
            } else {
                (field, value) = (line, Substring("").unicodeScalars)
            }
            switch field {
            case "event": name = String(value)
            case "data":
                data += String(value) + "\n"
                hasData = true
            default: break  // id, retry and unknown fields change no event's name or data
            }
        }
        return events
    }
}
