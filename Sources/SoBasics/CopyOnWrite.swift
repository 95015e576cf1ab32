/// A value kept out of line: copies share one box until one of them is changed, which copies the box first (as
/// Array does). A large struct passed by value through deep call chains keeps its fields in one, so a copy of it is
/// a pointer rather than hundreds of bytes of a thread's stack (issue 67: a debug build's copies of a 36-key `Spec`
/// outgrew a thread's stack and died with SIGSEGV).
public struct CopyOnWrite<Value> {
    private final class Box {
        var value: Value
        init(_ value: Value) { self.value = value }
    }
    private var box: Box

    public init(_ value: Value) { box = Box(value) }

    public var value: Value {
        get { box.value }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
            yield &box.value
        }
    }
}

// A box is only changed through `value`'s modify, which copies it first unless this copy is its only holder.
extension CopyOnWrite: @unchecked Sendable where Value: Sendable {}
