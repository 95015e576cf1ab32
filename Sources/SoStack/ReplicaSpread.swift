/// How a Deployment's replicas spread across the cluster's nodes (`replica-spread:` in the spec): `soft` (the
/// default) asks the scheduler to prefer a node without one, `hard` refuses a second replica a node while another
/// node can take it (a replica waits rather than double up), `none` leaves placement to the scheduler.
public enum ReplicaSpread: String, Sendable, Equatable {
    case soft, hard, none
}
