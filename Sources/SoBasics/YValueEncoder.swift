import Foundation

/// An `Encoder` into an ordered `YValue`, keys sorted by their UTF-8 bytes (as JSONEncoder's
/// `.sortedKeys` sorts them), nil optionals left out (as synthesized `encodeIfPresent` does), so that
/// `JSONWriter` writes every `-o json` output. Whole numbers only: `YValue` has no fractions.
public enum YValueEncoder {
    public static func encode<T: Encodable>(_ value: T) throws -> YValue {
        let slot = Slot()
        try value.encode(to: Encoder_(slot: slot, codingPath: []))
        return slot.resolve()
    }

    final class Slot {
        var value: YValue = .null
        var map: [(String, Slot)]?
        var list: [Slot]?

        func resolve() -> YValue {
            if let map {
                return .map(
                    map.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }.map {
                        ($0.0, $0.1.resolve())
                    })
            }
            if let list { return .list(list.map { $0.resolve() }) }
            return value
        }

        func child(_ key: String) -> Slot {
            if map == nil { map = [] }
            if let existing = map?.first(where: { $0.0 == key }) { return existing.1 }
            let s = Slot()
            map?.append((key, s))
            return s
        }

        func appended() -> Slot {
            if list == nil { list = [] }
            let s = Slot()
            list?.append(s)
            return s
        }

        func put<T: Encodable>(_ v: T, codingPath: [CodingKey]) throws {
            switch v {
            case let s as String: value = .string(s)
            case let b as Bool: value = .bool(b)
            case let i as Int: value = .int(i)
            case let i as any BinaryInteger: value = .int(Int(truncatingIfNeeded: i))
            case let d as Double: value = try whole(d, codingPath)
            case let f as Float: value = try whole(Double(f), codingPath)
            default: try v.encode(to: Encoder_(slot: self, codingPath: codingPath))
            }
        }

        func whole(_ d: Double, _ codingPath: [CodingKey]) throws -> YValue {
            guard d.isFinite, d.rounded() == d, abs(d) < 9.0e15 else {
                throw EncodingError.invalidValue(
                    d, .init(codingPath: codingPath, debugDescription: "so's JSON writer takes whole numbers only"))
            }
            return .int(Int(d))
        }
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int?
        init(stringValue: String) { self.stringValue = stringValue }
        init(intValue: Int) {
            self.stringValue = String(intValue)
            self.intValue = intValue
        }
    }

    struct Encoder_: Encoder {
        let slot: Slot
        var codingPath: [CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<K: CodingKey>(keyedBy type: K.Type) -> KeyedEncodingContainer<K> {
            if slot.map == nil { slot.map = [] }
            return KeyedEncodingContainer(Keyed<K>(slot: slot, codingPath: codingPath))
        }
        func unkeyedContainer() -> UnkeyedEncodingContainer {
            if slot.list == nil { slot.list = [] }
            return Unkeyed(slot: slot, codingPath: codingPath)
        }
        func singleValueContainer() -> SingleValueEncodingContainer { Single(slot: slot, codingPath: codingPath) }
    }

    struct Keyed<K: CodingKey>: KeyedEncodingContainerProtocol {
        let slot: Slot
        var codingPath: [CodingKey]
        mutating func encodeNil(forKey key: K) throws { slot.child(key.stringValue).value = .null }
        mutating func encode<T: Encodable>(_ value: T, forKey key: K) throws {
            try slot.child(key.stringValue).put(value, codingPath: codingPath + [key])
        }
        mutating func nestedContainer<N: CodingKey>(keyedBy keyType: N.Type, forKey key: K) -> KeyedEncodingContainer<N>
        {
            Encoder_(slot: slot.child(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: N.self)
        }
        mutating func nestedUnkeyedContainer(forKey key: K) -> UnkeyedEncodingContainer {
            Encoder_(slot: slot.child(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
        }
        mutating func superEncoder() -> Encoder { Encoder_(slot: slot.child("super"), codingPath: codingPath) }
        mutating func superEncoder(forKey key: K) -> Encoder {
            Encoder_(slot: slot.child(key.stringValue), codingPath: codingPath + [key])
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let slot: Slot
        var codingPath: [CodingKey]
        var count: Int { slot.list?.count ?? 0 }
        var index: Key { Key(intValue: count) }
        mutating func encodeNil() throws { slot.appended().value = .null }
        mutating func encode<T: Encodable>(_ value: T) throws {
            let key = index
            try slot.appended().put(value, codingPath: codingPath + [key])
        }
        mutating func nestedContainer<N: CodingKey>(keyedBy keyType: N.Type) -> KeyedEncodingContainer<N> {
            let key = index
            return Encoder_(slot: slot.appended(), codingPath: codingPath + [key]).container(keyedBy: N.self)
        }
        mutating func nestedUnkeyedContainer() -> UnkeyedEncodingContainer {
            let key = index
            return Encoder_(slot: slot.appended(), codingPath: codingPath + [key]).unkeyedContainer()
        }
        mutating func superEncoder() -> Encoder { Encoder_(slot: slot.appended(), codingPath: codingPath) }
    }

    struct Single: SingleValueEncodingContainer {
        let slot: Slot
        var codingPath: [CodingKey]
        mutating func encodeNil() throws { slot.value = .null }
        mutating func encode<T: Encodable>(_ value: T) throws { try slot.put(value, codingPath: codingPath) }
    }
}
