import SoWorkspace

/// What of a task decides whether a page must be drawn again.
struct TaskDigest: Equatable {
    var id: Int
    var state: String
    var step: String?
    var steps: Int
    var commits: Int
    var files: Int
    var usd: Double?
    var pullRequest: String?
    init(_ t: TaskRecord) {
        id = t.id
        state = t.state
        step = t.step
        steps = t.progress.count
        commits = t.commits.count
        files = t.files.count
        usd = t.cost.usd
        pullRequest = t.pullRequest
    }
}
