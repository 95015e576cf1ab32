import Foundation
import SoBasics
import SoCompose
import Testing

/// Compose `deploy.resources` and the older `cpus` / `mem_limit` / `mem_reservation` are checked when
/// the compose file is read: an error naming the file:line and the service, not a silent default.
@Suite struct ComposeResourceQuantityTests {
    @Test func deployResourcesCPUAndMemory() {
        let cpu = soError { _ = try service("image: x\ndeploy:\n  resources:\n    limits:\n      cpus: lots") }
        #expect(cpu?.line == "c.yml:7: deploy.resources.limits.cpus 'lots' of service 's' is not a CPU quantity")
        #expect(cpu?.hint?.contains("250m") == true)
        let mem = soError {
            _ = try service("image: x\ndeploy:\n  resources:\n    reservations:\n      memory: 12 potatoes")
        }
        #expect(
            mem?.line
                == "c.yml:7: deploy.resources.reservations.memory '12 potatoes' of service 's' is not a memory size")
        #expect(mem?.hint?.contains("512Mi") == true)
    }

    @Test func legacyKeys() {
        #expect(
            soError { _ = try service("image: x\ncpus: many") }?.line
                == "c.yml:4: cpus 'many' of service 's' is not a CPU quantity")
        #expect(
            soError { _ = try service("image: x\nmem_limit: 1 GB please") }?.line
                == "c.yml:4: mem_limit '1 GB please' of service 's' is not a memory size")
        #expect(
            soError { _ = try service("image: x\nmem_reservation: lots") }?.line
                == "c.yml:4: mem_reservation 'lots' of service 's' is not a memory size")
    }

    @Test func validAmountsPass() throws {
        let s = try service(
            "image: x\ncpus: 0.5\nmem_reservation: 128m\ndeploy:\n  resources:\n    limits:\n      memory: 512M\n    reservations:\n      cpus: '0.25'"
        )
        #expect(s.deploy?.limits?.cpus == "0.5")
        #expect(s.deploy?.limits?.memory == "512M")
        #expect(s.deploy?.reservations?.memory == "128m")
        #expect(s.deploy?.reservations?.cpus == "0.25")
    }
}
