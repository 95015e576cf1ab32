import Foundation
import SoActions
import SoBasics
import SoCompose
import SoStack

/// `so stack list` / `so stack show`.
public struct StackInfoAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    public func list() throws -> [StackInfo] {
        try ctx.locator.builtInStackNames().map { try show($0) }
    }

    public func show(_ nameOrPath: String) throws -> StackInfo {
        let stack = try ctx.locator.resolve(nameOrPath, diagnostics: ctx.diagnostics)
        func component(_ c: ResolvedStack.Component) throws -> StackInfo.Component {
            let compose = try ComposeLoader.load(
                c.composePath, fs: ctx.fs, environment: nil, diagnostics: ctx.diagnostics)
            return .init(
                name: c.name, composeFile: c.composePath,
                services: compose.services.map {
                    .init(name: $0.name, image: $0.image, ports: $0.portEntries.map(\.written))
                })
        }
        let pods = try stack.pods.map(component)
        let jobs = try stack.jobs.map(component)
        var images: [String] = []
        for s in (pods + jobs).flatMap(\.services) { if let i = s.image, !images.contains(i) { images.append(i) } }
        let configs = stack.pods.map { Path.join(stack.configDir, $0.name) }.filter { ctx.fs.isDirectory($0) }
        return StackInfo(
            name: stack.name, builtIn: stack.isBuiltIn, directory: stack.stackDir, description: stack.file.description,
            pods: pods, jobs: jobs, configDirectories: configs, images: images, containers: stack.file.containers,
            repos: stack.file.repos)
    }
}
