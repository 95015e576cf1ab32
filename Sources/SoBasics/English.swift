/// Words in messages.
public enum English {
    /// `noun` as it goes with `count`: singular for one, plural otherwise (`commit`/`commits`, `Ingress`/`Ingresses`,
    /// `NetworkPolicy`/`NetworkPolicies`).
    public static func plural(_ noun: String, _ count: Int) -> String {
        count == 1
            ? noun : noun.hasSuffix("y") ? noun.dropLast() + "ies" : noun.hasSuffix("s") ? noun + "es" : noun + "s"
    }

    /// The first `most` of `items`, comma-separated, with `, …` when there are more (how log and apply name files).
    public static func shortList(_ items: [String], at most: Int) -> String {
        items.prefix(most).joined(separator: ", ") + (items.count > most ? ", …" : "")
    }
}
