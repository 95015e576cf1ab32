import Foundation
import SoActions
import SoKube

/// Replaces every secret value a page could otherwise show (an agent that printed a key, a service that logged
/// its password) with `<secret>`: the values of every Secret in the namespace, and this process's GitHub
/// tokens. Values shorter than 6 characters are left (they would blank common words).
public struct Redactor: Sendable {
    var values: [String]

    public init(values: [String]) {
        self.values = values.filter { $0.count >= 6 }.sorted { $0.count > $1.count }
    }

    public static func read(_ client: ClusterClient, namespace: String, ctx: SoContext) async throws -> Redactor {
        var values: [String] = []
        for s in try await client.list(.secret, namespace: namespace, labelSelector: nil) {
            for v in (s["data"]?.object ?? [:]).values {
                guard let data = v.string.flatMap({ Data(base64Encoded: $0) }) else { continue }
                let text = String(decoding: data, as: UTF8.self)
                values.append(text)
                // A value of several lines (an env file) is matched line by line too.
                for line in text.split(separator: "\n").map({ String($0).trimmingCharacters(in: .whitespaces) }) {
                    values.append(line)
                    if let eq = line.firstIndex(of: "=") { values.append(String(line[line.index(after: eq)...])) }
                }
            }
        }
        values += ["GITHUB_TOKEN", "GH_TOKEN", "GIT_TOKEN"].compactMap { ctx.environment[$0] }
        return Redactor(values: values)
    }

    public func apply(_ text: String) -> String {
        var text = text
        for v in values where text.contains(v) { text = text.replacingOccurrences(of: v, with: "<secret>") }
        return text
    }
}
