//! The inventory: what the bridge reads to decide what to register (the ClusterProfiles in scope, the labelled
//! credential Secrets, the consumer namespaces' labels), read by every plan and apply ([`super::snapshot`]) or
//! ahead of a plan ([`super::read_ahead`]).

use std::collections::BTreeSet;

use kube::Client;

use crate::{
    api::ClusterProfile,
    domain::BridgeSpec,
    k8s::{
        cluster_api, credentials,
        io::{self, IoError},
        profiles,
    },
};

/// What [`read_inventory`] returns: the ClusterProfiles in scope, those that do not decode, the credential
/// sources, and the keys of the Cluster API Clusters in scope (`skip_cluster_api_clusters`; empty without it).
pub type InventoryReads = (
    Vec<ClusterProfile>,
    Vec<io::Undecodable>,
    credentials::CredentialReads,
    BTreeSet<String>,
);

/// Reads the inventory a plan of `spec` needs, whatever the bridge owns: the ClusterProfiles of its namespaces
/// (through the version the API server serves, [`profiles`]),
/// then the credential sources (consumer namespaces, the labelled Secrets of the namespaces that may supply those
/// profiles, within `budget`), all through `inventory`; with `skip_cluster_api_clusters`, meanwhile, the Cluster
/// API Clusters of the same namespaces through `management`, the cluster the SveltosClusters are written to (the
/// one whose Sveltos would see a member twice; [`cluster_api_keys`]). What it reads depends only on
/// `spec.selection.namespaces`, `spec.credentials`, `spec.members.skip_cluster_api` and the two connections.
pub async fn read_inventory(
    inventory: &Client,
    management: &Client,
    spec: &BridgeSpec,
    budget: &io::ReadBudget,
) -> Result<InventoryReads, IoError> {
    let profiles_and_sources = async {
        let (profiles, undecodable) = profiles::list(inventory, &spec.selection.namespaces).await?;
        let profile_keys: Vec<String> = profiles.iter().map(|p| p.key()).collect();
        let sources =
            credentials::read_sources(inventory, &spec.credentials, &profile_keys, budget).await?;
        Ok::<_, IoError>((profiles, undecodable, sources))
    };
    let ((profiles, undecodable, sources), capi) = futures::try_join!(
        profiles_and_sources,
        cluster_api_keys(management, spec, budget)
    )?;
    Ok((profiles, undecodable, sources, capi))
}

/// The keys of the Cluster API Clusters of the bridge's namespaces on the management cluster (`management`, the
/// provider's own connection) when `skip_cluster_api_clusters` is set (none otherwise, and none where Cluster API
/// is not served). A refusal (403) names the setting, the permission and whose it must be.
async fn cluster_api_keys(
    management: &Client,
    spec: &BridgeSpec,
    budget: &io::ReadBudget,
) -> Result<BTreeSet<String>, IoError> {
    if !spec.members.skip_cluster_api {
        return Ok(BTreeSet::new());
    }
    match cluster_api::cluster_keys(management, &spec.selection.namespaces, budget).await {
        Ok(keys) => Ok(keys.unwrap_or_default()),
        Err(mut e) => {
            if e.code == Some(403) {
                e.message = format!(
                    "{} skip_cluster_api_clusters = true lists Cluster API Clusters on the management cluster: \
                     grant the identity of the provider's connection (not the inventory block's) `list` on \
                     clusters.cluster.x-k8s.io in the namespaces the bridge reads, or unset it.",
                    e.message
                );
            }
            Err(e)
        }
    }
}

/// A digest of what [`read_inventory`] reads for `spec` through the provider's connection (the read-ahead's
/// only one, where the inventory and the management cluster are the same): the namespaces, the
/// credential label, the consumer and `secret_namespaces` (the other credential options only change how the plan
/// uses what was read), and whether Cluster API Clusters are read (only when they are, so that the digest of a
/// bridge without `skip_cluster_api_clusters` is the one it always was).
/// Apply records it in the ledger; a refresh reads ahead only when the state's configuration gives the recorded
/// digest, and a plan uses that read only when its own configuration gives it too.
pub fn reads_sha256(spec: &BridgeSpec) -> String {
    let reads = (
        &spec.selection.namespaces,
        &spec.credentials.secret_label,
        &spec.credentials.consumer,
        &spec.credentials.consumer_only,
        &spec.credentials.secret_namespaces,
    );
    let mut bytes = serde_json::to_vec(&reads).unwrap_or_default();
    if spec.members.skip_cluster_api {
        bytes.extend_from_slice(b"+cluster.x-k8s.io/clusters");
    }
    crate::domain::sha256_hex(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read ahead without the Cluster API Clusters never serves a plan that needs them, and turning the setting
    /// off gives back the digest a bridge without it always had.
    #[test]
    fn the_reads_digest_tells_whether_cluster_api_clusters_are_read() {
        let mut spec = BridgeSpec {
            name: "main".into(),
            ..Default::default()
        };
        spec.selection.namespaces = vec!["a".into()];
        let off = reads_sha256(&spec);
        spec.members.skip_cluster_api = true;
        let on = reads_sha256(&spec);
        assert_ne!(off, on);
        spec.members.skip_cluster_api = false;
        assert_eq!(reads_sha256(&spec), off);
    }
}
