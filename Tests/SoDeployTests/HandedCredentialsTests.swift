import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// Spec `credentials-files` reach containers only through the deployment's Secret: their values are
/// never written to config.env (or anywhere in the deployment directory) and never rendered.
@Suite struct CredentialsFilesTests {
    static let values = ["tok-9f8e7d6c5b4a", "p@ss w0rd#x", "from-file-greeting"]

    func made() async throws -> Harness {
        let h = try Harness()
        try h.tmp.write(
            "creds.env", "API_TOKEN=tok-9f8e7d6c5b4a\nDB_PASSWORD='p@ss w0rd#x'\nGREETING=from-file-greeting\n")
        try await h.initAndCreate("example", appendToSpec: "credentials-files:\n  - ./creds.env\n")
        return h
    }

    @Test func valuesAreNeverWrittenToTheDeploymentDirectory() async throws {
        let h = try await made()
        defer { h.tmp.cleanup() }
        let configEnv = try h.read("dep/config.env")
        #expect(configEnv.contains("# From credentials file: \(h.path("creds.env"))\n"))
        #expect(configEnv.contains("# credentials-keys: API_TOKEN DB_PASSWORD GREETING\n"))
        for f in try h.fs.walk(h.path("dep")) where f.kind == .file {
            let text = try h.read("dep/" + f.relative)
            for v in Self.values { #expect(!text.contains(v), "\(f.relative) holds a credential value") }
        }
        // --update keeps it that way.
        _ = try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep", update: true))
        for v in Self.values { #expect(!(try h.read("dep/config.env")).contains(v)) }
    }

    @Test func renderShowsNoValuesAndReferencesTheSecret() async throws {
        let h = try await made()
        defer { h.tmp.cleanup() }
        for placeholders in [false, true] {
            let manifest = try RenderAction(h.ctx).manifest(h.path("dep"), placeholderSecrets: placeholders)
            let yaml = manifest.yaml()
            let json = manifest.objects.map { $0.json() }.joined(separator: "\n")
            for v in Self.values {
                #expect(!yaml.contains(v))
                #expect(!json.contains(v))
            }
            // GREETING is a compose literal (${GREETING:-hello}) and a spec config value: the credential wins,
            // from the Secret; the other keys arrive through envFrom.
            #expect(yaml.contains("key: GREETING"))
            #expect(!yaml.contains("hello from so"))
            #expect(yaml.contains("-generated-secrets\n"))
            #expect(yaml.contains("secretRef:"))
            if placeholders { #expect(yaml.contains("API_TOKEN: <copied from a credentials file at start>")) }
        }
        #expect(!h.console.stdout.contains("tok-9f8e7d6c5b4a"))
    }

    @Test func startCopiesTheValuesIntoTheSecret() async throws {
        let h = try await made()
        defer { h.tmp.cleanup() }
        let model = try RenderAction(h.ctx).model(h.path("dep"))
        let values = try SecretSources(ctx: h.ctx, model: model).values(stored: nil).values
        let secret = try #require(
            try Renderer.render(model, secrets: values).objects.first {
                $0.name == DeploymentNames.generatedSecrets(model.id)
            })
        guard case .map(let data)? = secret.body.first(where: { $0.0 == "data" })?.1 else {
            Issue.record("no data")
            return
        }
        let decoded = Dictionary(
            uniqueKeysWithValues: data.compactMap { k, v -> (String, String)? in
                guard case .string(let b) = v, let d = Data(base64Encoded: b) else { return nil }
                return (k, String(decoding: d, as: UTF8.self))
            })
        #expect(
            decoded == [
                "API_TOKEN": "tok-9f8e7d6c5b4a", "DB_PASSWORD": "p@ss w0rd#x", "GREETING": "from-file-greeting",
            ])

        // A credentials file gone by start is an error naming it.
        try h.fs.remove(h.path("creds.env"))
        #expect {
            _ = try SecretSources(ctx: h.ctx, model: model).values(stored: nil)
        } throws: { ($0 as? SoError)?.message.contains("credentials file not found: \(h.path("creds.env"))") == true }
    }
}
