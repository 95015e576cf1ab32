import Foundation
import SoActions
import SoBasics
import SoCompose
import SoRender
import SoStack

/// Writes a file through a temporary file and a rename, so a failure leaves nothing half-written.
/// A file written beside its place and renamed over it: a reader sees the old content or the new, never
/// none or a part (the target is not removed first).
public enum AtomicWrite {
    public static func text(_ text: String, to path: String, fs: FileSystem) throws {
        let tmp = Path.join(Path.dirname(path), ".\(Path.basename(path)).so-tmp-\(getpid())")
        try fs.write(Data(text.utf8), to: tmp)
        do {
            try fs.replace(path, with: tmp)
        } catch {
            try? fs.remove(tmp)  // best effort: the error thrown next is what matters; a stray temp file is harmless
            throw error
        }
    }
}
