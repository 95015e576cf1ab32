import Foundation
import SoBasics
import SoCompose
import SoStack
import SoActions

/// One image `build-containers` makes.
public struct BuildTarget: Sendable, Equatable {
    public enum Recipe: Sendable, Equatable {
        /// `container-build/<name>/build.sh` (laconic-so's form), run with bash.
        case script(path: String)
        /// A Dockerfile: `container-build/<name>/Dockerfile`, or a compose service's `build:`.
        case dockerfile(context: String, dockerfile: String, args: [(String, String)], target: String?)

        public static func == (a: Recipe, b: Recipe) -> Bool {
            switch (a, b) {
            case let (.script(x), .script(y)): return x == y
            case let (.dockerfile(c1, d1, a1, t1), .dockerfile(c2, d2, a2, t2)):
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
