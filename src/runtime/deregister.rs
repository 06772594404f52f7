//! Removing bridged clusters in Sveltos' order: with `deregistration = "withdraw"` their add-ons first
//! ([`super::withdraw`]), then the SveltosCluster, a wait until it is gone (a finalizer may hold it; Sveltos puts
//! none there), then the kubeconfig Secret; and destroy, which removes everything a bridge owns. With
//! `deregistration = "orphan"` the add-ons Sveltos deployed to a removed cluster stay there: addon-controller does
//! not withdraw them when the SveltosCluster goes.

use std::time::Duration;

use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::Secret;
use kube::Client;

use super::{
    CONCURRENCY,
    owned::read_owned,
    withdraw::{Withdrawn, withdraw},
};
use crate::{
    api::SveltosCluster,
    domain::{
        BridgeSpec, DEFAULT_DEREGISTRATION_TIMEOUT, Deregistration,
        observed::{BridgedObjects, Observed, ObservedCluster},
        ownership::{Kind, Ledger},
        plan::{Delete, Plan, actions},
    },
    k8s::io::{self, IoError},
};

/// Why one bridged cluster was not (wholly) removed; the next apply or destroy resumes.
#[derive(Debug, thiserror::Error)]
pub enum RemoveError {
    /// A delete or a read of its SveltosCluster or Secret failed (the error names the object).
    #[error("cannot remove the bridged cluster {key}")]
    Io {
        /// The profile key.
        key: String,
        /// The failed call.
        #[source]
        source: IoError,
    },
    /// Its SveltosCluster was asked to go but still exists after the deregistration timeout; its Secret was kept.
    #[error(
        "SveltosCluster {namespace}/{name} (ClusterProfile {key}) is still being deleted after {timeout:?}"
    )]
    StillTerminating {
        /// The profile key.
        key: String,
        /// The SveltosCluster's namespace.
        namespace: String,
        /// The SveltosCluster's name.
        name: String,
        /// How long deregistration waited (`deregistration_timeout`; zero when it was already terminating).
        timeout: Duration,
        /// It was already being deleted when this run read it: a finalizer holds it, and this run did not wait
        /// for it again.
        already_terminating: bool,
    },
    /// Its add-ons were not withdrawn (`deregistration = "withdraw"`): addon-controller still keeps
    /// `ClusterSummary` objects for it. Its SveltosCluster and Secret were kept, so that Sveltos can still reach
    /// the cluster to withdraw them.
    #[error(
        "the add-ons of SveltosCluster {namespace}/{name} (ClusterProfile {key}) were not withdrawn within {timeout:?}"
    )]
    NotWithdrawn {
        /// The profile key.
        key: String,
        /// The SveltosCluster's namespace.
        namespace: String,
        /// The SveltosCluster's name.
        name: String,
        /// The `ClusterSummary` objects addon-controller still keeps for it.
        summaries: Vec<String>,
        /// How long deregistration could wait (`deregistration_timeout`).
        timeout: Duration,
        /// No label of the bridge was left to remove (an earlier run removed them, or it never had one): this run
        /// looked once and did not wait.
        resumed: bool,
    },
}

impl RemoveError {
    /// The key of the profile whose removal failed.
    pub fn key(&self) -> &str {
        match self {
            RemoveError::Io { key, .. }
            | RemoveError::StillTerminating { key, .. }
            | RemoveError::NotWithdrawn { key, .. } => key,
        }
    }
}

/// How bridged clusters are removed: the bridge's `deregistration` and `deregistration_timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Removal {
    /// What happens to the add-ons Sveltos deployed to a removed cluster.
    pub deregistration: Deregistration,
    /// How long the removal of one cluster may wait in all: for its add-ons to be withdrawn, then for its
    /// SveltosCluster to be gone.
    pub timeout: Duration,
}

impl Removal {
    /// The removal a bridge's configuration asks for.
    pub fn of(spec: &BridgeSpec) -> Self {
        Self {
            deregistration: spec.deregistration,
            timeout: spec.deregistration_timeout,
        }
    }
}

impl Default for Removal {
    /// The defaults: `withdraw`, within [`DEFAULT_DEREGISTRATION_TIMEOUT`].
    fn default() -> Self {
        Self {
            deregistration: Deregistration::default(),
            timeout: DEFAULT_DEREGISTRATION_TIMEOUT,
        }
    }
}

/// Why destroy left objects behind.
#[derive(Debug, thiserror::Error)]
pub enum DestroyError {
    /// What the bridge owns could not be read; nothing was deleted.
    #[error("cannot read what the bridge owns")]
    Read(#[source] IoError),
    /// Some clusters were not removed (each error names its cluster); `left` is the ledger of what remains.
    #[error("{} bridged clusters were not removed", .errors.len())]
    Remove {
        /// Why, per cluster.
        errors: Vec<RemoveError>,
        /// The ledger of what is left.
        left: Ledger,
    },
}

/// What deregistration did.
#[derive(Debug, Default)]
pub struct Removed {
    /// Objects deleted (kind, `namespace/name`): forgotten by the ledger.
    pub deleted: Vec<(Kind, String)>,
    /// The clusters whose removal failed.
    pub errors: Vec<RemoveError>,
}

impl Removed {
    /// Forgets in `ledger` what was deleted.
    pub fn forget_in(&self, ledger: &mut Ledger) {
        for (kind, id) in &self.deleted {
            ledger.forget(*kind, id);
        }
    }
}

/// How often deregistration checks whether a SveltosCluster is gone.
const GONE_POLL: Duration = Duration::from_millis(500);

/// Deregisters clusters in Sveltos' order, many at once: with [`Deregistration::Withdraw`] their add-ons first
/// ([`withdraw`]), then delete the SveltosCluster (only if it still has the UID the bridge recorded), wait until it
/// is gone (a finalizer may hold it), then delete the Secret. A cluster whose add-ons are not withdrawn, or whose
/// SveltosCluster is still present, within `removal.timeout` (or already terminating when read: not waited for
/// again) is an error naming it; what is left of it is kept, and the next apply or destroy resumes.
pub async fn deregister(
    client: &Client,
    observed: &Observed,
    deletes: Vec<Delete>,
    removal: Removal,
) -> Removed {
    let results: Vec<Result<Vec<(Kind, String)>, RemoveError>> = stream::iter(deletes)
        .map(|d| delete_one(client, observed.owned.get(&d.key).map(|b| &**b), d, removal))
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let mut out = Removed::default();
    for r in results {
        match r {
            Ok(gone) => out.deleted.extend(gone),
            Err(e) => out.errors.push(e),
        }
    }
    out
}

/// Removes one cluster: its SveltosCluster (add-ons withdrawn first), then its Secret.
async fn delete_one(
    client: &Client,
    owned: Option<&BridgedObjects>,
    d: Delete,
    removal: Removal,
) -> Result<Vec<(Kind, String)>, RemoveError> {
    let deadline = tokio::time::Instant::now() + removal.timeout;
    let mut gone = Vec::new();
    if let Some((ns, name)) = &d.sveltos_cluster {
        remove_sveltos_cluster(client, owned, &d.key, (ns, name), removal, deadline).await?;
        gone.push((Kind::SveltosCluster, format!("{ns}/{name}")));
    }
    if let Some((ns, name)) = &d.secret {
        let uid = owned
            .and_then(|o| o.secret.as_ref())
            .and_then(|s| s.uid.as_deref());
        io::delete_owned::<Secret>(client, ns, name, uid)
            .await
            .map_err(|source| RemoveError::Io {
                key: d.key.clone(),
                source,
            })?;
        gone.push((Kind::Secret, format!("{ns}/{name}")));
    }
    Ok(gone)
}

/// Withdraws the add-ons of SveltosCluster `ns/name` (with [`Deregistration::Withdraw`]), deletes it and waits
/// until it is gone, all before `deadline`.
async fn remove_sveltos_cluster(
    client: &Client,
    owned: Option<&BridgedObjects>,
    key: &str,
    (ns, name): (&str, &str),
    removal: Removal,
    deadline: tokio::time::Instant,
) -> Result<(), RemoveError> {
    let err = |source: IoError| RemoveError::Io {
        key: key.to_string(),
        source,
    };
    let observed = owned.and_then(|o| o.sveltos_cluster.as_ref());
    let uid = observed.and_then(|s| s.uid.as_deref());
    // A SveltosCluster that was terminating when read is held by a finalizer: an earlier run waited for it
    // already, and waiting again would cost every run `deregistration_timeout` for one cluster that someone holds. Its
    // deletion has begun, so its add-ons can no longer be withdrawn either.
    let already_terminating = observed.is_some_and(|s| s.terminating);
    if removal.deregistration == Deregistration::Withdraw && !already_terminating {
        withdraw_first(client, observed, key, (ns, name), removal, deadline).await?;
    }
    let deleted = io::delete_owned::<SveltosCluster>(client, ns, name, uid)
        .await
        .map_err(err)?;
    // Only a SveltosCluster the delete left terminating is waited for: one the API server removed at once is gone
    // already (no read needed).
    let deadline = if already_terminating {
        tokio::time::Instant::now()
    } else {
        deadline
    };
    let gone_in_time = deleted != io::Deleted::Terminating
        || wait_gone(client, ns, name, uid, deadline)
            .await
            .map_err(err)?;
    if gone_in_time {
        return Ok(());
    }
    Err(RemoveError::StillTerminating {
        key: key.to_string(),
        namespace: ns.to_string(),
        name: name.to_string(),
        timeout: if already_terminating {
            Duration::ZERO
        } else {
            removal.timeout
        },
        already_terminating,
    })
}

/// Withdraws the add-ons of SveltosCluster `ns/name` as observed: removes the labels the bridge wrote on it and
/// waits until `deadline` for addon-controller (see [`withdraw`]); what is left is an error naming the cluster.
async fn withdraw_first(
    client: &Client,
    observed: Option<&ObservedCluster>,
    key: &str,
    (ns, name): (&str, &str),
    removal: Removal,
    deadline: tokio::time::Instant,
) -> Result<(), RemoveError> {
    let uid = observed.and_then(|s| s.uid.as_deref());
    let labels: Vec<String> = observed
        .map(|s| s.labels.keys().cloned().collect())
        .unwrap_or_default();
    let withdrawn = withdraw(client, ns, name, uid, &labels, deadline)
        .await
        .map_err(|source| RemoveError::Io {
            key: key.to_string(),
            source,
        })?;
    match withdrawn {
        Withdrawn::Yes => Ok(()),
        Withdrawn::Left { summaries, resumed } => Err(RemoveError::NotWithdrawn {
            key: key.to_string(),
            namespace: ns.to_string(),
            name: name.to_string(),
            summaries,
            timeout: removal.timeout,
            resumed,
        }),
    }
}

/// Waits until the SveltosCluster `ns/name` with `uid` is gone (`true`), at most until `deadline` (`false`: it is
/// still there).
async fn wait_gone(
    client: &Client,
    ns: &str,
    name: &str,
    uid: Option<&str>,
    deadline: tokio::time::Instant,
) -> Result<bool, IoError> {
    loop {
        let now = io::get_metadata_opt::<SveltosCluster>(client, ns, name).await?;
        if now.is_none_or(|m| m.uid.as_deref() != uid && uid.is_some()) {
            return Ok(true);
        }
        if tokio::time::Instant::now() >= deadline {
            return Ok(false);
        }
        tokio::time::sleep(GONE_POLL).await;
    }
}

/// Deletes everything this bridge owns (destroy), whatever the inventory looks like (listed where it may be:
/// `selected`, the namespaces the bridge selected, and the ledger's), as [`deregister`] does: add-ons withdrawn
/// (with [`Deregistration::Withdraw`]), SveltosClusters, then, once each is gone, its Secret. On failure, the error
/// holds the ledger of what is left.
pub async fn delete_all(
    client: &Client,
    (bridge, selected): (&str, &[String]),
    ledger: &Ledger,
    removal: Removal,
) -> Result<(), DestroyError> {
    let budget = io::ReadBudget::for_owned(ledger.len());
    let observed = read_owned(client, bridge, ledger, selected, &budget)
        .await
        .map_err(DestroyError::Read)?;
    // Against an empty plan (made for apply: nothing to write), every owned cluster is a delete.
    let empty = Plan {
        for_apply: true,
        ..Plan::default()
    };
    let (_, deletes) = actions(&empty, &observed);
    let removed = deregister(client, &observed, deletes, removal).await;
    if removed.errors.is_empty() {
        return Ok(());
    }
    let mut left = observed.ledger(ledger);
    removed.forget_in(&mut left);
    Err(DestroyError::Remove {
        errors: removed.errors,
        left,
    })
}
