import Foundation

/// Bar charts as inline SVG (no script, no library): every label escaped, sizes computed here.
public enum Chart {
    /// Vertical columns, one per (label, value), the tallest as high as the chart.
    public static func columns(_ data: [(String, Double)], format: (Double) -> String) -> String {
        guard !data.isEmpty else { return PageParts.empty("nothing to draw") }
        let width = 720.0
        let height = 180.0
        let top = max(data.map(\.1).max() ?? 0, 1e-9)
        let slot = width / Double(data.count)
        var out =
            "<svg class=\"chart\" viewBox=\"0 0 \(Int(width)) \(Int(height + 40))\" role=\"img\" "
            + "aria-label=\"column chart\" xmlns=\"http://www.w3.org/2000/svg\">"
        for (i, (label, value)) in data.enumerated() {
            let h = value / top * height
            let x = Double(i) * slot
            out +=
                "<g><title>\(HTML.escape(label)): \(HTML.escape(format(value)))</title>"
                + "<rect x=\(q(x + slot * 0.15)) y=\(q(height - h)) width=\(q(slot * 0.7)) height=\(q(max(h, value > 0 ? 1 : 0)))></rect>"
                + "<text x=\(q(x + slot / 2)) y=\(q(height + 16)) text-anchor=\"middle\">\(HTML.escape(String(label.suffix(12))))</text></g>"
        }
        out += "<text x=\"4\" y=\"12\" class=\"max\">\(HTML.escape(format(top)))</text>"
        return out + "</svg>"
    }

    /// Horizontal bars, one per (label, value), with the value written at the end.
    public static func bars(_ data: [(String, Double)], format: (Double) -> String) -> String {
        guard !data.isEmpty else { return PageParts.empty("nothing to draw") }
        let top = max(data.map(\.1).max() ?? 0, 1e-9)
        let row = 24.0
        var out =
            "<svg class=\"chart\" viewBox=\"0 0 720 \(Int(row * Double(data.count) + 8))\" role=\"img\" "
            + "aria-label=\"bar chart\" xmlns=\"http://www.w3.org/2000/svg\">"
        for (i, (label, value)) in data.enumerated() {
            let y = Double(i) * row + 4
            out +=
                "<g><text x=\"0\" y=\(q(y + 15))>\(HTML.escape(String(label.prefix(24))))</text>"
                + "<rect x=\"200\" y=\(q(y + 3)) width=\(q(max(1, value / top * 420))) height=\"16\"></rect>"
                + "<text x=\(q(208 + value / top * 420)) y=\(q(y + 15))>\(HTML.escape(format(value)))</text></g>"
        }
        return out + "</svg>"
    }

    static func q(_ v: Double) -> String { "\"\(String(format: "%.1f", v))\"" }
}
