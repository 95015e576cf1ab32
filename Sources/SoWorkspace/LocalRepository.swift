import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

/// A local repository that work comes back into: `--into DIR`, else the checkout the current directory is in.
struct LocalRepository {
    let repository: String
    let commonDir: String

    static func find(_ ctx: SoContext, into: String?) async throws -> LocalRepository {
        let start = into.map(ctx.absolute) ?? ctx.fs.currentDirectory
        guard let c = try await CarryIn.find(ctx, directory: start) else {
            throw SoError(
                "\(start) is not in a git repository",
                hint: "run it in your checkout of the workspace's repository, or pass --into DIR")
        }
        return LocalRepository(repository: c.repository, commonDir: c.commonDir)
    }
}
