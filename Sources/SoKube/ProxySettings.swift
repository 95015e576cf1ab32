import Foundation
import SoBasics

/// The proxy between `so` and an API server, as client-go chooses it: the cluster's `proxy-url`, else
/// `HTTPS_PROXY` (`HTTP_PROXY` for an http:// server) unless `NO_PROXY` names the server.
public struct ProxySettings: Sendable, Equatable, CustomStringConvertible {
    public var description: String {
        "ProxySettings(\(kind) \(host):\(port)\(username.map { ", user \($0), password redacted" } ?? ""), from \(source))"
    }

    public enum Kind: Sendable, Equatable {
        /// HTTP CONNECT to a plain-text proxy.
        case http
        /// HTTP CONNECT over TLS to the proxy (an https:// proxy URL).
        case https
        case socks5
    }
    public var kind: Kind
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?
    /// Where it was set (`proxy-url of cluster 'prod'`, `HTTPS_PROXY`), for messages.
    public var source: String

    public init(kind: Kind, host: String, port: Int, username: String? = nil, password: String? = nil, source: String) {
        self.kind = kind
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.source = source
    }

    /// The proxy for `connection` (nil: connect directly).
    public static func choose(for connection: ClusterConnection, environment: [String: String]) throws -> ProxySettings?
    {
        if let url = connection.proxyURL {
            return try parse(url, source: "the proxy-url of context '\(connection.contextName)'", strictScheme: true)
        }
        guard let (scheme, host, port) = endpoint(connection.server) else { return nil }
        func env(_ names: String...) -> (String, String)? {
            for n in names { if let v = environment[n], !v.isEmpty { return (n, v) } }
            return nil
        }
        guard let (name, value) = scheme == "http" ? env("HTTP_PROXY", "http_proxy") : env("HTTPS_PROXY", "https_proxy")
        else { return nil }
        if bypasses(host: host, port: port, noProxy: env("NO_PROXY", "no_proxy")?.1 ?? "") { return nil }
        return try parse(value, source: name, strictScheme: false)
    }

    /// `https://host:port` → ("https", "host", port), the port defaulted by the scheme; brackets of an IPv6 host removed.
    static func endpoint(_ server: String) -> (String, String, Int)? {
        guard let u = URLComponents(string: server), let scheme = u.scheme?.lowercased(), var host = u.host,
            !host.isEmpty
        else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (scheme, host.lowercased(), u.port ?? (scheme == "http" ? 80 : 443))
    }

    /// A proxy URL as client-go reads it: `http`, `https` or `socks5` (`socks5h` too from the environment,
    /// where a bare `host:port` means http); user and password for basic proxy authentication.
    public static func parse(_ text: String, source: String, strictScheme: Bool) throws -> ProxySettings {
        var raw = text.trimmedSpaces
        if !strictScheme, !raw.contains("://") { raw = "http://" + raw }
        guard let u = URLComponents(string: raw), let scheme = u.scheme?.lowercased(), var host = u.host, !host.isEmpty
        else {
            throw SoError(
                "\(source) '\(redacted(text))' is not a proxy URL",
                hint: "write it as http://HOST:PORT, https://HOST:PORT or socks5://HOST:PORT")
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let kind: Kind
        switch scheme {
        case "http": kind = .http
        case "https": kind = .https
        case "socks5": kind = .socks5
        case "socks5h" where !strictScheme: kind = .socks5
        default:
            throw SoError(
                "\(source) '\(redacted(text))' has the scheme '\(scheme)', which kubectl does not use for proxies",
                hint: "use http://, https:// or socks5://")
        }
        let port = u.port ?? (kind == .http ? 80 : kind == .https ? 443 : 1080)
        return ProxySettings(
            kind: kind, host: host, port: port, username: u.percentEncodedUser?.removingPercentEncoding,
            password: u.percentEncodedPassword?.removingPercentEncoding, source: source)
    }

    /// A proxy URL without its password, for messages.
    static func redacted(_ text: String) -> String {
        guard var u = URLComponents(string: text), u.password != nil else { return text }
        u.password = "xxxxx"
        return u.string ?? "(a proxy URL)"
    }

    /// Whether `NO_PROXY` keeps the proxy away from `host:port`, as Go's net/http reads it: `*`; IPs and CIDRs
    /// for IP hosts; `example.com` (itself and its subdomains), `.example.com` and `*.example.com` (subdomains);
    /// any entry may carry a `:port`. localhost and loopback addresses are never proxied.
    public static func bypasses(host rawHost: String, port: Int, noProxy: String) -> Bool {
        let host = rawHost.lowercased()
        if host == "localhost" || IPAddress.isLoopback(host) { return true }
        let isIP = IPAddress.isValid(host)
        for raw in noProxy.split(separator: ",") {
            let entry = raw.trimmedSpaces.lowercased()
            if entry.isEmpty { continue }
            if entry == "*" { return true }
            if IPAddress.isCIDR(entry) {
                if isIP, IPAddress.cidr(entry, contains: host) { return true }
                continue
            }
            var (h, p) = splitHostPort(entry)
            if let p, Int(p) != port { continue }
            if h.hasPrefix("[") && h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
            if h.isEmpty { continue }
            if IPAddress.isValid(h) {
                if isIP, IPAddress.bytes(h) == IPAddress.bytes(host) { return true }
                continue
            }
            if h.hasPrefix("*.") { h = String(h.dropFirst()) }
            if h.hasPrefix(".") {
                if host.hasSuffix(h) { return true }
            } else if host == h || host.hasSuffix("." + h) {
                return true
            }
        }
        return false
    }

    /// `host:port` → (host, port); a bare IPv6 address or a host without a port → (entry, nil).
    static func splitHostPort(_ entry: String) -> (String, String?) {
        if entry.hasPrefix("["), let close = entry.firstIndex(of: "]") {
            let rest = entry[entry.index(after: close)...]
            return (String(entry[...close]), rest.hasPrefix(":") ? String(rest.dropFirst()) : nil)
        }
        let colons = entry.filter { $0 == ":" }.count
        guard colons == 1, let i = entry.lastIndex(of: ":") else { return (entry, nil) }
        return (String(entry[..<i]), String(entry[entry.index(after: i)...]))
    }
}
