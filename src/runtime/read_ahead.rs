//! The inventory read in the background (the read-ahead): [`read_inventory`] started between a refresh and the
//! plan that follows it, then the kubeconfigs of the credential Secrets read checked on a blocking thread. It is
//! started by [`super::refresh::refresh`] when the resource's policy asks for it and the ledger recorded the same
//! reads; which plan it serves is the resource's policy too (`provider::resources::cluster_inventory_bridge`'s
//! `read_ahead`, keyed by [`super::inventory::reads_sha256`]); this is only the reading.

use kube::Client;
use tokio::task::JoinHandle;

use super::inventory::{InventoryReads, read_inventory, reads_sha256};
use crate::domain::{BridgeSpec, credentials::CheckedKubeconfigs};

/// The inventory as read ahead, and what was checked of it.
pub struct InventoryRead {
    /// What [`read_inventory`] returned.
    pub reads: InventoryReads,
    /// The kubeconfigs of its credential Secrets that passed the check under the policy of the spec read for.
    pub checked: CheckedKubeconfigs,
}

/// The inventory of one bridge being read in the background, with the digest of what it reads
/// ([`reads_sha256`]); the read is cancelled when this is dropped unused.
pub struct ReadAhead {
    reads: String,
    task: Option<JoinHandle<Option<InventoryRead>>>,
}

impl ReadAhead {
    /// Starts reading, through `client`, the inventory of `spec`, then checking the kubeconfigs read, within the
    /// budget of a bridge that owns nothing yet: the inventory is what a first apply reads too, and a read ahead
    /// that fails is read again within the plan's own budget.
    pub fn start(client: Client, spec: BridgeSpec) -> Self {
        let reads = reads_sha256(&spec);
        let task = Some(tokio::spawn(async move {
            // Only ever without an `inventory` block: the inventory and the management cluster are one.
            let budget = crate::k8s::io::ReadBudget::default();
            let reads = read_inventory(&client, &client, &spec, &budget)
                .await
                .ok()?;
            // Parsing ten thousand kubeconfigs is CPU work: a blocking thread, not a runtime worker, does it. (A
            // cancelled read-ahead lets it finish; nothing waits for it.)
            tokio::task::spawn_blocking(move || {
                let checked = CheckedKubeconfigs::check(&reads.2.labelled, &spec.credentials);
                InventoryRead { reads, checked }
            })
            .await
            .ok()
        }));
        Self { reads, task }
    }

    /// [`reads_sha256`] of the settings it reads with.
    pub fn reads(&self) -> &str {
        &self.reads
    }

    /// Its result, or `None` when it failed or was cancelled (the caller then reads for itself). If the caller
    /// stops waiting (its request is cancelled), the read is cancelled too.
    pub async fn join(mut self) -> Option<InventoryRead> {
        let result = self.task.as_mut()?.await;
        self.task = None;
        result.ok().flatten()
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

impl std::fmt::Debug for ReadAhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.task.is_some() {
            "ReadAhead(pending)"
        } else {
            "ReadAhead(taken)"
        })
    }
}
