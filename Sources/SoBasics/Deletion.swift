import Foundation

extension FileSystem {
    /// The one recursive delete. It refuses (naming the path and why) anything `owner` does not vouch for,
    /// a path that is itself a symlink (only its target's directory would be meant), `/` and the home
    /// directory. A path that does not exist is not an error.
    public func removeOwnedTree(_ path: String, owner: TreeOwner) throws {
        if let real = try checkOwnedTree(path, owner: owner) { try removeTree(real) }
    }

    /// What `removeOwnedTree` checks, without removing: the real path to remove, nil when nothing is there.
    @discardableResult
    public func checkOwnedTree(_ path: String, owner: TreeOwner) throws -> String? {
        guard path.hasPrefix("/") else { throw refusal(path, "it is not an absolute path") }
        guard let k = kind(path) else { return nil }
        if k == .symlink {
            throw refusal(
                path, "it is a symlink to \(realpath(path))",
                hint: "so removes only directories it made; remove the link yourself")
        }
        let real = realpath(path)
        if real == "/" || real == realpath(homeDirectory) {
            throw refusal(path, "it is \(real == "/" ? "the root directory" : "the home directory")")
        }
        switch owner {
        case .scratch(let prefix):
            let name = Path.basename(real)
            let head = "." + prefix + "."
            let rest =
                name.hasPrefix(head)
                ? name.dropFirst(head.count).split(separator: ".", omittingEmptySubsequences: false) : []
            let shaped =
                (rest.count == 2 && Int32(rest[0]) != nil && rest[1].count == 6)
                || (rest.count == 1 && rest[0].count == 6)
            guard shaped else { throw refusal(path, "it is not a temporary directory so made") }
        case .labelledChild(let root):
            let parent = realpath(root)
            guard Path.dirname(real) == parent, NameRules.isDNSLabel(Path.basename(real)) else {
                throw refusal(path, "it is not a deployment directory under \(parent)")
            }
        case .vouched(let what, let vouches):
            guard isDirectory(real), vouches(real) else { throw refusal(path, "it is not \(what)") }
        }
        return real
    }

    private func refusal(_ path: String, _ why: String, hint: String = "so removes only directories it made") -> SoError
    {
        SoError("refusing to remove \(path.isEmpty ? "''" : path): \(why)", hint: hint, exitCode: SoError.exitUsage)
    }
}
