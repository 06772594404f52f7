//! `wait_for_ready`: after apply's writes, a wait until sveltoscluster-manager reports every cluster this apply
//! registered or changed Ready, at most until a deadline. A cluster not Ready by then is that cluster's problem (a
//! warning, an error under `strict`), never the others'.
//!
//! Ready is what the manager writes in the SveltosCluster's status: `status.ready` (set once it reached the
//! cluster's `/version` and the `readinessChecks` passed; it never sets it back to `false`) and a
//! `connectionStatus` that is not `Down` (set after `consecutiveFailureThreshold` failed connections or liveness
//! checks in a row).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use kube::Client;
use tokio::time::Instant;

use crate::{
    api::{SveltosCluster, keys},
    domain::text::shown,
    k8s::io::{self, IoError},
};

/// How often the wait looks at the clusters' status.
const READY_POLL: Duration = Duration::from_secs(1);

/// Longest part of the manager's failure message carried into a diagnostic (whoever can write the SveltosCluster's
/// status writes it: escaped and bounded).
const FAILURE_SHOWN: usize = 300;

/// A cluster sveltoscluster-manager did not report Ready within the wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotReady {
    /// The profile key (`namespace/name`, also the SveltosCluster's).
    pub key: String,
    /// How long the wait lasted.
    pub waited: Duration,
    /// What the SveltosCluster's status said last: `status.ready`, `connectionStatus` and `failureMessage`
    /// (escaped, bounded), or why it could not be read.
    pub last_seen: String,
}

/// Waits until every SveltosCluster of `keys` (`namespace/name`) that carries `bridge`'s ownership label is
/// Ready, at most until `deadline`; returns the clusters that are not. A failed read ends the wait for the
/// clusters still waited for, its error their reason.
pub async fn wait_ready(
    client: &Client,
    bridge: &str,
    keys: BTreeSet<String>,
    deadline: Instant,
) -> Vec<NotReady> {
    let start = Instant::now();
    let mut pending = keys;
    let mut last: BTreeMap<String, String> = BTreeMap::new();
    while !pending.is_empty() {
        match statuses(client, bridge, &pending).await {
            Ok(seen) => {
                for (key, status) in seen {
                    if status.ready {
                        pending.remove(&key);
                    } else {
                        last.insert(key, status.describe());
                    }
                }
            }
            Err(e) => {
                let why = format!(
                    "its status could not be read: {}",
                    shown(&e.to_string(), FAILURE_SHOWN)
                );
                last.extend(pending.iter().map(|k| (k.clone(), why.clone())));
                break;
            }
        }
        let now = Instant::now();
        if pending.is_empty() || now >= deadline {
            break;
        }
        // The last look is at the deadline.
        tokio::time::sleep(READY_POLL.min(deadline - now)).await;
    }
    let waited = start.elapsed();
    pending
        .into_iter()
        .map(|key| NotReady {
            last_seen: last
                .remove(&key)
                .unwrap_or_else(|| "its SveltosCluster was not found".into()),
            key,
            waited,
        })
        .collect()
}

/// What the wait reads of one SveltosCluster's status.
struct Status {
    ready: bool,
    reported: Option<bool>,
    connection: Option<String>,
    failure: Option<String>,
}

impl Status {
    fn of(sc: &SveltosCluster) -> Self {
        let status = sc.status.clone().unwrap_or_default();
        let down = status.connection_status.as_deref() == Some("Down");
        Self {
            ready: status.ready == Some(true) && !down,
            reported: status.ready,
            connection: status.connection_status,
            failure: status.failure_message,
        }
    }

    /// The status in words, for the diagnostic.
    fn describe(&self) -> String {
        let mut out = match self.reported {
            None => "not reported Ready yet".to_string(),
            Some(r) => format!("ready = {r}"),
        };
        if let Some(c) = &self.connection {
            out += &format!(", connectionStatus = {}", shown(c, 16));
        }
        if let Some(f) = &self.failure {
            out += &format!(", failureMessage: {}", shown(f, FAILURE_SHOWN));
        }
        out
    }
}

/// The status of the SveltosClusters of `pending` that carry `bridge`'s ownership label (one LIST per namespace).
async fn statuses(
    client: &Client,
    bridge: &str,
    pending: &BTreeSet<String>,
) -> Result<Vec<(String, Status)>, IoError> {
    let namespaces: BTreeSet<String> = pending
        .iter()
        .filter_map(|k| k.split_once('/').map(|(ns, _)| ns.to_string()))
        .collect();
    let namespaces: Vec<String> = namespaces.into_iter().collect();
    let selector = format!("{}={bridge}", keys::BRIDGE_LABEL);
    let (found, _undecodable) =
        io::list::<SveltosCluster>(client, &namespaces, Some(&selector)).await?;
    Ok(found
        .iter()
        .map(|sc| {
            let key = format!(
                "{}/{}",
                sc.metadata.namespace.as_deref().unwrap_or_default(),
                sc.metadata.name.as_deref().unwrap_or_default()
            );
            (key, Status::of(sc))
        })
        .filter(|(k, _)| pending.contains(k))
        .collect())
}
