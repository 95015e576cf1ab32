import Foundation
import SoBasics
import Yams

/// Compose files of version 1 (2014–2016: services at the top level, no `services:` key), read in the
/// current layout: the services go under `services:`, and the keys version 1 spelled otherwise take their
/// current form (`net` → `network_mode`, `dockerfile` beside `build` → `build.dockerfile`, `log_driver` and
/// `log_opt` → `logging`). Every value keeps its file:line. Pure.
public enum ComposeLayout {
    /// Top-level keys of the current layout: a file with any of them is not version 1.
    static let topLevel: Set<String> = [
        "version", "services", "volumes", "networks", "secrets", "configs", "name", "include", "models",
    ]

    /// Whether `root` is a version-1 file: a mapping of services, each a mapping, with none of the current layout's top-level keys.
    public static func isVersion1(_ root: YNode) -> Bool {
        guard case .mapping(let m) = root.node, !m.isEmpty else { return false }
        return m.allSatisfy { pair in
            guard case .scalar(let k) = pair.key, !topLevel.contains(k.string), !k.string.hasPrefix("x-") else {
                return false
            }
            if case .mapping = pair.value { return true }
            return false
        }
    }

    /// `root` in the current layout, and whether it was version 1 (else `root` unchanged).
    public static func normalize(_ root: YNode) -> (root: YNode, version1: Bool) {
        guard isVersion1(root), case .mapping(let m) = root.node else { return (root, false) }
        let services = Node.Mapping(m.map { ($0.key, service($0.value)) }, m.tag, m.style, m.mark)
        func scalar(_ text: String) -> Node { .scalar(Node.Scalar(text, Tag(.str), .plain, m.mark)) }
        var top: [(Node, Node)] = [(scalar("services"), .mapping(services))]
        // Version 1 made a named volume on first use; the current layout declares it under volumes:.
        let named = namedVolumes(m)
        if !named.isEmpty {
            top.append(
                (
                    scalar("volumes"),
                    .mapping(
                        Node.Mapping(
                            named.map { (scalar($0), .scalar(Node.Scalar("", Tag(.null), .plain, m.mark))) },
                            Tag(.map), .block, m.mark))
                ))
        }
        return (YNode(.mapping(Node.Mapping(top, m.tag, .block, m.mark)), file: root.file), true)
    }

    /// Named volumes the services mount in short syntax (`NAME:/path`), in order of first use.
    static func namedVolumes(_ services: Node.Mapping) -> [String] {
        var out: [String] = []
        for (_, svc) in services {
            guard case .mapping(let m) = svc, let volumes = m.first(where: { $0.key.string == "volumes" })?.value,
                case .sequence(let list) = volumes
            else { continue }
            for case .scalar(let v) in list {
                let parts = v.string.split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count >= 2, let source = parts.first.map(String.init), !source.isEmpty,
                    !source.hasPrefix("/"), !source.hasPrefix("."), !source.hasPrefix("~"), !source.hasPrefix("$"),
                    !source.contains("/"),
                    !out.contains(source)
                else { continue }
                out.append(source)
            }
        }
        return out
    }

    /// One version-1 service with its keys in their current form.
    static func service(_ node: Node) -> Node {
        guard case .mapping(let m) = node else { return node }
        func key(_ text: String, like other: Node) -> Node { .scalar(Node.Scalar(text, Tag(.str), .plain, other.mark)) }
        var pairs: [(Node, Node)] = []
        var logging: [(Node, Node)] = []
        var loggingAt: Node?
        let dockerfile = m.first { $0.key.string == "dockerfile" }
        for (k, v) in m {
            switch k.string {
            case "net":
                pairs.append((key("network_mode", like: k), v))
            case "dockerfile" where m.contains { $0.key.string == "build" }:
                continue  // folded into build: below
            case "build":
                guard let dockerfile, case .scalar = v else {
                    pairs.append((k, v))
                    continue
                }
                let build = Node.Mapping(
                    [(key("context", like: v), v), (key("dockerfile", like: dockerfile.key), dockerfile.value)],
                    Tag(.map), .block, v.mark)
                pairs.append((k, .mapping(build)))
            case "log_driver":
                loggingAt = loggingAt ?? k
                logging.append((key("driver", like: k), v))
            case "log_opt":
                loggingAt = loggingAt ?? k
                logging.append((key("options", like: k), v))
            default:
                pairs.append((k, v))
            }
        }
        if let at = loggingAt {
            pairs.append((key("logging", like: at), .mapping(Node.Mapping(logging, Tag(.map), .block, at.mark))))
        }
        return .mapping(Node.Mapping(pairs, m.tag, m.style, m.mark))
    }
}
