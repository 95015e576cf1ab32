import Foundation

/// Columns as `kubectl get` prints them: each padded to its widest cell, two spaces apart, the last one as it is.
enum TextTable {
    static func lines(_ rows: [[String]]) -> [String] {
        let n = rows.first?.count ?? 0
        let widths = (0..<n).map { i in rows.map { $0[i].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { i, cell in
                i == n - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
    }
}
