import Foundation
import SoBasics
import SoCompose

public struct HTTPProxy: Sendable, Equatable {
    public struct Route: Sendable, Equatable {
        public var path: String
        /// `proxy-to`, parsed once: the compose service and its port.
        public var service: String
        public var port: Int
        /// `proxy-to` as written: `SERVICE:PORT`.
        public var proxyTo: String { "\(service):\(port)" }
    }
    public var hostName: String
    public var routes: [Route]
    /// Its own `tls:` (in the entry, or under `network.tls.hosts`); nil: the spec's, else the target's default.
    public var tls: IngressTLS? = nil
}
