import Testing

@testable import SoCLI

/// A trace's `at=` counts from the process's start as the kernel says it (`/proc/self/stat`, field 22).
struct ProcessStartTests {
    @Test func theStartTimeIsReadAfterTheCommandsNameWhateverItHolds() {
        let stat = "4242 (so (a) b) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 3 0 987654 1000000 200"
        #expect(ProcessStart.startTicks(stat) == 987_654)
        #expect(ProcessStart.startTicks("4242 (so) S 1 2") == nil)
        #expect(ProcessStart.startTicks("no name") == nil)
    }

    @Test func thisProcessStartedBeforeThisTest() {
        let age = ProcessStart.age()
        #expect(age > .zero && age < .seconds(24 * 3600), "\(age)")
    }
}
