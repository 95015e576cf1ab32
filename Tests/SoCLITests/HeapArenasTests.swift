import Testing

@testable import SoCLI

/// The long-running commands ask glibc for two heap arenas, unless MALLOC_ARENA_MAX says otherwise.
@Suite struct HeapArenasTests {
    @Test func twoArenasAreAskedForUnlessTheEnvironmentSaysHowMany() {
        #if canImport(Glibc)
            #expect(HeapArenas.limit(environment: [:]))
        #endif
        #expect(!HeapArenas.limit(environment: ["MALLOC_ARENA_MAX": "4"]))
    }
}
