import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// ConfigMap keys may hold only `[-._a-zA-Z0-9]`: nested paths become `dir__file`.
public enum ConfigMapKeys {
    public static func key(for path: String) -> String {
        String(
            path.replacingOccurrences(of: "/", with: "__").map {
                $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) ? $0 : "_"
            })
    }
}
