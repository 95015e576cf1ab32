import Foundation

/// `task --detach -o json`.
struct DetachedJSON: Encodable {
    var workspace: String
    var id: Int
    var state: String
}
