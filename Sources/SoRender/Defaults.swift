import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// Defaults small enough for 20 pods on a 4-core laptop: 20 × 50m CPU and 20 × 64Mi requested.
public enum Defaults {
    public static let cpuRequest = "50m"
    public static let memoryRequest = "64Mi"
    public static let cpuLimit = "1"
    public static let memoryLimit = "512Mi"
    public static let volumeSize = "2Gi"
    public static let ingressClass = "caddy"
    /// How long a container has between SIGTERM and SIGKILL when its compose service sets no
    /// `stop_grace_period`: compose's default, not Kubernetes' 30 s.
    public static let stopGraceSeconds = 10
    public static let configMapLimit = 1_048_576
    /// uid, gid and fsGroup of pods under pod-security `restricted` unless the spec sets security.run-as-user.
    public static let restrictedUser = 1000
}
