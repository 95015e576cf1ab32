import Foundation
import SoBasics
import Testing

@testable import SoStack

/// CPU and memory amounts of spec `resources:` are checked when the spec is read: a typo is an error
/// naming spec.yml:LINE, never a silent fall back to the defaults.
@Suite struct SpecResourceQuantityTests {
    @Test func globalCPUThatIsNotAQuantity() {
        expectError("spec.yml:6: resources.containers.limits.cpus 'lots' is not a CPU quantity") {
            _ = try decodeSpec(
                "stack: test\ndeploy-to: k8s-kind\nresources:\n  containers:\n    limits:\n      cpus: lots\n")
        }
    }

    @Test func perContainerMemoryThatIsNotASize() {
        expectError("spec.yml:7: resources.containers.web.reservations.memory '12 potatoes' is not a memory size") {
            _ = try decodeSpec(
                "stack: test\ndeploy-to: k8s-kind\nresources:\n  containers:\n    web:\n      reservations:\n        memory: 12 potatoes\n"
            )
        }
        expectError("spec.yml:7: resources.containers.web.limits.cpus '2 cores' is not a CPU quantity") {
            _ = try decodeSpec(
                "stack: test\ndeploy-to: k8s-kind\nresources:\n  containers:\n    web:\n      limits:\n        cpus: 2 cores\n"
            )
        }
    }

    @Test func volumeStorageThatIsNotASize() {
        expectError("spec.yml:7: resources.volumes.data.reservations.storage '10 bananas' is not a size") {
            _ = try decodeSpec(
                "stack: test\ndeploy-to: k8s-kind\nresources:\n  volumes:\n    data:\n      reservations:\n        storage: 10 bananas\n"
            )
        }
    }

    @Test func validQuantitiesAreKeptAsWritten() throws {
        let spec = try decodeSpec(
            """
            stack: test
            deploy-to: k8s-kind
            resources:
              containers:
                web:
                  reservations: {cpus: "0.25", memory: 256M}
                  limits: {cpus: 250m, memory: 1Gi}
                db:
                  limits: {cpus: 2, memory: 2g}
              volumes:
                reservations: {storage: 10Gi}
            """)
        let r = spec.sections.resources
        #expect(r.containers["web"]?.reservations == ResourceAmounts(cpus: "0.25", memory: "256M"))
        #expect(r.containers["web"]?.limits == ResourceAmounts(cpus: "250m", memory: "1Gi"))
        #expect(r.containers["db"]?.limits == ResourceAmounts(cpus: "2", memory: "2g"))
        #expect(r.volumeStorageGlobal == "10Gi")
    }
}
