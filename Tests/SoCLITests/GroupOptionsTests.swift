import ArgumentParser
import Foundation
import SoTestSupport
import Testing

@testable import SoCLI

/// The options groups declare (`so --stack S deploy …`, `so deploy --deploy-to T init`, `so deployment --dir D status`)
/// parse before or after the verb to the same values, as ArgumentParser reads them; argv is not rewritten.
@Suite struct GroupOptionsTests {
    func parse<C: ParsableCommand>(_ line: [String], as type: C.Type) throws -> C {
        let command = try SoCommandLine.parse(line)
        return try #require(command as? C, "\(line) parsed as \(Swift.type(of: command))")
    }

    /// Each line of a case, parsed, gives the same value; the first value is the one expected.
    func same<C: ParsableCommand, V: Equatable>(_ lines: [[String]], as type: C.Type, expect: V, _ read: (C) -> V)
        throws
    {
        for line in lines {
            #expect(read(try parse(line, as: type)) == expect, "\(line)")
        }
    }

    @Test func rootOptionsBeforeOrAfterAnySubcommand() throws {
        try same(
            [
                ["--stack", "example", "deploy", "init", "--output", "f"],
                ["deploy", "--stack", "example", "init", "--output", "f"],
                ["deploy", "init", "--output", "f", "--stack", "example"],
            ], as: DeployInitCommand.self, expect: "example"
        ) { $0.stackOption.stack }
        try same(
            [["--root", "r", "stack", "list"], ["stack", "--root", "r", "list"], ["stack", "list", "--root", "r"]],
            as: StackListCommand.self, expect: "r"
        ) { $0.rootOption.root }
        for flag in ["--verbose", "--quiet", "--debug"] {
            let lines = [
                [flag, "deployment", "--dir", "d", "ps"], ["deployment", flag, "--dir", "d", "ps"],
                ["deployment", "--dir", "d", "ps", flag],
            ]
            try same(lines, as: DeploymentPsCommand.self, expect: true) { c in
                flag == "--verbose"
                    ? c.target.global.verbose : flag == "--quiet" ? c.target.global.quiet : c.target.global.debug
            }
        }
        try same(
            [["--stack", "web", "build-containers"], ["build-containers", "--stack", "web"]],
            as: BuildContainersCommand.self, expect: "web"
        ) {
            $0.stackOption.stack
        }
        // Not given: the default, in a verb of each group.
        #expect(
            try parse(["deployment", "--dir", "d", "ps"], as: DeploymentPsCommand.self).target.global.verbose == false)
        #expect(
            try parse(["deploy", "create", "--spec-file", "s"], as: DeployCreateCommand.self).stackOption.stack == nil)
    }

    @Test func deployGroupOptions() throws {
        let init0 = ["init", "--output", "f", "--stack", "s"]
        try same(
            [
                ["deploy", "--deploy-to", "k8s"] + init0, ["deploy"] + init0 + ["--deploy-to", "k8s"],
                ["deploy-system", "--deploy-to=k8s"] + init0,
            ],
            as: DeployInitCommand.self, expect: "k8s"
        ) { $0.group.deployTo }
        #expect(try parse(["deploy"] + init0, as: DeployInitCommand.self).group.deployTo == "k8s-kind")
        try same(
            [
                ["deploy", "--output", "x", "init", "--stack", "example"],
                ["deploy", "init", "--output", "x", "--stack", "example"],
                ["--stack", "example", "deploy", "--output=x", "init"],
            ], as: DeployInitCommand.self, expect: "x"
        ) { $0.output }
        try same(
            [
                ["deploy", "--deploy-to", "k8s", "create", "--spec-file", "s"],
                ["deploy", "create", "--spec-file", "s", "--deploy-to", "k8s"],
            ],
            as: DeployCreateCommand.self, expect: "k8s"
        ) { $0.group.deployTo }
    }

    @Test func deploymentGroupOptions() throws {
        try same(
            [
                ["deployment", "--dir", "d", "status"], ["deployment", "status", "--dir", "d"],
                ["deployment", "--dir=d", "status"],
            ],
            as: DeploymentStatusCommand.self, expect: "d"
        ) { $0.target.deployment.dir }
        try same(
            [
                ["deployment", "--name", "ws-1", "shell"], ["deployment", "shell", "--name", "ws-1"],
                ["deployment", "--name=ws-1", "shell"],
            ],
            as: DeploymentShellCommand.self, expect: "ws-1"
        ) { $0.target.deployment.name }
        let cluster = [
            ["deployment", "--dir", "d", "--kubeconfig", "k", "--context", "c", "logs", "-f"],
            ["deployment", "--dir", "d", "logs", "-f", "--kubeconfig", "k", "--context", "c"],
            ["deployment", "--kubeconfig", "k", "--dir", "d", "logs", "--context", "c", "-f"],
        ]
        try same(cluster, as: DeploymentLogsCommand.self, expect: ["k", "c"]) {
            [$0.target.cluster.kubeconfig, $0.target.cluster.context]
        }
        try same(cluster, as: DeploymentLogsCommand.self, expect: true) { $0.follow }
        try same(
            [
                ["deployment", "--dir", "d", "-o", "json", "status"],
                ["deployment", "status", "--dir", "d", "-o", "json"],
                ["deployment", "-o", "json", "status", "--dir", "d"],
                ["deployment", "--dir", "d", "status", "--output=json"],
            ],
            as: DeploymentStatusCommand.self, expect: OutputFormat.json
        ) { $0.output }
        try same(
            [
                ["deployment", "--name", "n", "-o", "json", "render"],
                ["deployment", "--name", "n", "render", "-o", "json"],
            ],
            as: DeploymentRenderCommand.self, expect: DeploymentRenderCommand.ManifestFormat.json
        ) { $0.output }
        try same(
            [["deployment", "-o", "json", "list"], ["deployment", "list", "-o", "json"]],
            as: DeploymentListCommand.self, expect: OutputFormat.json
        ) {
            $0.output
        }
        try same(
            [
                ["deployment", "--dir", "d", "--timeout", "5", "start"],
                ["deployment", "--dir", "d", "start", "--timeout", "5"],
            ],
            as: DeploymentStartCommand.self, expect: 5.0
        ) { $0.options.timeout }
        try same(
            [
                ["deployment", "--timeout", "7", "--dir", "d", "stop"],
                ["deployment", "--dir", "d", "stop", "--timeout=7"],
            ],
            as: DeploymentStopCommand.self, expect: 7.0
        ) { $0.timeout }
        // Not given: each verb's own default.
        #expect(try parse(["deployment", "--dir", "d", "status"], as: DeploymentStatusCommand.self).output == .text)
        #expect(try parse(["deployment", "--dir", "d", "render"], as: DeploymentRenderCommand.self).output == .yaml)
        #expect(
            try parse(["deployment", "--dir", "d", "start"], as: DeploymentStartCommand.self).options.timeout == 300)
        #expect(try parse(["deployment", "--dir", "d", "stop"], as: DeploymentStopCommand.self).timeout == 120)
        #expect(
            try parse(["deployment", "--dir", "d", "up"], as: DeploymentUpCommand.self).options.target.cluster
                .kubeconfig == nil)
    }

    /// A group option's value may be a verb's name; a flag takes no value, so the word after it is the verb.
    @Test func valuesThatAreVerbNames() throws {
        #expect(
            try parse(["deployment", "--dir", "status", "status"], as: DeploymentStatusCommand.self).target.deployment
                .dir == "status")
        #expect(
            try parse(["deployment", "--name", "stop", "start"], as: DeploymentStartCommand.self).options.target
                .deployment.name == "stop")
        #expect(
            try parse(["deploy", "--output", "create", "init", "--stack", "s"], as: DeployInitCommand.self).output
                == "create")
        #expect(
            try parse(["--stack", "deploy", "deploy", "init", "--output", "f"], as: DeployInitCommand.self).stackOption
                .stack == "deploy")
        let flag = try parse(["deployment", "--dir", "d", "--verbose", "status"], as: DeploymentStatusCommand.self)
        #expect(flag.target.global.verbose && flag.target.deployment.dir == "d")
        // After `--` every word is the command's, options of so included.
        let exec = try parse(
            [
                "deployment", "--name", "ws-1", "exec", "agent", "--", "git", "status", "--dir", "x", "-o", "json",
                "--verbose",
            ],
            as: DeploymentExecCommand.self)
        #expect(exec.command == ["git", "status", "--dir", "x", "-o", "json", "--verbose"])
        #expect(
            exec.target.deployment.name == "ws-1" && exec.target.deployment.dir == nil && !exec.target.global.verbose)
    }

    /// A group option the verb does not take is refused, as an unknown option was, not ignored.
    @Test func optionsAVerbDoesNotTakeAreRefused() async throws {
        let cases: [([String], String)] = [
            (["deployment", "--dir", "d", "-o", "json", "start"], "error: 'deployment start' takes no -o"),
            (
                ["deployment", "--dir", "d", "status", "--timeout", "5"],
                "error: 'deployment status' takes no --timeout"
            ),
            (["deployment", "list", "--dir", "d"], "error: 'deployment list' takes no --dir"),
            (["deployment", "--name", "n", "list"], "error: 'deployment list' takes no --name"),
            (
                ["deployment", "--dir", "d", "render", "--kubeconfig", "k"],
                "error: 'deployment render' takes no --kubeconfig"
            ),
            (["deploy", "--output", "x", "create", "--spec-file", "s"], "error: 'deploy create' takes no --output"),
            (
                ["deployment", "--dir", "d", "status", "-o", "yaml"],
                "error: the value 'yaml' is invalid for '-o <format>': use 'text' or 'json'"
            ),
            (
                ["deployment", "-o", "text", "--dir", "d", "render"],
                "error: the value 'text' is invalid for '-o <format>': use 'yaml' or 'json'"
            ),
            (
                ["deployment", "--timeout", "-5", "--dir", "d", "start"],
                "error: the value '-5' is invalid for '--timeout <seconds>'"
            ),
            (["deploy", "init", "--stack", "example"], "error: missing expected argument '--output <file>'"),
            (["deployment", "--dir", "d", "--name", "n", "status"], "error: give either --dir or --name, not both"),
        ]
        for (line, message) in cases {
            let r = await runSo(line, cwd: "/")
            #expect(r.code == 64, "\(line): \(r.code)")
            #expect(r.stderr.hasPrefix(message), "\(line): \(r.stderr)")
            let verb = line.filter {
                ["deployment", "deploy", "start", "status", "list", "render", "create", "init"].contains($0)
            }
            #expect(
                r.stderr.contains("\nhint: run 'so \(verb.joined(separator: " ")) --help' for usage"),
                "\(line): \(r.stderr)")
        }
    }

    /// A group's options are listed in its help and in the help of each verb that takes them, once each.
    @Test func helpListsEachOptionOnceWhereItBelongs() async throws {
        func optionLines(_ args: [String]) async -> [String] {
            let r = await runSo(args + ["--help"], cwd: "/")
            #expect(r.code == 0, "\(args)")
            return r.stdout.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                $0.hasPrefix("-")
            }
        }
        func count(_ lines: [String], _ prefix: String) -> Int { lines.filter { $0.hasPrefix(prefix) }.count }
        let group = await optionLines(["deployment"])
        for option in [
            "--dir <dir>", "--name <name>", "--kubeconfig <file>", "--context <name>", "-o, --output <format>",
            "--timeout <seconds>",
        ] {
            #expect(count(group, option) == 1, "deployment --help: \(option) in \(group)")
        }
        #expect(count(group, "--stack") == 0, "the root's options are the root's: \(group)")
        let status = await optionLines(["deployment", "status"])
        for option in ["--dir <dir>", "--kubeconfig <file>", "-o, --output <format>", "--verbose"] {
            #expect(count(status, option) == 1, "\(option) in \(status)")
        }
        #expect(count(status, "--timeout") == 0 && count(status, "--deploy-to") == 0, "\(status)")
        let start = await optionLines(["deployment", "start"])
        #expect(count(start, "--timeout <seconds>") == 1 && count(start, "-o") == 0, "\(start)")
        let render = await optionLines(["deployment", "render"])
        #expect(count(render, "--kubeconfig") == 0 && count(render, "-o, --output <format>") == 1, "\(render)")
        let root = await optionLines([])
        #expect(count(root, "--stack <name|path>") == 1 && count(root, "--dir") == 0, "\(root)")
        let initHelp = await optionLines(["deploy", "init"])
        #expect(count(initHelp, "--output <file>") == 1 && count(initHelp, "--deploy-to <target>") == 1, "\(initHelp)")
    }

    /// The usage hint names the subcommands of the line, wherever its options stand.
    @Test func helpPathAndUnknownHelpTopics() {
        #expect(SoCommandLine.helpPath(["deployment", "--dir", "d", "frobnicate"]) == "deployment")
        #expect(
            SoCommandLine.helpPath(["--verbose", "deployment", "--name", "n", "status", "-x"]) == "deployment status")
        #expect(
            SoCommandLine.helpPath(["deploy-system", "--deploy-to", "k8s", "init", "--bogus"]) == "deploy-system init")
        #expect(
            SoCommandLine.helpPath(["deployment", "--name", "n", "exec", "web", "--", "status"]) == "deployment exec")
        #expect(SoCommandLine.helpPath(["frobnicate", "deployment"]) == "")
        #expect(SoCommandLine.helpPath(["stack", "show", "list"]) == "stack show")
        #expect(SoCommandLine.unknownHelpTopic(["help", "deployment", "nosuch"]) == "nosuch")
        #expect(SoCommandLine.unknownHelpTopic(["help", "deployment", "status"]) == nil)
        #expect(SoCommandLine.unknownHelpTopic(["help", "deploy-system", "init"]) == nil)
        #expect(SoCommandLine.unknownHelpTopic(["deployment", "nosuch"]) == nil)
        #expect(SoCommandLine.path(to: DeploymentRotateSecretsCommand.self) == "deployment rotate-secrets")
        #expect(SoCommandLine.path(to: StackNewCommand.self) == "stack new")
    }

    /// laconic-so's global `--dry-run` stands before the command or after the verb, and reaches the verb either way;
    /// a verb that would not honour it refuses it rather than running for real.
    @Test func dryRunBeforeOrAfterTheVerb() throws {
        try same(
            [
                ["--dry-run", "deployment", "--dir", "d", "start"], ["deployment", "--dir", "d", "start", "--dry-run"],
                ["deployment", "--dry-run", "--dir", "d", "start"],
            ], as: DeploymentStartCommand.self, expect: true
        ) { $0.options.dryRun }
        try same(
            [
                ["--dry-run", "up", "agent-workspace", "--name", "x"],
                ["up", "agent-workspace", "--name", "x", "--dry-run"],
            ],
            as: UpCommand.self, expect: true
        ) { $0.dryRun }
        try same([["--dry-run", "down", "x"], ["down", "x", "--dry-run"]], as: DownCommand.self, expect: true) {
            $0.dryRun
        }
        try same(
            [["--dry-run", "--stack", "s", "build-containers"], ["--stack", "s", "build-containers", "--dry-run"]],
            as: BuildContainersCommand.self, expect: true
        ) { $0.dryRun }
        try same(
            [
                ["--dry-run", "deploy", "create", "--spec-file", "s"],
                ["deploy", "create", "--spec-file", "s", "--dry-run"],
            ],
            as: DeployCreateCommand.self, expect: true
        ) { $0.dry.dryRun }
        try same(
            [["--dry-run", "deployment", "--dir", "d", "stop"], ["deployment", "--dir", "d", "stop", "--dry-run"]],
            as: DeploymentStopCommand.self, expect: true
        ) { $0.dryRun }
        #expect(
            try parse(["deployment", "--dir", "d", "start"], as: DeploymentStartCommand.self).options.dryRun == false)
        #expect(try parse(["up", "agent-workspace", "--name", "x"], as: UpCommand.self).dryRun == false)
        do {
            _ = try SoCommandLine.parse(["--dry-run", "deployment", "--dir", "d", "status"])
            Issue.record("status took --dry-run")
        } catch {
            #expect(
                SoCommand.message(for: error).contains("'deployment status' takes no --dry-run"),
                "\(SoCommand.message(for: error))")
        }
    }
}

/// What a verb says it takes (`SoRunnable.takes`, what `SoCommandLine.parse` lets through) is what its help lists and what
/// it declares: a group option, or so's --dry-run, is in a verb's help exactly when the verb takes it.
@Suite struct VerbTakesTests {
    static let spelled: [GroupOption: String] = [
        .dir: "--dir <dir>", .name: "--name <name>", .kubeconfig: "--kubeconfig <file>", .context: "--context <name>",
        .format: "-o, --output <format>", .timeout: "--timeout <seconds>", .specOutput: "--output <file>",
        .dryRun: "--dry-run",
    ]

    /// `command` and every command below it.
    static func commands(_ command: ParsableCommand.Type) -> [ParsableCommand.Type] {
        [command] + command.configuration.subcommands.flatMap { commands($0) }
    }

    @Test func takesIsWhatTheHelpLists() {
        for command in Self.commands(SoCommand.self) where command.configuration.subcommands.isEmpty {
            guard let verb = command as? any SoRunnable.Type else {
                Issue.record("\(command) has no subcommands and is no SoRunnable: execute would print its help")
                continue
            }
            let path = SoCommandLine.path(to: command)
            // The options the verb's group and so may give it.
            let group = path.split(separator: " ").first.map(String.init)
            let possible: [GroupOption] =
                group == "deployment" && path.contains(" ")
                ? [.dir, .name, .kubeconfig, .context, .format, .timeout, .dryRun]
                : group == "deploy" && path.contains(" ") ? [.specOutput, .dryRun] : [.dryRun]
            #expect(verb.takes.isSubset(of: possible), "\(path) takes \(verb.takes) of \(possible)")
            let help = SoCommand.helpMessage(for: command, columns: 200).components(separatedBy: "\n").drop {
                $0 != "OPTIONS:"
            }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            for option in possible {
                let spelling = Self.spelled[option] ?? option.rawValue
                let shown = help.filter { $0.hasPrefix(spelling) }.count
                #expect(
                    shown == (verb.takes.contains(option) ? 1 : 0),
                    "\(path): \(spelling) shown \(shown) times, takes: \(verb.takes.contains(option))")
            }
        }
    }
}

/// A verb that declared its own `-o` (or `--dir`, `--timeout` …) beside its group's would never see a value: the group
/// reads the option first, wherever it stands. Every verb that shows a group option in its help declares the group's set.
@Suite struct GroupOptionDeclarationTests {
    /// The option groups a command type declares, nested ones included.
    static func declared(_ type: ParsableArguments.Type) -> [ParsableArguments.Type] {
        Mirror(reflecting: type.init()).children.compactMap {
            ($0.value as? DeclaredOptionGroup).map { Swift.type(of: $0).valueType }
        }
        .flatMap { [$0] + declared($0) }
    }

    @Test func verbsShowingAGroupOptionDeclareItsSet() {
        let spelled: [(ParsableArguments.Type, String)] = [
            (DeploymentOptions.self, "--dir "), (ClusterFlags.self, "--kubeconfig "),
            (FormatOption.self, "-o, --output "),
            (TimeoutOption.self, "--timeout "), (SpecOutputOption.self, "--output "),
        ]
        for group in [DeploymentCommand.self, DeployCommand.self] as [ParsableCommand.Type] {
            let sets = Self.declared(group).map(ObjectIdentifier.init)
            #expect(!sets.isEmpty, "\(group) declares no group options")
            for verb in group.configuration.subcommands {
                let types = Set(Self.declared(verb).map(ObjectIdentifier.init))
                // The OPTIONS section (examples above it may wrap onto a line that starts with an option).
                let help = SoCommand.helpMessage(for: verb).components(separatedBy: "\n").drop { $0 != "OPTIONS:" }
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                for (set, spelling) in spelled where sets.contains(ObjectIdentifier(set)) {
                    let shown = help.filter { $0.hasPrefix(spelling) }.count
                    #expect(
                        shown == (types.contains(ObjectIdentifier(set)) ? 1 : 0),
                        "\(verb): \(spelling) shown \(shown) times")
                }
            }
        }
    }
}

protocol DeclaredOptionGroup { static var valueType: ParsableArguments.Type { get } }
extension OptionGroup: DeclaredOptionGroup { static var valueType: ParsableArguments.Type { Value.self } }
