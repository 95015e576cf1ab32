import Foundation
import SoDeploy

/// `diff -o json` of a revision the record's gate refuses: what it refuses, each setting and where.
struct RefusedRevisionJSON: Encodable {
    struct Finding: Encodable {
        var kind: String
        var file: String
        var key: String
        var what: String
    }
    var revision: Int
    var writer: String
    var refused: [Finding]

    init(_ review: RecordAction.Review) {
        revision = review.revision
        writer = review.writer.description
        refused = review.findings.map { f in
            let kind: String
            switch f.kind {
            case .reach: kind = "reach"
            case .privilege: kind = "privilege"
            case .place: kind = "place"
            }
            return Finding(kind: kind, file: f.file, key: f.key, what: f.what)
        }
    }
}
