//! The read of the `sveltos_clusters` data source, one call down: the SveltosClusters of some namespaces and, for a
//! bridge, the metadata of its kubeconfig Secrets there and its claim. A number of requests that does not depend
//! on the number of clusters.

use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kube::Client;

use crate::{
    api::{SveltosCluster, keys},
    domain::ownership::{Claim, MARK_ANNOTATION, claim_name},
    k8s::{
        claim as k8s_claim,
        io::{self, IoError},
    },
};

/// Most bytes of one SveltosCluster, as served, that the data source reads: the bridge's own bound
/// (`super::owned::OWNED_CLUSTER_BYTES`).
pub const LISTED_CLUSTER_BYTES: usize = super::owned::OWNED_CLUSTER_BYTES;

/// What [`read_clusters`] found.
pub struct ClustersRead {
    /// The SveltosClusters that decode.
    pub clusters: Vec<SveltosCluster>,
    /// With a bridge: the metadata of the Secrets carrying its label (the candidates for its kubeconfig Secrets).
    pub secrets: Vec<ObjectMeta>,
    /// With a bridge: its claim, if there is one.
    pub claim: Option<Claim>,
    /// SveltosClusters that exist but do not decode or are longer than [`LISTED_CLUSTER_BYTES`].
    pub unreadable: Vec<io::Undecodable>,
}

/// The bridge whose Secrets and claim [`read_clusters`] reads too.
pub struct OfBridge<'a> {
    /// The bridge's name.
    pub bridge: &'a str,
    /// The namespace of its claim.
    pub claim_namespace: &'a str,
}

/// Why [`read_clusters`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ClustersError {
    /// Listing the SveltosClusters or the Secrets failed.
    #[error("{source}")]
    List {
        /// The API error.
        #[source]
        source: IoError,
    },
    /// Reading the bridge's claim failed.
    #[error("{source}")]
    Claim {
        /// The bridge.
        bridge: String,
        /// The claim's namespace.
        namespace: String,
        /// The claim's name.
        name: String,
        /// The API error.
        #[source]
        source: IoError,
    },
}

/// The SveltosClusters of `namespaces` (all when empty) and, with `bridge` and at least one SveltosCluster, the
/// bridge's Secrets' metadata (the server-side filter is its label) and its claim.
pub async fn read_clusters(
    client: &Client,
    namespaces: &[String],
    bridge: Option<OfBridge<'_>>,
) -> Result<ClustersRead, ClustersError> {
    let list_failed = |source| ClustersError::List { source };
    // SveltosClusters are objects tenants may patch: paged within the read's budget, each within a cap (a
    // longer one is named in a warning, not listed).
    let budget = io::ReadBudget::default();
    let cap = io::ItemCap {
        bytes: LISTED_CLUSTER_BYTES,
        keep: &[keys::BRIDGE_LABEL, MARK_ANNOTATION],
    };
    let (clusters, unreadable): (Vec<SveltosCluster>, _) =
        io::list_bounded(client, namespaces, None, (&budget, cap))
            .await
            .map_err(list_failed)?;
    let mut read = ClustersRead {
        clusters,
        secrets: Vec::new(),
        claim: None,
        unreadable,
    };
    let Some(of) = bridge.filter(|_| !read.clusters.is_empty()) else {
        return Ok(read);
    };
    let prefilter = format!("{}={}", keys::BRIDGE_LABEL, of.bridge);
    // A Secret that does not decode has no expiry to tell: its cluster's is null.
    (read.secrets, _) = io::list_metadata::<Secret>(client, namespaces, Some(&prefilter), &budget)
        .await
        .map_err(list_failed)?;
    let name = claim_name(of.bridge);
    read.claim = k8s_claim::read(client, of.claim_namespace, &name)
        .await
        .map_err(|source| ClustersError::Claim {
            bridge: of.bridge.to_string(),
            namespace: of.claim_namespace.to_string(),
            name,
            source,
        })?;
    Ok(read)
}
