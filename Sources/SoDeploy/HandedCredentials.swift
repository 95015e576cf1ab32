/// Credentials handed to a container after it started: a warm pool's member, claimed (`so up`), gets the claimer's
/// `secret-env` values in a file in the container's memory (`/dev/shm`, mode 0600, written from `kubectl exec`'s
/// stdin: never a file on the host, never a command line). The scripts and commands `so` runs in a workspace's
/// container read it first, so they see the values as a cold workspace's container sees them in its environment.
public enum HandedCredentials {
    public static let path = "/dev/shm/so-secret-env"

    /// The file whose time is that of the last verb `so` ran in the container (every one runs the prelude), which
    /// `so cleanup --idle` reads there: exact, and no request to the API server on any verb's path.
    public static let marker = "/dev/shm/so-last-used"

    /// The prelude of a reader that must not count as a use (`so dashboard`: a page left open must not keep a
    /// workspace from going idle): the credentials read, when there is a file (a workspace never claimed has none).
    public static let readingPrelude = "if [ -r \(path) ]; then . \(path); fi"

    /// The shell lines that mark the use, then read the credentials (`readingPrelude`).
    public static let prelude = "true 2>/dev/null > \(marker) || true; " + readingPrelude

    /// `command` run in the container after the prelude (`sh -c`; every workspace image has sh).
    public static func wrap(_ command: [String]) -> [String] {
        ["sh", "-c", prelude + "\nexec \"$@\"", "sh"] + command
    }

    /// The script that writes its stdin to the file (replacing it whole).
    public static let writeScript = "umask 077 && cat > \(path).part && mv -f \(path).part \(path)"

    /// The script that writes the next `bytes` (a shell word) of its stdin to the file (replacing it whole), leaving
    /// the rest of its stdin to what follows (a bundle, in the same exec).
    public static func writeScript(bytes: String) -> String {
        "umask 077 && head -c \(bytes) > \(path).part && mv -f \(path).part \(path)"
    }

    /// The script that sets `keys` (variable names) in the file to what its stdin's lines say, keeping the rest.
    public static func mergeScript(_ keys: [String]) -> String {
        let drop = keys.map { "-e '^export \($0)='" }.joined(separator: " ")
        return "umask 077 && { if [ -r \(path) ]; then grep -v \(drop) \(path); fi; cat; } > \(path).part "
            + "&& mv -f \(path).part \(path)"
    }

    /// The file's text: one `export KEY='VALUE'` per value, quoted for sh.
    public static func text(_ values: [(key: String, value: String)]) -> String {
        values.map { "export \($0.key)='\($0.value.replacingOccurrences(of: "'", with: #"'\''"#))'\n" }.joined()
    }
}
