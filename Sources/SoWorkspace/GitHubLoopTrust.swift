import Foundation
import SoBasics

extension GitHubLoopExecutor {
    /// What GitHub says each sender of a pass's task-giving events may do in its repository
    /// (`GitHubLoopPlanner.asker`), asked once per sender and repository in the pass. One GitHub does not answer is
    /// left out (one line says so): the planner keeps its events pending, and the next pass asks again.
    func permissions(_ events: [GitHubEvent]) async -> [String: GitHubPermission] {
        var known: [String: GitHubPermission] = [:]
        var failed: Set<String> = []
        for e in events {
            guard let login = GitHubLoopPlanner.asker(e, config) else { continue }
            let key = GitHubPermission.key(e.repository, login)
            guard known[key] == nil, !failed.contains(key) else { continue }
            do { known[key] = try await effects.permission(repository: e.repository, login: login) } catch {
                failed.insert(key)
                say("github: \(e.repository)#\(e.number): what @\(login) may do is not known: \(Self.oneLine(error))")
            }
        }
        return known
    }
}
