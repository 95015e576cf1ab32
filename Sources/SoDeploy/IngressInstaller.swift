import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// Installs the Caddy ingress controller once per kind cluster and waits for it. A controller that is
/// already available (ours or laconic-so's) is kept; a spec `caddy-ingress-image` that differs from the
/// running one is rolled in, as laconic-so does.
struct IngressInstaller {
    let ctx: SoContext
    let client: ClusterClient

    /// Whether a start needs the controller: kind target, cluster management on, and an Ingress rendered that
    /// names Caddy's class (a cluster whose default class is another's, or a spec naming another, is served by
    /// that controller: Caddy is not installed beside it).
    static func needed(_ model: DeploymentModel, _ manifest: Manifest, _ req: StartRequest) -> Bool {
        model.deployTo == .k8sKind && req.cluster.performClusterManagement && req.onlyKinds == nil
            && manifest.objects.contains {
                $0.isKind(.ingress) && IngressCheck.className($0) == Defaults.ingressClass
            }
    }

    /// Returns true when it applied anything.
    @discardableResult
    func ensure(image: String?, acmeEmail: String?, timeout: Double, progress: ProgressReporter) async throws -> Bool {
        let type = ResourceType.deployment
        if let d = try await client.get(
            type, name: IngressController.deploymentName, namespace: IngressController.namespace),
            Waiter.deploymentPending(d) == nil
        {
            let running = d.at("spec", "template", "spec", "containers")?.array.first?["image"]?.string
            guard let image, image != running else {
                progress.phase(
                    "ingress", "controller \(IngressController.namespace)/\(IngressController.deploymentName) is ready")
                return false
            }
            progress.phase("ingress", "rolling the controller to \(image) (was \(running ?? "unknown"))")
        } else {
            progress.phase(
                "ingress",
                "installing the Caddy ingress controller in \(IngressController.namespace) (once per cluster)")
        }
        let objects = IngressController.objects(image: image, acmeEmail: acmeEmail)
        for o in objects { _ = try await client.apply(o, fieldManager: "so", force: true) }
        let controller = objects.filter { $0.isKind(.deployment) }
        do {
            let selector = "\(DeploymentNames.Label.name)=\(IngressController.deploymentName)"
            try await Waiter(ctx: ctx, client: client, namespace: IngressController.namespace, selector: selector)
                .wait(for: controller, timeout: timeout, progress: progress)
        } catch let e as SoError {
            throw SoError(
                "the ingress controller did not become ready: \(e.message)",
                hint: e.hint ?? "look at 'kubectl -n \(IngressController.namespace) get pods'", exitCode: e.exitCode)
        }
        return true
    }
}
