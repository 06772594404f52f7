//! Cluster API `Cluster`s (`cluster.x-k8s.io`), metadata only: which exist in the namespaces a bridge reads
//! (`skip_cluster_api_clusters`). The version listed is the one the API server prefers when the provider knows it,
//! else the first of [`CLUSTER_API_VERSIONS`] that holds `clusters`; a group not served, or serving no `clusters`,
//! is no Cluster API installed: nothing to read, no error. Only names are kept.

use std::collections::BTreeSet;

use kube::Client;

use crate::{
    api::{
        CLUSTER_API_CLUSTERS, CLUSTER_API_GROUP, CLUSTER_API_VERSIONS, CapiClusterV1beta1,
        CapiClusterV1beta2,
    },
    domain::text::shown,
    k8s::io::{self, IoCause, IoError, ReadBudget},
};

/// The most versions of the group an error names.
const MAX_NAMED: usize = 16;

/// The version to list Clusters through: the preferred one when known and holding `clusters`, else the first of
/// [`CLUSTER_API_VERSIONS`] holding them; `None` when the group is not served or no version of it holds them.
pub async fn served_version(client: &Client) -> Result<Option<&'static str>, IoError> {
    let Some(preferred) = io::preferred_version(client, CLUSTER_API_GROUP).await? else {
        return Ok(None);
    };
    let known = CLUSTER_API_VERSIONS.iter().copied();
    let candidates = known.clone().filter(|v| *v == preferred).chain(known);
    for version in candidates {
        if io::serves(client, CLUSTER_API_GROUP, version, CLUSTER_API_CLUSTERS).await? {
            tracing::debug!(version, "reading Cluster API Clusters");
            return Ok(Some(version));
        }
    }
    let mut serving = Vec::new();
    for version in io::group_versions(client, CLUSTER_API_GROUP)
        .await?
        .iter()
        .take(MAX_NAMED)
    {
        if io::serves(client, CLUSTER_API_GROUP, version, CLUSTER_API_CLUSTERS).await? {
            serving.push(shown(version, 63));
        }
    }
    if serving.is_empty() {
        return Ok(None);
    }
    Err(IoError {
        action: "discover",
        object: format!("Cluster versions ({CLUSTER_API_GROUP})"),
        message: format!(
            "the API server serves Cluster API Clusters only in {}; the provider reads {}",
            serving.join(", "),
            CLUSTER_API_VERSIONS.join(" or ")
        ),
        code: None,
        source: IoCause::NotServed,
    })
}

/// The keys (`namespace/name`) of the Cluster API Clusters in `namespaces` (all when empty), from a metadata LIST
/// within `budget` (one that does not decode counts by its name); `None` when Cluster API is not served.
pub async fn cluster_keys(
    client: &Client,
    namespaces: &[String],
    budget: &ReadBudget,
) -> Result<Option<BTreeSet<String>>, IoError> {
    let (metas, bad) = match served_version(client).await? {
        None => return Ok(None),
        Some("v1beta1") => {
            io::list_metadata::<CapiClusterV1beta1>(client, namespaces, None, budget).await?
        }
        Some(_) => {
            io::list_metadata::<CapiClusterV1beta2>(client, namespaces, None, budget).await?
        }
    };
    let keys = metas
        .iter()
        .chain(bad.iter().map(|u| &u.meta))
        .filter_map(|m| {
            Some(format!(
                "{}/{}",
                m.namespace.as_deref()?,
                m.name.as_deref()?
            ))
        })
        .collect();
    Ok(Some(keys))
}
