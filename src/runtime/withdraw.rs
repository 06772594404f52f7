//! Withdrawing a cluster's add-ons before it is deregistered (`deregistration = "withdraw"`).
//!
//! addon-controller withdraws a cluster's add-ons when the cluster stops matching a Sveltos profile while it is
//! still registered (`stopMatchingBehavior: WithdrawPolicies`, Sveltos' default), and deletes the profile's
//! `ClusterSummary` for that cluster once it has (its finalizer holds it until then). When a SveltosCluster is
//! deleted instead, it drops the `ClusterSummary` and leaves the add-ons behind. So the cluster first stops
//! matching: the labels the bridge wrote on its SveltosCluster go (the ownership label stays, so that the bridge
//! still knows the object), and the bridge waits until no `ClusterSummary` names the cluster.

use std::time::Duration;

use kube::Client;
use tokio::time::Instant;

use crate::{
    api::{ClusterSummary, SveltosCluster, cluster_summaries_of},
    k8s::io::{self, IoError, Patched},
};

/// How often the withdrawal checks whether addon-controller is done.
const WITHDRAWN_POLL: Duration = Duration::from_secs(1);

/// What is left of a cluster's add-ons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Withdrawn {
    /// None: no `ClusterSummary` names the cluster (or Sveltos' add-on API is not served, or the SveltosCluster
    /// is no longer the bridge's), so deregistration goes on.
    Yes,
    /// addon-controller still keeps these `ClusterSummary` objects for the cluster.
    Left {
        /// Their names.
        summaries: Vec<String>,
        /// No label of the bridge was left to remove (an earlier run removed them, or the cluster never had one),
        /// so this run looked once instead of waiting.
        resumed: bool,
    },
}

/// Withdraws the add-ons of SveltosCluster `ns/name` (with `uid`): removes its `labels` (the ones the bridge wrote,
/// never the ownership label), then waits until no `ClusterSummary` names it, at most until `deadline`. With no
/// label to remove, nothing this run does would change what matches the cluster, and it looks once.
pub(super) async fn withdraw(
    client: &Client,
    ns: &str,
    name: &str,
    uid: Option<&str>,
    labels: &[String],
    deadline: Instant,
) -> Result<Withdrawn, IoError> {
    let resumed = labels.is_empty();
    if !resumed {
        match io::remove_labels::<SveltosCluster>(client, ns, name, uid, labels).await? {
            Patched::Yes => {}
            // Nothing of the bridge's is left there to withdraw from.
            Patched::Absent | Patched::Replaced => return Ok(Withdrawn::Yes),
        }
    }
    loop {
        let summaries = summaries_of(client, ns, name).await?;
        if summaries.is_empty() {
            return Ok(Withdrawn::Yes);
        }
        if resumed || Instant::now() >= deadline {
            return Ok(Withdrawn::Left { summaries, resumed });
        }
        tokio::time::sleep(WITHDRAWN_POLL).await;
    }
}

/// The names of the `ClusterSummary` objects addon-controller keeps for SveltosCluster `ns/name` (metadata only);
/// none when Sveltos' add-on API is not served (no addon-controller, so no add-on to withdraw).
async fn summaries_of(client: &Client, ns: &str, name: &str) -> Result<Vec<String>, IoError> {
    let selector = cluster_summaries_of(name);
    let budget = io::ReadBudget::default();
    let namespaces = [ns.to_string()];
    let listed = io::list_metadata::<ClusterSummary>(client, &namespaces, Some(&selector), &budget);
    match listed.await {
        // An item that does not decode still stands for an add-on not withdrawn.
        Ok((found, undecodable)) => Ok(found
            .into_iter()
            .filter_map(|m| m.name)
            .chain(undecodable.into_iter().map(|u| u.name))
            .collect()),
        Err(e) if e.not_served() => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}
