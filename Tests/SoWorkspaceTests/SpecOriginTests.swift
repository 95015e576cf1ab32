import Foundation
import SoBasics
import Testing

@testable import SoWorkspace

/// An error in the spec `so up` made (and removed) names where its value came from: the stack's spec-defaults
/// line when the value is the default's, else the spec made for the workspace, without a line of a file now gone.
@Suite struct SpecOriginTests {
    static let defaults = """
        spec-defaults:
          config:
            GIT_REPO: ""
          resources:
            containers:
              x: {reservations: {cpus: lots}}
          network:
            ports:
              x: ['80', '443']
        """

    static let spec = """
        stack: /s/stack.yml
        deploy-to: k8s-kind
        config:
          GIT_REPO: "https://example.org/r.git"
          WORKSPACE_NAME: w
        resources:
          containers:
            x:
              reservations:
                cpus: lots
        network:
          ports:
            x:
            - '80'
            - '443'
        """

    func relocate(line: Int) throws -> SoError {
        let stack = try #require(try YAMLFile.parse(Self.defaults, file: "/s/stack.yml"))
        let defaults = try #require(try stack.mapping("stack").value("spec-defaults"))
        let e = SoError("key: a message", hint: "the fix", at: SourceLocation(file: "/s/w.spec-1.yml", line: line))
        return SpecOrigin.relocate(e, specText: Self.spec, defaults: defaults, workspace: "w")
    }

    @Test func aValueOfTheStacksDefaultsIsNamedOnItsLine() throws {
        let e = try relocate(line: 10)
        #expect(e.location == SourceLocation(file: "/s/stack.yml", line: 6))
        #expect(e.message == "spec-defaults: key: a message" && e.hint == "the fix")
        let port = try relocate(line: 15)
        #expect(port.location == SourceLocation(file: "/s/stack.yml", line: 9))
    }

    @Test func aValueTheFlagsChangedIsNamedInTheSpecMade() throws {
        for line in [4, 5, 2, 99] {
            let e = try relocate(line: line)
            #expect(e.location == nil)
            #expect(
                e.message
                    == "in the spec made for workspace w (from the stack's spec-defaults and the command's flags): "
                    + "key: a message")
        }
    }
}
