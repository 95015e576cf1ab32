import Foundation
import FuzzSupport
import SoBasics
@testable import SoDashboardForm

/// A form body a page POSTs (`application/x-www-form-urlencoded`), and the names the dashboard takes from a
/// request's query (a namespace, a container).
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
    return 0
}
