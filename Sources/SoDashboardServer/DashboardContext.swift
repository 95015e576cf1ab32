import Hummingbird
import NIOCore

/// A request's context: Hummingbird's, with the peer's address (whose wrong tokens are counted).
public struct DashboardContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
