import Foundation
import FuzzSupport
import SoBasics

@testable import SoDashboardForm

/// A form body a page POSTs (`application/x-www-form-urlencoded`), the names the dashboard takes from a
/// request's query (a namespace, a container), a request's Cookie header (the session's cookie), and a line a
/// container printed, as the page's event stream carries it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDashboardInput(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = Fuzz.text(start, count)
    let fields = HTMLQuery.form(text)
    Fuzz.check(HTMLQuery.form(text) == fields, "two reads differ")
    // The fields, encoded as a browser does (every reserved byte percent-encoded), read back to themselves.
    let encoded = fields.sorted { $0.key < $1.key }.map {
        PercentEncoding.component($0.key) + "=" + PercentEncoding.component($0.value)
    }.joined(separator: "&")
    let back = HTMLQuery.form(encoded)
    // An empty name is dropped by the split on "&" when its value is empty too ("=" alone is a field).
    Fuzz.check(back == fields, "an encoded form reads back otherwise: \(fields) -> \(back)")
    // A name the dashboard puts in a page, a URL and a label selector: a DNS label only.
    for value in fields.values where NameRules.isDNSLabel(value) {
        Fuzz.check(
            value.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" },
            "a DNS label with other characters: \(value.debugDescription)")
    }
    // The same bytes as a request's Cookie header: the session cookie is read from it alone.
    let name = "so-dashboard-7878"
    let found = CookieHeader.value(named: name, in: [text])
    Fuzz.check(CookieHeader.value(named: name, in: [text]) == found, "two reads of a cookie differ")
    if let found {
        Fuzz.check(!found.contains(";"), "a cookie's value runs past its ';': \(found.debugDescription)")
        Fuzz.check(text.contains(found), "a cookie's value that is not in the header: \(found.debugDescription)")
    }
    // A field before the real cookie's never hides or changes it, unless it sets that cookie itself (the first wins).
    let token = String(repeating: "ab", count: 32)
    let both = CookieHeader.value(named: name, in: [text, "\(name)=\(token)"])
    Fuzz.check(both == (found ?? token), "the session cookie after \(text.debugDescription) read as \(both ?? "nil")")
    // A name only like it is not it.
    Fuzz.check(CookieHeader.value(named: name, in: ["x\(name)=1; \(name)x=2"]) == nil, "a near name was taken")
    // The same bytes as a line a container printed: one event on the page's stream with the line's text (its
    // carriage returns left out), and the event after it still the next one.
    let events = EventStream.read(
        EventStream.frame(event: "line", data: text) + EventStream.frame(event: "version", data: "7"))
    let expected = Array(text.unicodeScalars.filter { $0 != "\r" })
    Fuzz.check(
        events.count == 2 && events[0].event == "line" && Array(events[0].data.unicodeScalars) == expected
            && events[1].event == "version" && events[1].data == "7",
        "the line \(text.debugDescription) reached the page as \(events)")
    return 0
}
