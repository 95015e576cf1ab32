import Foundation
import NIOCore
import Testing

@testable import SoKubeHTTP

/// A port-forward's streams as the kubelet sends them (`v4.channel.k8s.io`): each stream's first two bytes name the
/// port, then stream 0 carries the connection's data and stream 1 the kubelet's errors.
@Suite struct ForwardStreamsTests {
    func frame(_ bytes: [UInt8]) -> ByteBuffer { ByteBuffer(bytes: bytes) }

    @Test func theAnswerIsTheDataUpToItsFirstNewlineAfterEachStreamsPort() {
        var s = ForwardStreams()
        let taken = [
            s.take(frame([0, 0x9e, 0x1b]), first: true), s.take(frame([1, 0x9e, 0x1b]), first: true),
            s.take(frame([0] + Array("do".utf8)), first: true),
            s.take(frame(Array("ne\nmore".utf8)), first: false),  // a continuation of stream 0
        ]
        #expect(taken == [false, false, false, true])
        #expect(s.outcome() == .answered("done"))
    }

    @Test func theKubeletsErrorIsWhyThereIsNoAnswer() {
        var s = ForwardStreams()
        _ = s.take(frame([0, 0x9e, 0x1b]), first: true)
        let said = "an error occurred forwarding 47017: connection refused\nmore"
        let done = s.take(frame([1, 0x9e, 0x1b] + Array(said.utf8)), first: true)
        #expect(done, "no need to wait for the close")
        #expect(s.outcome() == .failed(why: "an error occurred forwarding 47017: connection refused"))
        #expect(ForwardStreams().outcome() == .failed(why: "the connection closed without an answer"))
    }

    @Test func aPortSplitAcrossFramesIsStillDropped() {
        var s = ForwardStreams()
        _ = s.take(frame([0, 0x9e]), first: true)
        _ = s.take(frame([0, 0x1b] + Array("x\n".utf8)), first: true)
        #expect(s.outcome() == .answered("x"))
    }
}
