import Foundation
import FuzzSupport
import SoBasics
import SoKube

/// A kubeconfig, then (after a NUL) what its exec plugin printed.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKubeconfig(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let (kubeconfig, printed) = Fuzz.split(Fuzz.text(start, count))
    let connection = resolve(kubeconfig)
    execCredential(printed, plugin: connection?.exec ?? ExecPlugin(command: "plugin"))
    return 0
}

/// The same connection (or error) both times; an error names a line of the file; the connection's
/// description (what a failed test or a log line shows) does not depend on its secrets' values.
func resolve(_ text: String) -> ClusterConnection? {
    let label = "/home/user/.kube/config"
    let fs = MemoryFileSystem(currentDirectory: "/home/user")
    func read() throws -> ClusterConnection {
        try Kubeconfig.resolve(text: text, label: label, context: nil, fs: fs)
    }
    Fuzz.deterministic(text, file: label) { try read() }
    guard let c = try? read() else { return nil }
    var other = c
    other.token = c.token.map { $0 + "-other" }
    other.clientKeyPEM = c.clientKeyPEM.map { $0 + Data("other".utf8) }
    other.basicAuth?.password += "-other"
    Fuzz.check(c.description == other.description, "a secret's value shows in the description: \(c)")
    return c
}

/// What a plugin printed: an error never quotes the token it holds, the credential's description does not
/// depend on its secrets, and the same credential (or error) comes of it twice.
func execCredential(_ printed: String, plugin: ExecPlugin) {
    Fuzz.deterministic(printed, file: "") { try ExecPlugins.parse(printed, plugin: plugin, name: "plugin") }
    do {
        let credential = try ExecPlugins.parse(printed, plugin: plugin, name: "plugin")
        var other = credential
        other.token = credential.token.map { $0 + "-other" }
        other.clientKeyPEM = credential.clientKeyPEM.map { $0 + Data("other".utf8) }
        Fuzz.check(credential.description == other.description, "a secret shows: \(credential)")
    } catch {
        let json = try? JSON.parse(Data(printed.utf8))
        guard let token = json?.at("status", "token")?.string, token.count >= 8 else { return }
        // What the error may quote: the apiVersion and kind it found, the start of the expiry.
        let quotable = [
            json?["apiVersion"]?.string, json?["kind"]?.string, json?.at("status", "expirationTimestamp")?.string,
        ]
        guard !quotable.contains(where: { $0?.contains(token) ?? false }) else { return }
        Fuzz.check(!"\(error)".contains(token), "an error quotes the token: \(error)")
    }
}
