import Foundation
import SoBasics
import Testing

@testable import SoRender

/// `links:` aliases answer as Services; a version-1 file renders like its current-layout twin.
@Suite struct LinksRenderTests {
    static let v1 =
        "web:\n  image: x\n  links: [\"db:database\", cache]\ndb:\n  image: postgres\n  ports: [\"5432\"]\ncache:\n  image: redis\n"

    @Test func aLinkAliasIsAServiceLikeTheLinkedOnes() throws {
        let m = try renderSnippet(compose: Self.v1)
        let db = try #require(m.object("Service", "db"))
        let alias = try #require(m.object("Service", "database"))
        #expect(alias["spec"] == db["spec"])
        // A link without an alias needs no object: the service's own name answers.
        #expect(m.objects.filter { $0.kind == "Service" }.map(\.name).sorted() == ["cache", "database", "db", "web"])
    }

    @Test func anAliasThatIsAServicesOwnNameIsLeftToThatService() throws {
        let m = try renderSnippet(
            compose:
                "services:\n  web:\n    image: x\n    links: [\"db:cache\"]\n  db:\n    image: postgres\n    ports: [\"5432\"]\n"
                + "  cache:\n    image: redis\n    ports: [\"6379\"]\n")
        #expect(m.object("Service", "cache")?["spec"]?["ports"]?[0]?["port"]?.int == 6379)
    }

    @Test func aVersion1FileRendersAsItsCurrentLayoutDoes() throws {
        let current = "services:\n" + Self.v1.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
        #expect(try renderSnippet(compose: Self.v1).yaml() == (try renderSnippet(compose: current).yaml()))
    }
}
