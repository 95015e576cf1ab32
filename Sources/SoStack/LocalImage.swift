import Foundation
import SoBasics
import SoCompose

/// The image of a compose service with `build:`: its `image:`, else `<stack>-<service>:local`
/// (what `so build-containers` tags and `start` loads into kind).
public enum LocalImage {
    public static func name(stack: String, service: String) -> String {
        "\(stack.lowercased())-\(service.lowercased()):local"
    }
}
