/// Words in messages.
public enum English {
    /// `noun` as it goes with `count`: singular for one, plural otherwise (`commit`/`commits`, `Ingress`/`Ingresses`,
    /// `NetworkPolicy`/`NetworkPolicies`).
    public static func plural(_ noun: String, _ count: Int) -> String {
        count == 1 ? noun : noun.hasSuffix("y") ? noun.dropLast() + "ies" : noun.hasSuffix("s") ? noun + "es" : noun + "s"
    }
}
