import Foundation
import SoActions
import SoBasics
import SoCompose
import SoRender
import SoStack

/// Finds the address compose's `host-gateway` stands for when a deployment runs on kind: the gateway of
/// kind's docker network (`docker network inspect kind`), through the process seam. Rendering is given
/// the answer; it never asks itself.
struct HostGatewayFinder {
    let ctx: SoContext

    /// Whether start must look: some service writes `NAME:host-gateway` and the spec names no address.
    static func needed(_ model: DeploymentModel) -> Bool {
        model.spec.hostGateway == nil && HostAliases.usesGateway((model.pods + model.jobs).flatMap(\.compose.services))
    }

    /// The network kind puts its nodes on (kind's own override for the provider, else `kind`).
    var network: String {
        let override =
            ctx.kindProvider.cli == "podman" ? "KIND_EXPERIMENTAL_PODMAN_NETWORK" : "KIND_EXPERIMENTAL_DOCKER_NETWORK"
        if let n = ctx.environment[override], !n.isEmpty { return n }
        return "kind"
    }

    /// The IPv4 gateway of kind's network (else its first IPv6 one), asked of the provider's engine (podman
    /// lists its subnets, docker and nerdctl their IPAM config); nil, with a note under --verbose, when the engine
    /// cannot tell (render then warns and leaves the aliases out).
    func kindGateway() async -> String? {
        let engine = ctx.kindProvider.cli
        let format =
            engine == "podman" ? "{{range .Subnets}}{{.Gateway}} {{end}}" : "{{range .IPAM.Config}}{{.Gateway}} {{end}}"
        let argv = [engine, "network", "inspect", network, "--format", format]
        // Reported just below (verbose): host-gateway is optional, the deployment starts without it.
        guard let r = try? await ctx.processes.run(argv, workingDirectory: nil, environment: nil, timeout: 30),
            r.exitCode == 0
        else {
            ctx.verbose(
                "cannot read the gateway of \(engine) network '\(network)' (\(engine) network inspect failed): extra_hosts host-gateway is left out"
            )
            return nil
        }
        return Self.pick(r.stdout)
    }

    /// `172.18.0.1 fc00:f853:ccd:e793::1` → the IPv4 address (pods on kind are IPv4 unless the cluster says otherwise).
    static func pick(_ output: String) -> String? {
        let addresses = output.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init).filter(
            IPAddress.isValid)
        return addresses.first(where: IPAddress.isIPv4) ?? addresses.first
    }
}
