import Testing

@testable import SoDashboardServer

/// The session's cookie read from a request's Cookie header fields (fuzzed in Fuzz/, `dashboard-input`).
@Suite struct CookieHeaderTests {
    let name = "so-dashboard-7878"

    @Test func theFirstCookieOfItsExactNameIsRead() {
        #expect(CookieHeader.value(named: name, in: ["a=1; \(name)=s1; \(name)=s2"]) == "s1")
        #expect(CookieHeader.value(named: name, in: ["a=1", " \(name)=s3 "]) == "s3")
        #expect(CookieHeader.value(named: name, in: ["\(name)=v=w"]) == "v=w", "a value may hold '='")
    }

    @Test func nearNamesAndPartsWithoutAValueAreNotIt() {
        for field in ["x\(name)=1", "\(name)x=1", "\(name)", "\(name)=", "; ;", "", "\(name) =1"] {
            #expect(CookieHeader.value(named: name, in: [field]) == nil, "\(field.debugDescription)")
        }
    }
}
