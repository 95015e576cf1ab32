import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

/// Options of the `deployment` group: a directory, or the name of one `so up` made.
struct DeploymentOptions: GroupOptionSet {
    @Option(name: .long, help: ArgumentHelp("Deployment directory made by 'so deploy create'.", valueName: "dir"))
    var dir: String?
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Name given to 'so up' (the directory $SO_HOME/deployments/NAME; made from the cluster's record of NAME "
                + "when this machine has none).", valueName: "name"))
    var name: String?

    var given: [GroupOption] { (dir == nil ? [] : [.dir]) + (name == nil ? [] : [.name]) }

    func validate() throws {
        if dir != nil && name != nil { throw ValidationError("give either --dir or --name, not both") }
    }

    /// For the verbs that act on one deployment (the group parses these options for `list` too, which takes neither).
    func requireOne() throws {
        if dir == nil && name == nil {
            throw ValidationError("give --dir DIR (a deployment directory) or --name NAME (one 'so up' made)")
        }
    }

    func directory(_ ctx: SoContext) throws -> String {
        if let dir { return dir }
        let named = try ctx.namedDeployment(name ?? "")
        guard ctx.fs.isDirectory(named) else {
            throw SoError(
                "no deployment named '\(name ?? "")' on this host (\(named) does not exist)",
                hint: "see what there is: so deployment list; make one: so up STACK --name \(name ?? "NAME")")
        }
        return named
    }
}
