import SoBasics
import Testing

@testable import SoActions

/// `KIND_EXPERIMENTAL_PROVIDER` read as kind reads it (SoActions' KindProvider). The suite keeps the name it had
/// beside the node image's tests in SoDeployTests (KindNodeImageTests), so the test's name is unchanged.
@Suite struct KindNodeImageTests {
    @Test func anUnknownProviderIsReportedAndDockerUsed() {
        let sink = DiagnosticSink()
        #expect(KindProvider.from(["KIND_EXPERIMENTAL_PROVIDER": "podmn"], diagnostics: sink).cli == "docker")
        #expect(
            sink.all.map(\.description) == [
                "warning: KIND_EXPERIMENTAL_PROVIDER 'podmn' is not a provider kind knows; docker is used "
                    + "(did you mean 'podman'? set it to one of docker, podman, nerdctl, or unset it)"
            ])
        #expect(KindProvider.from([:], diagnostics: sink).cli == "docker")
        #expect(KindProvider.from(["KIND_EXPERIMENTAL_PROVIDER": "podman"], diagnostics: sink).cli == "podman")
    }
}
