/// Token-shaped test material, made when a test runs (never written in the repository): a GitHub token, an
/// Anthropic key, an AWS access key id and a Slack token, each of random characters in its provider's shape.
enum GeneratedTokens {
    static let lower = Array("abcdefghijklmnopqrstuvwxyz0123456789")
    static let upper = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

    static func random(_ count: Int, from alphabet: [Character]) -> String {
        String((0..<count).map { _ in alphabet.randomElement()! })
    }

    static func github() -> String { "gh" + "p_" + random(36, from: lower) }
    static func anthropic() -> String { "sk-" + "ant-api03-" + random(26, from: lower) }
    static func aws() -> String { "AK" + "IA" + random(16, from: upper) }
    static func slack() -> String {
        "xo" + "xb-" + random(10, from: Array("0123456789")) + "-" + random(6, from: lower)
    }
}
