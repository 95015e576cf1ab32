import Foundation
import SoActions
import SoBasics
import SoCompose
import SoStack

/// One image `build-containers` makes.
public struct BuildTarget: Sendable, Equatable {
    public enum Recipe: Sendable, Equatable {
        /// `container-build/<name>/build.sh` (laconic-so's form), run with bash.
        case script(path: String)
        /// A Dockerfile: `container-build/<name>/Dockerfile`, or a compose service's `build:`.
        case dockerfile(context: String, dockerfile: String, args: [(String, String)], target: String?)

        public static func == (a: Recipe, b: Recipe) -> Bool {
            switch (a, b) {
            case (.script(let x), .script(let y)): return x == y
            case (.dockerfile(let c1, let d1, let a1, let t1), .dockerfile(let c2, let d2, let a2, let t2)):
                return c1 == c2 && d1 == d2 && t1 == t2 && a1.map { $0.0 + "=" + $0.1 } == a2.map { $0.0 + "=" + $0.1 }
            default: return false
            }
        }
    }
    /// The stack's container name, or the compose service name.
    public var name: String
    public var image: String
    public var recipe: Recipe
    /// Where it was declared (stack.yml, or the compose file and line), for errors.
    public var origin: SourceLocation
}
