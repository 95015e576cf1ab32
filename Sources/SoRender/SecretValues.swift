import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// The values of the Secrets `start` makes from host values, gathered by the caller (read from the
/// cluster, generated with the context's entropy, copied from the host). Render turns them into objects.
public struct SecretValues: Sendable {
    /// The `<id>-generated-secrets` data, in order; nil: that Secret is not rendered.
    public var generated: [(key: String, value: SecretValue)]?
    /// Compose `secrets:` values by the compose secret's name.
    public var compose: [String: SecretValue]
    /// The token of the spec's `image-pull-secret`; nil: no image-pull Secret.
    public var imagePullToken: SecretValue?

    public init(
        generated: [(key: String, value: SecretValue)]? = nil, compose: [String: SecretValue] = [:],
        imagePullToken: SecretValue? = nil
    ) {
        self.generated = generated
        self.compose = compose
        self.imagePullToken = imagePullToken
    }
}
