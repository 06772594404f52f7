//! The bridge's Kubernetes IO, as one plan or apply of `sveltos_cluster_inventory_bridge` orchestrates it: read
//! the inventory ([`inventory`]) and what exists ([`snapshot`]), a refresh ([`refresh`]) and the reads of a plan
//! with its claim ([`plan`]), the inventory read ahead in the background ([`read_ahead`]), apply's writes with minting ([`execute`], journaled in the claim as they return: [`journal`]) and removals in Sveltos' order ([`deregister`], their
//! add-ons withdrawn first by `withdraw.rs`), the wait for Sveltos to report the clusters Ready ([`readiness`]), and one apply or destroy from its reads to the read back after a failure ([`apply`]).
//! Every call goes through [`crate::k8s::io`]; every failure is a typed error naming the cluster and object,
//! which the mapping layer turns into diagnostics (`provider::diag`).

pub mod apply;
pub mod clusters;
pub mod credentials;
pub mod deregister;
pub mod execute;
pub mod inventory;
pub mod journal;
pub mod owned;
pub mod plan;
pub mod profiles;
pub mod read_ahead;
pub mod readiness;
pub mod refresh;
pub mod snapshot;
mod withdraw;

/// How many clusters are written, deleted or checked at once.
pub const CONCURRENCY: usize = 16;

/// A namespaced object the bridge reads and writes through [`crate::k8s::io`] (SveltosClusters, Secrets).
pub trait Namespaced:
    kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType: Default>
    + Clone
    + serde::de::DeserializeOwned
    + std::fmt::Debug
{
}

impl<K> Namespaced for K where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType: Default>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
{
}
