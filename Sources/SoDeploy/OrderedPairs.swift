import Foundation
import SoActions
import SoBasics
import SoCompose
import SoRender
import SoStack

/// Insertion-ordered key/value pairs where a later `set` replaces the value in place.
struct OrderedPairs {
    var pairs: [(String, YValue)] = []
    mutating func set(_ key: String, _ value: YValue) {
        if let i = pairs.firstIndex(where: { $0.0 == key }) { pairs[i].1 = value } else { pairs.append((key, value)) }
    }
}
