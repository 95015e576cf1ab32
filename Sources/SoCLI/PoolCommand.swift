import ArgumentParser
import Foundation

struct PoolCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pool",
        abstract:
            "Warm pools of workspaces: started ahead, claimed by 'so up' in a checkout, refilled after each claim.",
        discussion: """
            A pool holds workspaces of a stack and its options (--config, --with, --agent) made ahead of time: volume bound, image \
            pulled, containers running, the clone waiting — with no repository, no credentials but the pool maker's, no task and no \
            name of yours in them. 'so up' run in a checkout claims one when a pool of the same stack and options fits (--pool names \
            one, --no-pool never claims): the member becomes the workspace NAME (its own namespace, pool-xxxx), the checkout is \
            carried in, and the pool is made full again beside it. An empty pool, or one that does not fit (another origin than \
            its egress reaches, other credentials), is said, and the workspace starts cold.

            'so up --config GIT_REPO=URL' (no checkout) claims too. A pool made with --config GIT_ORIGIN=URL (or GIT_REPO) fetches \
            that repository while its members wait; a claim of it asks the remote where its branch is from this machine as it \
            claims ('git ls-remote', git:// and http(s):// URLs only, no prompt, no credential helper; a private one is asked by \
            the member with your credentials), and the member checks that commit out without fetching.

            A pool is recorded in the cluster (a Secret in the namespace so-pools), as each deployment's record is: 'so up' on any \
            machine with the kubeconfig claims from it (a member made elsewhere gets its directory from its record), any machine \
            refills it, and 'pool list' shows every pool of the cluster. A machine whose copy of the stack is at another path fits a \
            pool when the files are the same.

            Example:
              so pool create agent-workspace --size 3
              so pool list
              so pool create agent-workspace --size 5      # resize: the record's size, members made or removed
              so pool fill agent-workspace
              so pool remove agent-workspace
            """,
        subcommands: [PoolCreateCommand.self, PoolListCommand.self, PoolFillCommand.self, PoolRemoveCommand.self],
        defaultSubcommand: PoolListCommand.self
    )
}
