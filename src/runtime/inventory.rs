//! The inventory: what the bridge reads to decide what to register (the ClusterProfiles in scope, the labelled
//! credential Secrets, the consumer namespaces' labels), read by every plan and apply ([`super::snapshot`]) or
//! ahead of a plan ([`super::read_ahead`]).

use kube::Client;

use crate::{
    api::ClusterProfile,
    domain::BridgeSpec,
    k8s::{
        credentials,
        io::{self, IoError},
        profiles,
    },
};

/// What [`read_inventory`] returns: the ClusterProfiles in scope, those that do not decode, and the credential
/// sources.
pub type InventoryReads = (
    Vec<ClusterProfile>,
    Vec<io::Undecodable>,
    credentials::CredentialReads,
);

/// Reads the inventory a plan of `spec` needs, whatever the bridge owns: the ClusterProfiles of its namespaces
/// (through the version the API server serves, [`profiles`]),
/// then the credential sources (consumer namespaces, the labelled Secrets of the namespaces that may supply those
/// profiles, within `budget`). What it reads depends only on `spec.selection.namespaces`, `spec.credentials` and
/// the `inventory` connection.
pub async fn read_inventory(
    inventory: &Client,
    spec: &BridgeSpec,
    budget: &io::ReadBudget,
) -> Result<InventoryReads, IoError> {
    let (profiles, undecodable) = profiles::list(inventory, &spec.selection.namespaces).await?;
    let profile_keys: Vec<String> = profiles.iter().map(|p| p.key()).collect();
    let sources =
        credentials::read_sources(inventory, &spec.credentials, &profile_keys, budget).await?;
    Ok((profiles, undecodable, sources))
}

/// A digest of what [`read_inventory`] reads for `spec` through the provider's connection: the namespaces, the
/// credential label, the consumer and `secret_namespaces` (the other credential options only change how the plan
/// uses what was read).
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
    crate::domain::sha256_hex(&serde_json::to_vec(&reads).unwrap_or_default())
}
