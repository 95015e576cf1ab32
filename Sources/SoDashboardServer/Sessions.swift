import Foundation

/// Sessions signed in with the token: a random id each, kept in memory until it ends.
actor Sessions {
    let mint: @Sendable () -> String
    var ends: [String: Date] = [:]

    init(mint: @escaping @Sendable () -> String) { self.mint = mint }

    func open(until end: Date) -> String {
        let id = mint()
        ends[id] = end
        return id
    }

    func valid(_ id: String, at now: Date) -> Bool {
        guard let end = ends[id] else { return false }
        if end <= now {
            ends[id] = nil
            return false
        }
        return true
    }

    func close(_ id: String) { ends[id] = nil }
}
