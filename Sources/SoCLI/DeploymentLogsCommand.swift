import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

struct DeploymentLogsCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "logs",
        abstract: "Print the logs of every pod and container (or of the named services).",
        discussion: """
            Example:
              so deployment --dir deployments/example logs
              so deployment --dir deployments/example logs web --tail 50 -f
            """
    )
    static let takes = DeploymentTarget.takes
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Argument(help: "Services (containers) to show; all when none.") var services: [String] = []
    @Option(name: [.customShort("n"), .long], help: "Lines from the end of each log.") var tail: Int?
    @Flag(name: .shortAndLong, help: "Keep streaming.") var follow = false
    @Option(name: .long, help: ArgumentHelp("Only newer lines, e.g. 10m or 1h.", valueName: "duration")) var since:
        String?
    @Flag(name: .long, help: "Prefix each line with its timestamp.") var timestamps = false

    func run(_ ctx: SoContext) async throws {
        var seconds: Int?
        if let since {
            guard let s = DurationText.seconds(since).map({ Int($0.rounded(.up)) }) else {
                throw SoError.usage(
                    "--since '\(since)' is not a duration",
                    hint: "write e.g. 30s, 10m or 2h")
            }
            seconds = s
        }
        try await ObserveAction(target.context(ctx)).logs(
            .init(
                directory: target.dir(ctx), cluster: target.options(manage: false), services: services,
                tail: tail, follow: follow, sinceSeconds: seconds, timestamps: timestamps))
    }
}
