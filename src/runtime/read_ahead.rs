//! What is read in the background for the next refresh or plan (the read-ahead): the inventory
//! ([`read_inventory`], [`ReadAhead`]) started between a refresh and the plan that follows it, then the kubeconfigs
//! of the credential Secrets read checked on a blocking thread; and a bridge's SveltosClusters ([`list_clusters`],
//! [`OwnedAhead`]) listed between the moment Terraform hands its state over and its refresh. The inventory is
//! read ahead by [`super::refresh::refresh`] when the resource's policy asks for it and the ledger recorded the
//! same reads; when each is started and which refresh or plan it serves is the resource's policy
//! (`provider::resources::cluster_inventory_bridge`'s `read_ahead`, keyed by
//! [`super::inventory::reads_sha256`] and the namespaces listed); this is only the reading.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use kube::Client;
use tokio::task::JoinHandle;

use super::{
    inventory::{InventoryReads, read_inventory, reads_sha256},
    owned::{ClusterListing, SecretListing, list_clusters, list_secrets},
};
use crate::{
    domain::{BridgeSpec, credentials::CheckedKubeconfigs},
    k8s::io::{IoError, ReadBudget},
};

/// The inventory as read ahead, and what was checked of it.
pub struct InventoryRead {
    /// What [`read_inventory`] returned.
    pub reads: InventoryReads,
    /// The kubeconfigs of its credential Secrets that passed the check under the policy of the spec read for, if
    /// the check was done when the plan came for the inventory (else the plan checks them itself).
    pub checked: Option<CheckedKubeconfigs>,
}

/// The inventory of one bridge being read in the background, with the digest of what it reads
/// ([`reads_sha256`]); the read is cancelled when this is dropped unused.
pub struct ReadAhead {
    reads: String,
    task: Option<JoinHandle<Option<(InventoryReads, Checking)>>>,
    /// Set when nothing waits for the check any more: it stops.
    stop: Arc<AtomicBool>,
}

/// The check of the kubeconfigs read ahead, running on a thread of its own (nothing: it gave up).
type Checking = tokio::sync::oneshot::Receiver<Option<CheckedKubeconfigs>>;

/// How long a plan waits for the check of the kubeconfigs read ahead once it has the inventory: the check runs at
/// the lowest priority, and work of the same priority as the plan's anywhere on the machine may starve it; past
/// this the plan stops it and checks for itself.
const CHECK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Gives the calling thread the lowest scheduling priority (nice 19): on Linux a thread's own, which it never
/// gets back (an unprivileged thread cannot raise it), so only a thread that ends after its work calls this.
#[cfg(target_os = "linux")]
fn lowest_priority() {
    // SAFETY: setpriority only changes the scheduling priority of the calling thread (Linux applies
    // PRIO_PROCESS with `who` 0 to the calling thread alone); a failure leaves it as it was.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
    }
}

#[cfg(not(target_os = "linux"))]
fn lowest_priority() {}

impl ReadAhead {
    /// Starts reading, through `client`, the inventory of `spec`, then checking the kubeconfigs read but those the
    /// ledger records the last apply checked (`recorded`: their
    /// [`source_sha256`](crate::domain::credentials::source_sha256); the plan takes what was written for them from
    /// the ledger), within the budget of a bridge that owns nothing yet: the inventory is what a first apply reads
    /// too, and a read ahead that fails is read again within the plan's own budget.
    pub fn start(
        client: Client,
        spec: BridgeSpec,
        recorded: std::collections::HashSet<String>,
    ) -> Self {
        let reads = reads_sha256(&spec);
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let task = Some(tokio::spawn(async move {
            // Only ever without an `inventory` block: the inventory and the management cluster are one.
            let budget = crate::k8s::io::ReadBudget::default();
            let reads = read_inventory(&client, &client, &spec, &budget)
                .await
                .ok()?;
            // Parsing ten thousand kubeconfigs is CPU work: a thread of its own, not a runtime worker, does it (on
            // a copy of the Secrets read), at the lowest priority, so that it takes only the CPU the CLI leaves
            // (the CLI is processing the refreshed state meanwhile, and the plan waits for the CLI). A plan that
            // comes before it is done waits for it a little, then stops it and checks for itself (see `join`).
            let (tx, rx) = tokio::sync::oneshot::channel();
            let (labelled, credentials) = (reads.2.labelled.clone(), spec.credentials.clone());
            // Not started: the receiver says so, and the plan checks for itself.
            let _ = std::thread::Builder::new()
                .name("kubeconfig-check".into())
                .spawn(move || {
                    lowest_priority();
                    let go_on = || !stopped.load(Ordering::Relaxed);
                    let _ = tx.send(CheckedKubeconfigs::check_while(
                        &labelled,
                        &credentials,
                        &recorded,
                        go_on,
                    ));
                });
            Some((reads, rx))
        }));
        Self { reads, task, stop }
    }

    /// [`reads_sha256`] of the settings it reads with.
    pub fn reads(&self) -> &str {
        &self.reads
    }

    /// Its result, or `None` when it failed or was cancelled (the caller then reads for itself). If the caller
    /// stops waiting (its request is cancelled), the read is cancelled too. The check of the kubeconfigs is
    /// waited for up to [`CHECK_WAIT`]; past that it is stopped and the result carries none (the check, at the
    /// lowest priority, may be starved by other work; the caller's own check is not).
    pub async fn join(mut self) -> Option<InventoryRead> {
        let result = self.task.as_mut()?.await;
        self.task = None;
        let (reads, checking) = result.ok().flatten()?;
        let checked = tokio::time::timeout(CHECK_WAIT, checking).await;
        let checked = checked.ok().and_then(Result::ok).flatten();
        Some(InventoryRead { reads, checked })
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
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

/// A bridge's SveltosClusters and Secrets being listed in the background ([`list_clusters`], [`list_secrets`]) for
/// the refresh that follows: started when Terraform hands the state over (`UpgradeResourceState`), before the
/// refresh hands over the ledger that sorts them. The listings are cancelled when this is dropped unused.
pub struct OwnedAhead {
    bridge: String,
    scope: Vec<String>,
    budget: Arc<ReadBudget>,
    task: Option<JoinHandle<Result<ClusterListing, IoError>>>,
    secrets: Option<JoinHandle<Result<Option<SecretListing>, IoError>>>,
}

impl OwnedAhead {
    /// Starts listing, through `client`, the SveltosClusters and the Secrets labelled for `bridge` in `scope`
    /// (empty: all namespaces), each within the budget of the refresh of a bridge that owns `owned` objects: the
    /// SveltosClusters within the one the refresh goes on with ([`OwnedAhead::budget`]), the Secrets within one of
    /// their own ([`list_secrets`]).
    pub fn start(client: Client, bridge: &str, scope: Vec<String>, owned: usize) -> Self {
        let budget = Arc::new(ReadBudget::for_refresh(owned));
        let task = {
            let (client, bridge, scope, budget) = (
                client.clone(),
                bridge.to_string(),
                scope.clone(),
                budget.clone(),
            );
            tokio::spawn(async move { list_clusters(&client, &bridge, &scope, &budget).await })
        };
        let secrets = {
            let (bridge, scope) = (bridge.to_string(), scope.clone());
            tokio::spawn(async move { list_secrets(&client, &bridge, &scope, owned).await })
        };
        Self {
            bridge: bridge.to_string(),
            scope,
            budget,
            task: Some(task),
            secrets: Some(secrets),
        }
    }

    /// The Secrets' listing, or `None` when it failed or held too much ([`list_secrets`]): the caller then lists
    /// them itself. If the caller stops waiting, the listing is cancelled too (when this is dropped).
    pub async fn secrets(&mut self) -> Option<SecretListing> {
        let listing = self.secrets.as_mut()?.await;
        self.secrets = None;
        match listing {
            Ok(Ok(listing)) => listing,
            Ok(Err(e)) => {
                tracing::debug!(bridge = %self.bridge, error = %e, "the Secrets' listing ahead failed; listing again");
                None
            }
            Err(_) => None,
        }
    }

    /// Whether it lists what a refresh of `bridge` whose ledger gives `scope` lists (else the refresh lists for
    /// itself, and this is dropped: cancelled).
    pub fn serves(&self, bridge: &str, scope: &[String]) -> bool {
        self.bridge == bridge && self.scope == scope
    }

    /// The budget it reads within: the rest of the refresh it serves reads within what is left of it.
    pub fn budget(&self) -> Arc<ReadBudget> {
        self.budget.clone()
    }

    /// The listing, or `None` when it failed (the caller then lists for itself). If the caller stops waiting (its
    /// request is cancelled), the listing is cancelled too.
    pub async fn join(mut self) -> Option<ClusterListing> {
        let listing = self.task.as_mut()?.await;
        self.task = None;
        match listing {
            Ok(Ok(listing)) => Some(listing),
            Ok(Err(e)) => {
                tracing::debug!(bridge = %self.bridge, error = %e, "the listing ahead failed; listing again");
                None
            }
            Err(_) => None,
        }
    }
}

impl Drop for OwnedAhead {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
        if let Some(task) = &self.secrets {
            task.abort();
        }
    }
}

impl std::fmt::Debug for OwnedAhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedAhead")
            .field("bridge", &self.bridge)
            .field("scope", &self.scope)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kubeconfig check's thread gives up its priority, and only its own.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_check_thread_alone_runs_at_the_lowest_priority() {
        // SAFETY: getpriority only reads the calling thread's priority.
        let own = || unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        let before = own();
        let theirs = std::thread::spawn(move || {
            lowest_priority();
            own()
        })
        .join()
        .unwrap();
        assert_eq!(theirs, 19);
        assert_eq!(own(), before, "the calling thread keeps its priority");
    }

    /// A listing serves only the refresh of its bridge whose ledger gives the namespaces it listed: any other
    /// refresh lists for itself (and the listing is cancelled).
    #[tokio::test]
    async fn a_listing_serves_only_its_bridge_in_the_namespaces_it_listed() {
        // Nothing is read: the client points nowhere, and a listing that does not serve is not awaited.
        let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
        let client = crate::k8s::io::client(config).unwrap();
        let ahead = OwnedAhead::start(client.clone(), "b", vec!["a".into()], 2);
        let scope = |s: &[&str]| s.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert!(ahead.serves("b", &scope(&["a"])));
        // The ledger names another namespace than the state selects.
        assert!(!ahead.serves("b", &scope(&["a", "old"])));
        // An import: every namespace.
        assert!(!ahead.serves("b", &[]));
        // Another bridge.
        assert!(!ahead.serves("c", &scope(&["a"])));
        // The budget is that of a refresh of a bridge that owns what the state lists.
        assert_eq!(
            ahead.budget().limit(),
            ReadBudget::for_owned(2).first_page(3).limit()
        );
    }
}
