import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDashboard
import SoDashboardServer
import SoDeploy
import SoWorkspace

struct DashboardCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "Serve a live web view of every deployment, workspace and task on the cluster.",
        discussion: """
            Serves on 127.0.0.1 until interrupted and prints a sign-in link that carries the token in its fragment \
            (after #, which a browser never sends to a server or a proxy's log): open it once and the browser holds a \
            session's cookie for 12 hours or until "Sign out" (anything else gets a 403; a client sending wrong tokens \
            waits longer after each). Pages change as the cluster does, without a reload. The pages can queue and \
            cancel tasks, start and stop deployments and take workspaces down, through the same actions and Leases \
            as the CLI: on a directory of this machine only if this so made it under $SO_HOME/deployments, and on \
            any other deployment (another host's, or a team's page with no disk) through the cluster's record of it, \
            made into $SO_HOME/deployments and refused when it names a file outside itself; --read-only turns that \
            off. On loopback it answers to 127.0.0.1, localhost and ::1 only. Any other --listen address needs \
            --tls-cert and --tls-key (HTTPS), --trust-proxy behind a proxy that serves HTTPS (then what it says came \
            over plain HTTP is refused), --read-only, or --insecure-http. SO_DASHBOARD_TOKEN sets the token \
            (32 characters at least) instead of a new one (a team's page in a cluster, read-only or acting: see \
            examples/dashboard).

            GitHub's webhook: with --github-repo OWNER/NAME (repeatable) and the webhook's secret \
            (--github-secret-file, or SO_GITHUB_WEBHOOK_SECRET), POST /github/webhook takes GitHub's deliveries \
            without a session: a body signed with the secret (X-Hub-Signature-256) about one of those repositories is \
            written to the cluster (a Secret per delivery in the namespace so-github) before a 202; a redelivery \
            changes nothing. A wrong or missing signature gets a 401, an event so does not handle a 204, a malformed \
            or oversized (25 MB) body a 400, another repository a 403, an inbox that cannot be written a 503.

            The GitHub loop's page (/github, linked from every page when the webhook or --github-loop-config is \
            given): each issue in the loop with its pull request, its workspace, its state, and the tasks, cost and \
            wall-clock it has spent (and has left, with --github-loop-config, the file 'so github loop --config' \
            reads); the inbox's deliveries by state, and what the webhook answered since the server started. Names \
            and numbers only: no issue's or comment's text.

            Example:
              so dashboard
              so dashboard --port 9000 --read-only
              so dashboard --listen 0.0.0.0 --tls-cert cert.pem --tls-key key.pem
              so dashboard --listen 0.0.0.0 --read-only --trust-proxy
              so dashboard --read-only --github-repo acme/app --github-secret-file /etc/so-github/secret
              so dashboard --github-repo acme/app --github-secret-file secret --github-loop-config loop.yml
            """
    )
    static let takes: Set<GroupOption> = []
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @Option(name: .long, help: "The port to serve on (0: any free one).") var port = 7878
    @Option(name: .long, help: "The address to listen on (default: loopback only).") var listen = "127.0.0.1"
    @Flag(name: .long, help: "Offer no actions: the pages only show.") var readOnly = false
    @Option(name: .long, help: "Serve HTTPS with this PEM certificate chain (with --tls-key).") var tlsCert: String?
    @Option(name: .long, help: "The PEM private key of --tls-cert.") var tlsKey: String?
    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Behind a proxy: trust its X-Forwarded-Proto (https: Secure cookie, HSTS) and X-Forwarded-For; with "
                + "actions on an address other than loopback, answer only what it says came over HTTPS."))
    var trustProxy = false
    @Flag(name: .long, help: "Allow actions over plain HTTP on an address other than loopback (not advised).")
    var insecureHttp = false
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Take GitHub's webhook deliveries signed with the secret in this file (or SO_GITHUB_WEBHOOK_SECRET).",
            valueName: "path"))
    var githubSecretFile: String?
    @Option(
        name: .customLong("github-repo"),
        help: ArgumentHelp(
            "A repository whose deliveries are taken (repeatable; with the secret).", valueName: "OWNER/NAME"))
    var githubRepos: [String] = []
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The most pending deliveries the inbox holds; past it a delivery is answered 503.", valueName: "n"))
    var githubInboxBound = GitHubWebhook.defaultInboxBound
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The GitHub loop's config file (its budgets: the /github page shows what each issue has left).",
            valueName: "path"))
    var githubLoopConfig: String?
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        guard githubInboxBound > 0 else { throw ValidationError("--github-inbox-bound must be above 0") }
    }

    /// What this command line may serve: HTTPS needs both files; plain HTTP off loopback only shows, unless told.
    /// Behind a trusted proxy (`--trust-proxy`), actions on such an address are taken over what the proxy says was
    /// HTTPS only (`httpsOnly`). Returns whether that rule applies.
    static func check(
        listen: String, tls: DashboardServer.TLSFiles?, readOnly: Bool, insecureHTTP: Bool, trustProxy: Bool = false
    ) throws -> Bool {
        guard tls == nil, !readOnly, !insecureHTTP, !DashboardAccess.isLoopback(listen) else { return false }
        if trustProxy { return true }
        throw SoError.usage(
            "so dashboard will not take actions over plain HTTP on \(listen): anyone on the way could read the "
                + "session's cookie and act with it",
            hint: "--tls-cert and --tls-key serve HTTPS; --trust-proxy behind a proxy that serves it (requests it "
                + "says were plain HTTP are refused); --read-only shows without actions; --insecure-http if you "
                + "accept the risk")
    }

    /// The webhook's secret and repositories, both or neither; nil: no webhook.
    static func githubSetup(secretFile: String?, environment: [String: String], repos: [String], fs: FileSystem)
        throws -> (secret: String, repos: [String])?
    {
        let fromEnv = environment["SO_GITHUB_WEBHOOK_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
        guard secretFile != nil || fromEnv != nil || !repos.isEmpty else { return nil }
        let secret: String
        if let secretFile {
            guard let data = try? fs.readData(secretFile) else {
                throw SoError.usage(
                    "so dashboard cannot read the webhook secret file \(secretFile)",
                    hint: "--github-secret-file takes a file holding the secret GitHub's webhook is given")
            }
            secret = try GitHubWebhook.configuredSecret(String(decoding: data, as: UTF8.self), from: secretFile)
        } else if let fromEnv {
            secret = try GitHubWebhook.configuredSecret(fromEnv, from: "SO_GITHUB_WEBHOOK_SECRET")
        } else {
            throw SoError.usage(
                "so dashboard will not take GitHub's deliveries without the webhook's secret",
                hint:
                    "give --github-secret-file PATH (or SO_GITHUB_WEBHOOK_SECRET) with the secret GitHub's webhook has")
        }
        guard !repos.isEmpty else {
            throw SoError.usage(
                "so dashboard has a webhook secret but no repository to take deliveries from",
                hint: "give --github-repo OWNER/NAME for each repository whose webhook sends here")
        }
        for repo in repos where !GitHubEvent.isRepositoryName(repo) {
            throw SoError.usage(
                "so dashboard: --github-repo \(repo.debugDescription) is not a repository's OWNER/NAME",
                hint: "write it as GitHub shows it, e.g. --github-repo acme/app")
        }
        return (secret, repos)
    }

    func run(_ ctx: SoContext) async throws {
        let ctx = global.context(ctx)
        HeapArenas.limit(environment: ctx.environment)
        let github = try Self.githubSetup(
            secretFile: githubSecretFile.map { ctx.absolute($0) }, environment: ctx.environment, repos: githubRepos,
            fs: ctx.fs)
        let tls: DashboardServer.TLSFiles?
        switch (tlsCert, tlsKey) {
        case (nil, nil): tls = nil
        case (let cert?, let key?): tls = .init(certificate: ctx.absolute(cert), key: ctx.absolute(key))
        default:
            throw SoError.usage(
                "so dashboard needs --tls-cert and --tls-key together", hint: "give the certificate and its key")
        }
        let httpsOnly = try Self.check(
            listen: listen, tls: tls, readOnly: readOnly, insecureHTTP: insecureHttp, trustProxy: trustProxy)
        let fixed = try ctx.environment["SO_DASHBOARD_TOKEN"].map { try DashboardAccess.configuredToken($0) }
        let loop = try githubLoopConfig.map { try GitHubLoopConfig.load(ctx.absolute($0), fs: ctx.fs) }
        let githubPage =
            github == nil && loop == nil ? nil : GitHubSetup(receiving: github?.repos ?? [], budget: loop?.budget)
        let options = cluster.options(manage: false)
        let feed = try await DashboardFeed.open(ctx, cluster: options, github: githubPage != nil)
        var acting = DashboardAccess(
            token: fixed ?? DashboardAccess.newToken(ctx.entropy.bytes(32)),
            csrf: DashboardAccess.newToken(ctx.entropy.bytes(32)), port: port,
            transport: tls != nil ? .https : trustProxy ? .proxied : .http,
            allowedHosts: DashboardAccess.loopbackHosts(listen))
        acting.httpsOnly = httpsOnly
        let access = acting
        let console = ctx.console
        let webhook = github.map {
            GitHubWebhook(
                secret: $0.secret, repositories: $0.repos, inbox: GitHubInbox(client: feed.client),
                inboxBound: githubInboxBound, log: { console.out($0) })
        }
        let server = DashboardServer(
            feed: feed, access: access, actions: readOnly ? nil : DashboardActions(ctx: ctx, cluster: options),
            hostName: ctx.hostName, webhook: webhook, github: githubPage)
        let shown = listen == "0.0.0.0" || listen == "::" ? "127.0.0.1" : listen
        let tokenShown = fixed == nil
        let scheme = tls == nil ? "http" : "https"
        try await server.run(host: listen, port: port, tls: tls) { bound in
            let host = shown.contains(":") ? "[\(shown)]" : shown
            // The token after `#`: the browser keeps it from every server and log; the page posts it once.
            console.out(
                "so dashboard: \(scheme)://\(host):\(bound)/signin"
                    + (tokenShown ? "#token=\(access.token)" : " (token: SO_DASHBOARD_TOKEN)"))
            if let webhook {
                console.out(
                    "so dashboard: GitHub's deliveries at \(scheme)://\(host):\(bound)\(GitHubWebhook.path) for "
                        + webhook.repositories.sorted().joined(separator: ", "))
            }
            console.out("press Ctrl-C to stop")
        }
    }
}
