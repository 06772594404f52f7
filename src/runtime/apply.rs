//! One apply of a bridge once its claim is this run's: the inventory and what exists read afresh, planned again in
//! phase `Apply` (every cluster whose profile changed since plan kept as it is), the writes and deletes carried
//! out within the apply's time limit ([`super::execute`]), and, after a failure or a timeout, what exists read
//! back. Destroy ([`destroy`]) removes what the bridge owns, then its claim. The mapping layer turns the results
//! into the new state and its diagnostics.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use kube::Client;

use super::{
    deregister::{DestroyError, Removal, RemoveError, delete_all},
    execute::{Outcome, execute},
    owned::read_owned,
    readiness::{NotReady, wait_ready},
    snapshot::{HeadStart, snapshot},
};
use crate::{
    domain::{
        BridgeSpec,
        claim_check::claimant,
        desired::ClusterEntry,
        exec::ProvidersFile,
        observed::Observed,
        ownership::{Ledger, RunKey, claim_name},
        plan::{
            Phase, Plan, Problem, Promised, Skipped, entries_despite_failures, isolate_drift,
            plan_errors, planned_mints, trusting_targets,
        },
    },
    k8s::{claim, io::IoError},
};

/// What an apply works with once its claim is taken.
pub struct ApplyRun<'a> {
    /// The cluster the bridge writes to (and reads what it owns from).
    pub client: &'a Client,
    /// The cluster the inventory is read from.
    pub inventory: &'a Client,
    /// The bridge's settings.
    pub spec: &'a BridgeSpec,
    /// The operator's exec providers file, already read.
    pub providers: Option<ProvidersFile>,
    /// The key this run marks its objects with.
    pub run_key: &'a RunKey,
    /// How long the writes and deletes may take (`timeouts`).
    pub limit: Duration,
}

/// Why an apply stopped before it wrote anything.
#[derive(Debug, thiserror::Error)]
pub enum NotApplied {
    /// The inventory or what exists could not be read.
    #[error("cannot read the inventory or what exists")]
    Read(#[source] IoError),
    /// The plan at apply has errors that concern the whole bridge (strict, max_removals, configuration).
    #[error("the plan at apply has {} errors", .0.len())]
    Plan(Vec<Problem>),
}

/// What an apply that got as far as writing left.
pub struct Applied {
    /// The errors of the plan at apply: the clusters whose profile changed since plan, kept as they are.
    pub problems: Vec<Problem>,
    /// The clusters the plan at apply leaves out or keeps as they are: `skipped` where the plan left it unknown, and
    /// what the `fail_on_skipped` gate names.
    pub skipped: BTreeMap<String, Skipped>,
    /// How the writes ended.
    pub end: End,
    /// With `wait_for_ready`: the clusters this apply registered or changed that sveltoscluster-manager did not
    /// report Ready in time (empty without the wait, and when the writes did not end as planned).
    pub not_ready: Vec<NotReady>,
}

/// How an apply's writes ended.
pub enum End {
    /// Every cluster was written as planned, or (outside `strict`, with no other error) the failures concern only
    /// the clusters they name, whose entries record the plan.
    Written {
        /// The new `clusters` entries: the plan's, with the minted credentials.
        entries: BTreeMap<String, ClusterEntry>,
        /// The ledger after the writes.
        ledger: Ledger,
        /// The failed writes and removals, each confined to its cluster (`None`: none failed).
        confined: Option<Outcome>,
    },
    /// The writes did not finish in time, or a failure concerns more than the clusters it names: the state is
    /// what exists now.
    ReadBack {
        /// Why.
        cause: Stop,
        /// What exists, read back.
        read_back: ReadBack,
    },
}

/// Why an apply answers with what exists rather than with what it planned.
pub enum Stop {
    /// The writes did not finish within this limit.
    TimedOut(Duration),
    /// Writes or removals failed (or the plan had errors); the outcome names them.
    Failed(Outcome),
}

/// What exists after a failed or timed-out apply or destroy, read with `ledger` (`observed` is the error when it
/// cannot be read; the ledger is then the one to record).
pub struct ReadBack {
    /// The ledger the read used.
    pub ledger: Ledger,
    /// What the bridge owns now.
    pub observed: Result<Observed, IoError>,
}

/// Reads what the bridge owns after a failure (see [`ReadBack`]; `selected`: the namespaces it selects).
pub async fn read_back(
    client: &Client,
    (bridge, selected): (&str, &[String]),
    ledger: Ledger,
) -> ReadBack {
    let budget = crate::k8s::io::ReadBudget::for_owned(ledger.len());
    let observed = read_owned(client, bridge, &ledger, selected, &budget).await;
    ReadBack { ledger, observed }
}

/// Reads afresh, plans in phase `Apply` against what plan promised (`planned`), writes and deletes within the
/// limit, and says how it ended; `Err` when it stopped before writing anything.
pub async fn apply(
    run: ApplyRun<'_>,
    ledger: Ledger,
    planned: BTreeMap<String, Option<Promised>>,
) -> Result<Applied, NotApplied> {
    let ApplyRun {
        client,
        inventory,
        spec,
        providers,
        run_key,
        limit,
    } = run;
    let ahead = HeadStart::default();
    let mut snap = snapshot(client, inventory, spec, &ledger, providers, ahead)
        .await
        .map_err(NotApplied::Read)?;
    let mints = planned_mints(&planned);
    let mut plan = snap.plan(spec, jiff::Timestamp::now(), Phase::Apply, Some(&mints));
    if plan.has_errors() {
        return Err(NotApplied::Plan(plan_errors(&plan)));
    }
    isolate_drift(&mut plan, &snap.observed, &planned);
    // What plan promised is done with.
    drop(planned);
    // The ClusterProfiles stay only when a credential is minted while writing.
    snap.planned(!plan.exec.is_empty());
    let problems = plan_errors(&plan);
    let skipped = plan.skipped();
    let started = tokio::time::Instant::now();
    let Ok(outcome) =
        tokio::time::timeout(limit, execute(client, spec, &snap, &mut plan, run_key)).await
    else {
        // Objects written before the timeout carry the label at the names this apply meant to write.
        let trusted = trusting_targets(snap.observed.ledger(&ledger), plan.desired.values());
        drop((plan, snap));
        let selected = &spec.selection.namespaces;
        let read_back = read_back(client, (&spec.name, selected), trusted).await;
        let cause = Stop::TimedOut(limit);
        let end = End::ReadBack { cause, read_back };
        return Ok(Applied {
            problems,
            skipped,
            end,
            not_ready: Vec::new(),
        });
    };
    let mut ledger = outcome.ledger(&snap.observed, &ledger);
    plan.record_sources(&mut ledger);
    let touched = outcome.touched();
    // The inventory is done with before the new state is built.
    drop(snap);
    let end = settle(client, spec, plan, outcome, ledger, !problems.is_empty()).await;
    let not_ready = match (&end, spec.ready_wait) {
        (End::Written { .. }, Some(wait)) if !touched.is_empty() => {
            // Within the apply's limit too: the wait never makes the apply outlast its `timeouts`.
            let deadline = (tokio::time::Instant::now() + wait).min(started + limit);
            wait_ready(client, &spec.name, touched, deadline).await
        }
        _ => Vec::new(),
    };
    Ok(Applied {
        problems,
        skipped,
        end,
        not_ready,
    })
}

/// How the writes ended: the plan's entries with the minted credentials, or, after a failure that concerns more
/// than the clusters it names (or with plan errors, `plan_failed`), what exists (read back).
async fn settle(
    client: &Client,
    spec: &BridgeSpec,
    plan: Plan,
    mut outcome: Outcome,
    ledger: Ledger,
    plan_failed: bool,
) -> End {
    let failed: BTreeSet<String> = outcome.failed().map(String::from).collect();
    // A write, a mint or a deregistration that failed for one cluster is that cluster's problem (unless
    // `strict`): every other cluster is recorded as planned, and the bridge is not marked failed (Terraform would
    // taint a new one). The state records the plan for it; the next refresh reads what exists (a cluster whose
    // removal failed is still in the ledger, so it is read back as owned) and the next plan shows what is left.
    if !spec.strict && !plan_failed && !failed.is_empty() {
        let ledger = trusting_targets(ledger, failed.iter().filter_map(|k| plan.desired.get(k)));
        let minted = std::mem::take(&mut outcome.minted);
        let entries = entries_despite_failures(plan, minted, &failed);
        let confined = Some(outcome);
        return End::Written {
            entries,
            ledger,
            confined,
        };
    }
    if !outcome.is_clean() || plan_failed {
        // A failed write may have been carried out with its answer lost: its objects, if they exist, are this
        // apply's (the snapshot found those names free or owned) and are recorded when read back.
        let ledger = trusting_targets(ledger, failed.iter().filter_map(|k| plan.desired.get(k)));
        drop(plan);
        let selected = &spec.selection.namespaces;
        let read_back = read_back(client, (&spec.name, selected), ledger).await;
        let cause = Stop::Failed(outcome);
        return End::ReadBack { cause, read_back };
    }
    let mut entries = plan.into_entries();
    entries.extend(outcome.minted);
    End::Written {
        entries,
        ledger,
        confined: None,
    }
}

/// What a destroy is told: the bridge, what it owns, how clusters are removed (`deregistration`, and how long
/// Sveltos may take per cluster: `deregistration_timeout`) and the destroy in all (`timeouts.delete`), and the claim to
/// release last.
pub struct DestroyRun<'a> {
    /// The cluster the bridge writes to.
    pub client: &'a Client,
    /// The bridge's name.
    pub bridge: &'a str,
    /// What it owns.
    pub ledger: Ledger,
    /// How each cluster is removed.
    pub removal: Removal,
    /// How long the destroy may take.
    pub limit: Duration,
    /// The namespace of the bridge's claim.
    pub claim_namespace: &'a str,
    /// The namespaces the bridge selected (empty: all): with the ledger's, where what it owns may be.
    pub namespaces: &'a [String],
    /// The state's instance id (`None`: a state older than claims, which releases any claim at the name).
    pub instance: Option<&'a str>,
    /// After an import, until this state's first apply: the instance whose claim it takes over
    /// ([`Ledger::takes_over`]; see [`claimant`]).
    pub takes_over: Option<&'a str>,
}

/// Why a destroy did not finish.
#[derive(Debug, thiserror::Error)]
pub enum DestroyStop {
    /// What the bridge owns could not be read; nothing was deleted.
    #[error("cannot read what the bridge owns")]
    Read(#[source] IoError),
    /// Some clusters were not removed (each error names its cluster).
    #[error("{} bridged clusters were not removed", .0.len())]
    Removals(Vec<RemoveError>),
    /// Not every bridged cluster was removed within this limit.
    #[error("not every bridged cluster was removed within {0:?}")]
    TimedOut(Duration),
    /// Every cluster was removed, but the claim could not be read or deleted.
    #[error("cannot release the bridge's claim")]
    Claim(#[source] IoError),
}

/// Removes exactly what the bridge owns, whatever the inventory looks like (it is not read), then its claim (last:
/// a destroy interrupted before that point is finished by the next one). `Err`: why it did not finish, with
/// what exists read back.
pub async fn destroy(run: DestroyRun<'_>) -> Result<(), (DestroyStop, ReadBack)> {
    let DestroyRun {
        client,
        bridge,
        ledger,
        removal,
        limit,
        claim_namespace,
        namespaces,
        instance,
        takes_over,
    } = run;
    let deleting = delete_all(client, (bridge, namespaces), &ledger, removal);
    let (stop, ledger) = match tokio::time::timeout(limit, deleting).await {
        Ok(Ok(())) => {
            match release_claim(client, (claim_namespace, bridge), instance, takes_over).await {
                Ok(()) => return Ok(()),
                Err(e) => (DestroyStop::Claim(e), Ledger::default()),
            }
        }
        Ok(Err(DestroyError::Remove { errors, left })) => (DestroyStop::Removals(errors), left),
        Ok(Err(DestroyError::Read(e))) => (DestroyStop::Read(e), ledger),
        Err(_) => (DestroyStop::TimedOut(limit), ledger),
    };
    Err((stop, read_back(client, (bridge, namespaces), ledger).await))
}

/// Deletes the claim of `bridge` if it is this state's: held by its `instance` (a state older than claims has
/// none and releases any claim at the name) or by the instance an import of it `takes_over` ([`claimant`]).
async fn release_claim(
    client: &Client,
    (namespace, bridge): (&str, &str),
    instance: Option<&str>,
    takes_over: Option<&str>,
) -> Result<(), IoError> {
    let name = claim_name(bridge);
    let found = claim::read_with_uid(client, namespace, &name).await?;
    if let Some((c, uid)) = found
        && claimant(&c.instance, instance, takes_over).is_none_or(|i| i == c.instance)
    {
        claim::delete(client, namespace, &name, uid.as_deref()).await?;
    }
    Ok(())
}
