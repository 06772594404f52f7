//! Removing bridged clusters in Sveltos' order: the SveltosCluster, a wait until it is gone (Sveltos' finalizers
//! withdraw add-ons with the kubeconfig), then the kubeconfig Secret; and destroy, which removes everything a
//! bridge owns.

use std::time::Duration;

use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::Secret;
use kube::Client;

use super::{CONCURRENCY, snapshot::read_owned};
use crate::{
    api::SveltosCluster,
    bridge::{
        observed::Observed,
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
    /// Its SveltosCluster was asked to go but still exists after the deletion timeout; its Secret was kept.
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
        /// How long deregistration waited (`deletion_timeout`).
        timeout: Duration,
    },
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

/// Deregisters clusters in Sveltos' order, many at once: delete the SveltosCluster (only if it still has the
/// UID the bridge recorded), wait until it is gone (Sveltos' finalizers withdraw add-ons with the kubeconfig),
/// then delete the Secret. A cluster still present after `timeout` is an error naming it; its Secret is kept,
/// and the next apply or destroy resumes.
pub async fn deregister(
    client: &Client,
    observed: &Observed,
    deletes: Vec<Delete>,
    timeout: Duration,
) -> Removed {
    let results: Vec<Result<Vec<(Kind, String)>, RemoveError>> = stream::iter(deletes)
        .map(|d| delete_one(client, observed, d, timeout))
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

async fn delete_one(
    client: &Client,
    observed: &Observed,
    d: Delete,
    timeout: Duration,
) -> Result<Vec<(Kind, String)>, RemoveError> {
    let err = |source: IoError| RemoveError::Io {
        key: d.key.clone(),
        source,
    };
    let owned = observed.owned.get(&d.key);
    let mut gone = Vec::new();
    if let Some((ns, name)) = &d.sveltos_cluster {
        let uid = owned
            .and_then(|o| o.sveltos_cluster.as_ref())
            .and_then(|s| s.uid.as_deref());
        let deleted = io::delete_owned::<SveltosCluster>(client, ns, name, uid)
            .await
            .map_err(err)?;
        // Only a SveltosCluster the delete left terminating is waited for: one the API server removed at once is
        // gone already (no read needed).
        let gone_in_time = deleted != io::Deleted::Terminating
            || wait_gone(client, ns, name, uid, timeout)
                .await
                .map_err(err)?;
        if !gone_in_time {
            return Err(RemoveError::StillTerminating {
                key: d.key.clone(),
                namespace: ns.clone(),
                name: name.clone(),
                timeout,
            });
        }
        gone.push((Kind::SveltosCluster, format!("{ns}/{name}")));
    }
    if let Some((ns, name)) = &d.secret {
        let uid = owned
            .and_then(|o| o.secret.as_ref())
            .and_then(|s| s.uid.as_deref());
        io::delete_owned::<Secret>(client, ns, name, uid)
            .await
            .map_err(err)?;
        gone.push((Kind::Secret, format!("{ns}/{name}")));
    }
    Ok(gone)
}

/// Waits until the SveltosCluster `ns/name` with `uid` is gone (`true`), at most `timeout` (`false`: it is still
/// there).
async fn wait_gone(
    client: &Client,
    ns: &str,
    name: &str,
    uid: Option<&str>,
    timeout: Duration,
) -> Result<bool, IoError> {
    let deadline = tokio::time::Instant::now() + timeout;
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
/// `selected`, the namespaces the bridge selected, and the ledger's): SveltosClusters first, then, once each is
/// gone, its Secret. On failure, the error holds the ledger of what is left.
pub async fn delete_all(
    client: &Client,
    (bridge, selected): (&str, &[String]),
    ledger: &Ledger,
    timeout: Duration,
) -> Result<(), DestroyError> {
    let observed = read_owned(client, bridge, ledger, selected, &io::ReadBudget::default())
        .await
        .map_err(DestroyError::Read)?;
    // Against an empty plan (made for apply: nothing to write), every owned cluster is a delete.
    let empty = Plan {
        for_apply: true,
        ..Plan::default()
    };
    let (_, deletes) = actions(&empty, &observed);
    let removed = deregister(client, &observed, deletes, timeout).await;
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
