import Testing

@testable import SoDashboardServer

/// The page's event stream (`EventStream`): what a container prints reaches the page as one event with its text,
/// read as a browser's `EventSource` reads the stream (fuzzed in Fuzz/, `dashboard-input`).
@Suite struct EventStreamTests {
    /// The event `frame` makes of `data`, read back: its data as code points.
    static func roundTrip(_ data: String) -> [String] {
        EventStream.read(EventStream.frame(event: "line", data: data) + EventStream.frame(event: "version", data: "7"))
            .map { "\($0.event)=" + $0.data.unicodeScalars.map { String($0) }.joined() }
    }

    @Test(arguments: [
        ("plain text", "plain text"),
        ("", ""),
        ("data: event: forged\n\nevent: version", "data: event: forged\n\nevent: version"),
        ("progress 10%\rprogress 90%\r\n", "progress 10%progress 90%\n"),
        (": a comment?", ": a comment?"),
        ("  two spaces", "  two spaces"),
        ("\u{301}combining first", "\u{301}combining first"),
        ("\n\n", "\n\n"),
    ])
    func whatAContainerPrintsIsOneEventWithItsText(_ printed: String, _ seen: String) {
        let read = Self.roundTrip(printed)
        #expect(
            read == ["line=" + seen.unicodeScalars.map { String($0) }.joined(), "version=7"],
            "\(printed.debugDescription)")
    }

    @Test func theReaderFollowsTheStandard() {
        let text = ": hello\r\nretry: 1000\r\n\r\nevent:x\rdata:a\rdata:  b\r\rdata\n\nevent: y\n\nevent: z\ndata: cut"
        let read = EventStream.read(text)
        #expect(read.map(\.event) == ["x", "message"])
        #expect(read.map(\.data) == ["a\n b", ""])
    }
}
