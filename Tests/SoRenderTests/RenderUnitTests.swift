import Foundation
import SoBasics
import SoKube
import SoStack
import Testing

@testable import SoRender

@Suite struct QuantityTests {
    @Test func cpu() {
        #expect(Quantity.cpu("0.5") == "500m")
        #expect(Quantity.cpu("2") == "2")
        #expect(Quantity.cpu("1.25") == "1250m")
        #expect(Quantity.cpu("250m") == "250m")
        #expect(Quantity.cpu("lots") == nil)
    }

    @Test func memoryUsesDockerBinaryUnits() {
        #expect(Quantity.bytes("512m", binaryLetters: true) == "512Mi")  // k8s "512m" would be 0.512 bytes
        #expect(Quantity.bytes("512M", binaryLetters: true) == "512Mi")
        #expect(Quantity.bytes("1g", binaryLetters: true) == "1Gi")
        #expect(Quantity.bytes("1.5G", binaryLetters: true) == "1536Mi")
        #expect(Quantity.bytes("256Mi", binaryLetters: true) == "256Mi")
        #expect(Quantity.bytes("1048576", binaryLetters: true) == "1048576")
        #expect(Quantity.bytes("big", binaryLetters: true) == nil)
    }

    @Test func storageKeepsKubernetesUnits() {
        #expect(Quantity.bytes("10Gi", binaryLetters: false) == "10Gi")
        #expect(Quantity.bytes("10G", binaryLetters: false) == "10G")
        #expect(Quantity.bytes("2gb", binaryLetters: false) == "2Gi")
    }

    @Test func durations() {
        #expect(Quantity.seconds("1m30s") == 90)
        #expect(Quantity.seconds("500ms") == 1)
        #expect(Quantity.seconds("2h") == 7200)
        #expect(Quantity.seconds("10") == 10)
        #expect(Quantity.seconds("soon") == nil)
    }
}

@Suite struct SiblingRewriteTests {
    @Test func onlyHostsAreRewritten() {
        let s = ["db"]
        #expect(SiblingRewrite.apply("postgres://u:p@db:5432/db", siblings: s) == "postgres://u:p@localhost:5432/db")
        #expect(SiblingRewrite.apply("db", siblings: s) == "localhost")
        #expect(SiblingRewrite.apply("db:5432", siblings: s) == "localhost:5432")
        #expect(SiblingRewrite.apply("http://db/x", siblings: s) == "http://localhost/x")
        #expect(SiblingRewrite.apply("--host=db:5432", siblings: s) == "--host=localhost:5432")
        for unchanged in ["use the db please", "db-host", "/srv/db/data", "appdb:5432", "mydb", "db.example.org:5432"] {
            #expect(SiblingRewrite.apply(unchanged, siblings: s) == unchanged, "\(unchanged)")
        }
    }
}

@Suite struct NamingTests {
    @Test func laconicHostPathNames() {
        #expect(NameRules.hostPathName("../config/test/script.sh") == "config-test-script-sh")
        #expect(NameRules.hostPathName("./settings.env") == "settings-env")
    }

    @Test func kubernetesNames() {
        #expect(NameRules.dnsSubdomain("grafana_storage") == "grafana-storage")
        #expect(NameRules.serviceName("9lives") == "s-9lives")
        #expect(NameRules.dnsLabel(String(repeating: "a", count: 80)).count == 63)
        #expect(ConfigMapKeys.key(for: "dir/sub file.txt") == "dir__sub_file.txt")
    }

    @Test func secretMarkersSplit() {
        let v = "Bearer " + SecretMarker.marker("K") + "!"
        #expect(SecretMarker.split(v) == [.text("Bearer "), .secret("K"), .text("!")])
        #expect(SecretMarker.split("plain") == [.text("plain")])
    }
}
