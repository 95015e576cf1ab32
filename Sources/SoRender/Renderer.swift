import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// Pure: a deployment model in, the ordered Kubernetes objects out. No files, clock, randomness or network.
public enum Renderer {
    /// The namespace a deployment's objects live in: the spec's `namespace:`, else the deployment id.
    public static func namespace(of model: DeploymentModel) -> String {
        model.spec.namespace ?? NameRules.dnsLabel(model.id)
    }

    public static func render(_ model: DeploymentModel, options: RenderOptions = RenderOptions()) throws -> Manifest {
        try RenderState.checkServiceNames(model)
        var r = RenderState(model: model, options: options, ports: try ports(of: model))
        try r.run()
        return Manifest(objects: r.ordered(), warnings: r.warnings, ports: r.ports)
    }

    /// Every port decision of `model` (`PortPlan`; the ports themselves were parsed once, after interpolation,
    /// when the model was loaded), refused as render refuses it: render takes its plan from here, and so do
    /// port-forward, restart's maintenance-service and `up --preview`.
    public static func ports(of model: DeploymentModel) throws -> PortPlan {
        let plan = PortPlan(model)
        if let problem = plan.problems.first { throw problem }
        return plan
    }
}

extension ComposeService {
    /// laconic-so's marker for services that run as init containers.
    var isInitContainer: Bool { labels.contains { $0.0 == "laconic.init-container" && $0.1 == "true" } }
}
