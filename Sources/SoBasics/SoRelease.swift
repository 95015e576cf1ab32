/// This build's version of `so`: what `so version` prints and what a deployment's record says wrote it.
public enum SoRelease {
    public static let version = "0.1.0"
}
