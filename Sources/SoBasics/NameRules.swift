import Foundation

/// The one place for naming rules: character-class checks (without regular expressions: no ICU on the
/// start-up path), the checks that throw (one line naming the object, then the hint), and the sanitisers
/// that turn any text into a Kubernetes name (DNS-1123 subdomain and label, DNS-1035 label, label value).
public enum NameRules {
    static func isAlnum(_ c: Unicode.Scalar) -> Bool {
        (c.value >= 0x30 && c.value <= 0x39) || (c.value >= 0x41 && c.value <= 0x5A)
            || (c.value >= 0x61 && c.value <= 0x7A)
    }

    /// `first` then any of `rest`, at least one character.
    public static func matches(_ s: String, first: (Unicode.Scalar) -> Bool, rest: (Unicode.Scalar) -> Bool) -> Bool {
        var it = s.unicodeScalars.makeIterator()
        guard let f = it.next(), first(f) else { return false }
        while let c = it.next() { if !rest(c) { return false } }
        return true
    }

    /// `[A-Za-z0-9][A-Za-z0-9_.-]*`: pod, job, volume, service and stack names.
    public static func isComponent(_ s: String) -> Bool {
        matches(s, first: isAlnum, rest: { isAlnum($0) || $0 == "_" || $0 == "." || $0 == "-" })
    }

    /// `[A-Za-z_][A-Za-z0-9_.-]*`: environment variable names as compose and dotenv accept them.
    public static func isVariable(_ s: String) -> Bool {
        matches(
            s, first: { ($0.value >= 0x41 && $0.value <= 0x5A) || ($0.value >= 0x61 && $0.value <= 0x7A) || $0 == "_" },
            rest: { isAlnum($0) || $0 == "_" || $0 == "." || $0 == "-" })
    }

    /// `[A-Z_][A-Z0-9_]*`: upper-case variable names.
    public static func isUpperVariable(_ s: Substring) -> Bool {
        matches(
            String(s), first: { ($0.value >= 0x41 && $0.value <= 0x5A) || $0 == "_" },
            rest: { ($0.value >= 0x41 && $0.value <= 0x5A) || ($0.value >= 0x30 && $0.value <= 0x39) || $0 == "_" })
    }

    /// A DNS-1123 label: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63.
    public static func isDNSLabel(_ s: String) -> Bool {
        s.unicodeScalars.count <= 63 && isLabelPart(s)
    }

    /// A DNS-1123 subdomain (most object names, label-key prefixes): `[a-z0-9]([-a-z0-9]*[a-z0-9])?` parts joined
    /// by `.`, at most 253 in all (Kubernetes sets no length on a part here).
    public static func isDNSSubdomain(_ s: String) -> Bool {
        s.unicodeScalars.count <= 253
            && s.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { isLabelPart(String($0)) }
    }

    /// `[a-z0-9]([-a-z0-9]*[a-z0-9])?` of any length.
    static func isLabelPart(_ s: String) -> Bool {
        let lowerAlnum = { (c: Unicode.Scalar) in
            (c.value >= 0x30 && c.value <= 0x39) || (c.value >= 0x61 && c.value <= 0x7A)
        }
        guard let last = s.unicodeScalars.last, lowerAlnum(last) else { return false }
        return matches(s, first: lowerAlnum, rest: { lowerAlnum($0) || $0 == "-" })
    }

    /// Only characters from `allowed` (and alphanumerics), at least one.
    public static func isPlain(_ s: String, extra: String) -> Bool {
        let set = Set(extra.unicodeScalars)
        return matches(s, first: { isAlnum($0) || set.contains($0) }, rest: { isAlnum($0) || set.contains($0) })
    }

    // MARK: Checks that throw

    /// Pod, job, volume, configmap and stack names: letters, digits, `-`, `_`, `.`; no path separators.
    public static func checkComponent(_ name: String, what: String, at location: SourceLocation?) throws {
        let ok = !name.isEmpty && name.count <= 200 && name != "." && name != ".." && isComponent(name)
        if !ok {
            throw SoError(
                "invalid \(what) '\(name)'",
                hint: "use letters, digits, '-', '_' and '.', starting with a letter or digit", at: location)
        }
    }

    /// Compose service names (as compose accepts them: `isComponent`).
    public static func checkComposeName(_ name: String, what: String, at location: SourceLocation) throws {
        guard isComponent(name) else {
            throw SoError("invalid \(what) '\(name)'", hint: "use letters, digits, '-', '_' and '.'", at: location)
        }
    }

    /// The names `so up`, `so down` and `--name` take: a DNS-1123 label, since the name is the namespace and
    /// the last component of `$SO_HOME/deployments/NAME`. Anything else is a usage error (exit 64).
    public static func checkDeploymentName(_ name: String) throws {
        guard isDNSLabel(name) else {
            throw SoError.usage(
                name.isEmpty ? "an empty name is not a deployment name" : "'\(name)' is not a deployment name",
                hint: "a name is lowercase letters, digits and '-' (a DNS-1123 label, at most 63), e.g. fix-login")
        }
    }

    /// A workspace's name (`so up`): a DNS-1123 label of at most 40, since it is the namespace of its objects.
    public static func checkWorkspaceName(_ name: String) throws {
        guard isDNSLabel(name), name.count <= 40 else {
            throw SoError.usage(
                "name '\(name)' is not usable as a namespace",
                hint: "use at most 40 lowercase letters, digits and '-', starting with a letter")
        }
    }

    // MARK: Sanitisers: any text to a Kubernetes name

    /// A DNS-1123 subdomain-safe name (object names): lowercase, `_` and other characters to `-`, trimmed, ≤ 253.
    public static func dnsSubdomain(_ s: String) -> String {
        var out = ""
        for c in s.lowercased() {
            if c.isASCII && (c.isLetter || c.isNumber || c == "." || c == "-") {
                out.append(c)
            } else {
                out.append("-")
            }
        }
        while out.contains("--") { out = out.replacingOccurrences(of: "--", with: "-") }
        out = out.trimmingCharacters(in: CharacterSet(charactersIn: "-."))
        return String(out.prefix(253))
    }

    /// A DNS-1123 label (container names, port names' base, volume names): ≤ 63 characters.
    public static func dnsLabel(_ s: String) -> String {
        var out = dnsSubdomain(s).replacingOccurrences(of: ".", with: "-")
        if out.count > 63 { out = String(out.prefix(63)).trimmingCharacters(in: CharacterSet(charactersIn: "-")) }
        return out.isEmpty ? "x" : out
    }

    /// A DNS-1035 label (Service names): a DNS-1123 label starting with a letter.
    public static func serviceName(_ s: String) -> String {
        let l = dnsLabel(s)
        return l.first?.isLetter == true ? l : String(("s-" + l).prefix(63))
    }

    /// A label value: ≤ 63 of `[A-Za-z0-9_.-]`, starting and ending alphanumeric.
    public static func labelValue(_ s: String) -> String {
        var out = String(
            s.map { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) ? $0 : "-" }.prefix(63))
        out = out.trimmingCharacters(in: CharacterSet(charactersIn: "-_."))
        return out
    }

    /// The name of a host path's ConfigMap, as laconic-so builds it: `../config/test/script.sh` → `config-test-script-sh`.
    public static func hostPathName(_ source: String) -> String {
        var s = source
        while s.hasPrefix("../") || s.hasPrefix("./") { s = String(s.drop { $0 == "." }.dropFirst()) }
        return dnsLabel(s.map { $0.isLetter || $0.isNumber ? $0 : "-" }.map(String.init).joined())
    }

    // MARK: Kubernetes label keys and values (these two use regular expressions; they run at render, not at start-up)

    static let labelName = #"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$"#

    /// A label value as the API server accepts it (empty, or `labelName`).
    public static func isLabelValue(_ v: String) -> Bool {
        v.isEmpty || v.range(of: labelName, options: .regularExpression) != nil
    }

    /// A label or annotation key: `name` or `prefix/name`, the prefix a DNS-1123 subdomain of at most 253.
    public static func isLabelKey(_ k: String) -> Bool {
        let parts = k.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let last = parts.last, !last.isEmpty,
            String(last).range(of: labelName, options: .regularExpression) != nil
        else { return false }
        return parts.count == 1 || isDNSSubdomain(String(parts[0]))
    }
}
