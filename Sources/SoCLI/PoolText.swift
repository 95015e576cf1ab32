import Foundation
import SoActions
import SoBasics
import SoWorkspace

/// `so pool list` and `create`: each pool, its size and its members, as text or JSON.
enum PoolText {
    struct MemberJSON: Encodable {
        var name, namespace: String
        var warm: Bool
        /// The machine that made it.
        var host: String
    }
    struct PoolJSON: Encodable {
        var name, stack: String
        var size, warm: Int
        var config: [String]
        var with: [String]?
        var agent: String?
        /// A claim's refill under way (`so pool fill … --at-most 1`, detached).
        var refilling: Bool
        var members: [MemberJSON]
    }

    static func print(_ pools: [(PoolRecord, [PoolAction.Member])], json: Bool, _ ctx: SoContext) {
        if json {
            ctx.console.out(
                JSONOut.encode(
                    pools.map { p, ms in
                        PoolJSON(
                            name: p.name, stack: p.stack, size: p.size, warm: ms.filter(\.warm).count, config: p.config,
                            with: p.with, agent: p.agent, refilling: PoolAction(ctx).refilling(p.name) != nil,
                            members: ms.map {
                                MemberJSON(
                                    name: $0.listing.name, namespace: $0.listing.namespace, warm: $0.warm,
                                    host: $0.listing.host)
                            })
                    }))
            return
        }
        guard !pools.isEmpty else {
            ctx.console.out("no pools on this cluster; make one: so pool create agent-workspace --size 2")
            return
        }
        for (p, ms) in pools {
            ctx.console.out(
                "pool \(p.name): \(p.stack), \(ms.filter(\.warm).count) of \(p.size) warm"
                    + (ms.count > p.size || ms.count < p.size ? " (\(ms.count) made)" : "")
                    + (PoolAction(ctx).refilling(p.name).map { "; refilling (so pool fill, pid \($0))" } ?? ""))
            for m in ms {
                let elsewhere =
                    m.listing.host.isEmpty || m.listing.host == ctx.hostName ? "" : "  (made on \(m.listing.host))"
                ctx.console.out("  \(m.listing.name)  \(m.warm ? "warm" : "starting")\(elsewhere)")
            }
        }
    }
}
