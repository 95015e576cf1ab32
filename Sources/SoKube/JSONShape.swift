import Foundation

/// Which parts of a JSON document to keep when reading it (`JSON.parse(_:keeping:)`): the rest is skipped
/// over, byte by byte, and never built. A thousand namespaces are 3 MB, most of it managedFields, of which
/// `so deployment list` needs the labels and annotations.
public indirect enum JSONShape: Sendable {
    /// The whole value.
    case all
    /// An object's keys named here, each read to its own shape (any other key skipped); an array's elements
    /// each read to this same shape; any other value whole.
    case keys([String: JSONShape])
}
