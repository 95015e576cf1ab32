import Foundation
import Logging
import SoBasics

/// A log handler whose metadata is its `metadata` dictionary: the subscript swift-log asks of every handler, written once.
public protocol MetadataLogHandler: LogHandler {}

extension MetadataLogHandler {
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
}
