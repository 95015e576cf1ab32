import Foundation
import FuzzSupport
import SoBasics
import SoKube

/// The API server's answers: an object, a list page, a Status, an exec's status channel, watch events (one a line).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKubeJSON(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Fuzz.data(start, count)
    document(data)
    for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) { document(Data(line)) }
    return 0
}

/// The shape `so deployment list` reads a page of namespaces to, and a Status's parts.
let listShape = JSONShape.keys([
    "metadata": .keys(["continue": .all, "resourceVersion": .all]),
    "items": .keys(["metadata": .keys(["name": .all, "labels": .all, "annotations": .all])]),
    "kind": .all, "status": .all, "reason": .all, "details": .keys(["causes": .all]),
])

func document(_ data: Data) {
    let json: JSON
    do {
        json = try JSON.parse(data)
    } catch {
        return
    }
    // Read again, the same value.
    Fuzz.check((try? JSON.parse(data)) == json, "two reads differ")
    // What so writes of it (a merge patch, `-o json`) reads back to the same value, in every style.
    let value = json.yValue
    for style in [JSONWriter.Style.compact, .pretty, .report, .line] {
        let written = JSONWriter.bytes(value, style)
        Fuzz.check(written == JSONWriter.bytes(value, style), "written twice differs")
        do {
            let back = try JSON.parse(Data(written))
            Fuzz.check(
                back.yValue == value, "written JSON reads back otherwise: \(String(decoding: written, as: UTF8.self))")
        } catch {
            Fuzz.check(false, "written JSON does not read back: \(error): \(String(decoding: written, as: UTF8.self))")
        }
    }
    // Read to a shape: what the shape names, as the whole read has it.
    do {
        let shaped = try JSON.parse(data, keeping: listShape)
        Fuzz.check(shaped == project(json, listShape), "a shaped read differs from the whole read's part")
    } catch {
        Fuzz.check(false, "a shaped read fails where the whole read did not: \(error)")
    }
    // An exec's status channel: 0 only for Success; a failure says why on one line.
    let (code, why) = ExecOutcome.ended(status: json)
    Fuzz.check(
        (code == 0) == (json["status"]?.string == "Success"), "exit code \(code) for status \(json["status"] ?? .null)")
    Fuzz.check(code == 0 ? why == nil : true, "a success with an error")
    // Every field `so` reads of an object, whatever its type.
    _ = (json.name, json.namespace, json.labels, json.annotations, json.at("status", "readyReplicas")?.int)
    _ = ExecOutcome.refused(status: 403, body: Data(JSONWriter.bytes(value, .compact)))
}

/// `json` cut to `shape`, as `JSON.parse(_:keeping:)` documents it.
func project(_ json: JSON, _ shape: JSONShape) -> JSON {
    guard case .keys(let wanted) = shape else { return json }
    switch json {
    case .object(let o):
        var out: [String: JSON] = [:]
        for (k, v) in o { if let sub = wanted[k] { out[k] = project(v, sub) } }
        return .object(out)
    case .array(let a): return .array(a.map { project($0, shape) })
    default: return json
    }
}
