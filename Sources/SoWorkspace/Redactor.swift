import Foundation
import SoActions
import SoKube

/// Replaces secret values in text someone else will read (an agent that printed a key, a service that logged its
/// password: a comment on an issue, a dashboard's page) with `<secret>`: the values of the Secrets given, line by
/// line too (an env file's), and this process's GitHub tokens. Longest first, so a value holding another is
/// replaced whole; values shorter than 6 characters are left (they would blank common words).
public struct Redactor: Sendable {
    var values: [String]

    public init(values: [String]) {
        self.values = Array(Set(values.filter { $0.count >= 6 })).sorted { ($0.count, $0) > ($1.count, $1) }
    }

    /// The values of `secrets` and of the GitHub tokens in `environment`.
    public init(secrets: [JSON], environment: [String: String]) {
        var values: [String] = []
        for s in secrets {
            for v in (s["data"]?.object ?? [:]).values {
                guard let data = v.string.flatMap({ Data(base64Encoded: $0) }) else { continue }
                let text = String(decoding: data, as: UTF8.self)
                values.append(text)
                for line in text.split(separator: "\n").map({ String($0).trimmingCharacters(in: .whitespaces) }) {
                    values.append(line)
                    if let eq = line.firstIndex(of: "=") { values.append(String(line[line.index(after: eq)...])) }
                }
            }
        }
        values += ["GITHUB_TOKEN", "GH_TOKEN", "GIT_TOKEN"].compactMap { environment[$0] }
        self.init(values: values)
    }

    /// Every Secret of `namespace` (one list).
    public static func read(_ client: ClusterClient, namespace: String, ctx: SoContext) async throws -> Redactor {
        Redactor(
            secrets: try await client.list(.secret, namespace: namespace, labelSelector: nil),
            environment: ctx.environment)
    }

    public func apply(_ text: String) -> String {
        var text = text
        for v in values where text.contains(v) { text = text.replacingOccurrences(of: v, with: "<secret>") }
        return text
    }
}
