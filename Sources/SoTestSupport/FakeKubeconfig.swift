import Foundation
import SoBasics
import SoKube

/// A kubeconfig for the fake cluster: one kind-test context, a stand-in CA and a token (`token`) that no
/// output may show.
public enum FakeKubeconfig {
    public static let token = "not-a-real-token"
    public static let text = """
        apiVersion: v1
        kind: Config
        current-context: kind-test
        clusters:
        - name: kind-test
          cluster:
            server: https://127.0.0.1:6443
            certificate-authority-data: \(Data("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".utf8).base64EncodedString())
        users:
        - name: kind-test
          user:
            token: \(token)
        contexts:
        - name: kind-test
          context: {cluster: kind-test, user: kind-test}
        """
}
