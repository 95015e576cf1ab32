import SoWorkspace

/// Every string a page shows of a workspace or a deployment's details, through the namespace's `Redactor`: what an
/// agent or a service wrote can hold a secret value anywhere, not only in output.
extension WorkspaceView {
    public func redacted(_ r: Redactor) -> WorkspaceView {
        var v = self
        v.tasks = tasks.map { $0.redacted(r) }
        v.commits = commits.map { .init(sha: $0.sha, subject: r.apply($0.subject)) }
        v.output = output.map { ($0.id, r.apply($0.text)) }
        v.problem = problem.map(r.apply)
        if var state {
            state.branch = r.apply(state.branch)
            state.base = r.apply(state.base)
            state.ref = r.apply(state.ref)
            state.origin = r.apply(state.origin)
            state.unsaved = state.unsaved.map(r.apply)
            state.uncommitted = state.uncommitted.map(r.apply)
            v.state = state
        }
        return v
    }
}

extension TaskRecord {
    func redacted(_ r: Redactor) -> TaskRecord {
        var t = self
        t.text = r.apply(text)
        t.state = r.apply(state)
        t.command = r.apply(command)
        t.issue = issue.map(r.apply)
        t.pullRequestTitle = pullRequestTitle.map(r.apply)
        t.pullRequestBase = pullRequestBase.map(r.apply)
        t.step = step.map(r.apply)
        t.progress = progress.map { step in
            var step = step
            step.text = r.apply(step.text)
            return step
        }
        t.base = base.map(r.apply)
        t.branch = branch.map(r.apply)
        t.commits = commits.map { .init(sha: $0.sha, subject: r.apply($0.subject)) }
        t.files = files.map { f in
            var f = f
            f.path = r.apply(f.path)
            return f
        }
        t.pushed = pushed.map(r.apply)
        t.pullRequest = pullRequest.map(r.apply)
        t.problems = problems.map(r.apply)
        return t
    }
}

extension DeploymentDetail {
    public func redacted(_ r: Redactor) -> DeploymentDetail {
        var d = self
        d.events = events.map {
            .init(
                time: $0.time, type: $0.type, reason: r.apply($0.reason), object: r.apply($0.object),
                message: r.apply($0.message))
        }
        d.failing = failing.map { ($0.container, r.apply($0.reason), r.apply($0.lines)) }
        d.status.problems = status.problems.map(r.apply)
        return d
    }
}
