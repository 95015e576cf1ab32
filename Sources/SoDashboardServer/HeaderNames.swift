import HTTPTypes

/// Header names HTTPTypes does not name. Each is a valid token, so `HTTPField.Name` always makes it; the
/// fallback is never used (it keeps the code free of force unwraps).
enum HeaderNames {
    static let referrerPolicy = named("Referrer-Policy")
    static let frameOptions = named("X-Frame-Options")
    static let fetchSite = named("Sec-Fetch-Site")
    static let fetchMode = named("Sec-Fetch-Mode")
    static let accelBuffering = named("X-Accel-Buffering")
    static let forwardedProto = named("X-Forwarded-Proto")
    static let forwardedFor = named("X-Forwarded-For")
    static let strictTransportSecurity = named("Strict-Transport-Security")
    static let retryAfter = named("Retry-After")

    static func named(_ s: String) -> HTTPField.Name { HTTPField.Name(s) ?? .cacheControl }
}
