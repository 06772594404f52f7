//! `ApplyResourceChange`: take the claim, read afresh, plan in phase `Apply`, keep every cluster that changed since
//! plan as it is, write and delete (`k8s::bridge::execute`), and answer with what was written; after a failure or
//! a timeout, with what exists (read back). Destroy removes exactly what the bridge owns.

use std::collections::{BTreeMap, BTreeSet};

use crate::{
    bridge::{
        BridgeSpec,
        desired::{ClusterEntry, DesiredCluster},
        ownership::{Kind, Ledger, RunKey},
        plan::{Phase, Plan, Severity, isolate_drift},
    },
    k8s::bridge::{
        deregister::{DestroyError, delete_all},
        execute::{Outcome, execute},
        inventory::reads_sha256,
        snapshot::{HeadStart, Snapshot, read_owned},
    },
    provider::{
        blocks::connection::ConnectionConfig,
        diag::{io_diag, io_diags, outcome_diags, problem_diag, removals_diags},
        state::{NotReady, ProviderState},
    },
    tfplugin::{ApplyRequest, ApplyResponse, Diagnostic, Diagnostics, Value},
};

use super::{
    claim::{claim_for_apply, claim_namespace, finish_run, ledger_of, release_claim},
    clusters::{clusters_value, entries_from_value},
    model::BridgeConfig,
    plan::read_snapshot,
    schema::{null_state, with_clusters},
    timeouts,
};

/// The answer of an apply that stopped before it wrote any cluster: the prior state is kept whole (its `clusters`
/// was left undecoded).
pub(super) fn unapplied(req: &ApplyRequest, diagnostics: Diagnostics) -> ApplyResponse {
    ApplyResponse {
        keep_prior_state: true,
        private: req.planned_private.clone(),
        diagnostics,
        ..Default::default()
    }
}

/// The apply (or destroy) of `req`; `Err` when it stopped before it wrote any cluster (answered by
/// [`unapplied`]).
pub(super) async fn apply_bridge(
    provider: &ProviderState,
    req: &mut ApplyRequest,
) -> Result<ApplyResponse, Diagnostics> {
    let client = provider.client(Default::default()).map_err(|e| match e {
        NotReady::Fail(d) => Diagnostics::from(d),
        NotReady::Defer(_) => Diagnostic::error(
            "Provider configuration unknown at apply",
            "Run apply again.",
        )
        .into(),
    })?;
    let ledger = ledger_of(&req.planned_private, &req.prior_state)?;
    if req.is_delete() {
        return Ok(destroy(&client, req, ledger).await);
    }
    // What plan promised, as entries; the planned `clusters` value itself (tens of megabytes for ten thousand
    // clusters) is not needed again: the new state's `clusters` is built from what apply wrote.
    let planned = entries_from_value(req.planned_state.get_attr("clusters"));
    req.planned_state.set_attr("clusters", Value::Null);
    let config = BridgeConfig::read(&req.config)?;
    let spec = config.to_spec()?;
    let limit = timeouts::limit(config.timeouts.as_ref(), req.is_create())?;
    // The claim first: a second state using this name stops here, before anything is written.
    let run = claim_for_apply(&client, &spec, &req.prior_state, limit).await?;
    req.planned_state
        .set_attr("instance_id", Value::string(&run.instance));
    let ledger = ledger.with_run_keys(run.keys.clone());
    let claimed = Claimed {
        client: &client,
        spec: &spec,
        inventory: config.inventory.as_ref(),
        run_key: &run.key,
    };
    let mut result = apply_claimed(provider, req, &claimed, limit, ledger, planned).await;
    let private = result.as_ref().ok().map(|r| r.private.clone());
    if let Some(w) = finish_run(&client, &spec, run, private.as_deref()).await {
        match &mut result {
            Ok(resp) => resp.diagnostics.push(w),
            Err(d) => d.push(w),
        }
    }
    result
}

/// Once the claim is this run's: reads, plans, writes (each object marked with the run key) and builds the
/// new state.
async fn apply_claimed(
    provider: &ProviderState,
    req: &mut ApplyRequest,
    claimed: &Claimed<'_>,
    limit: std::time::Duration,
    ledger: Ledger,
    planned: BTreeMap<String, Option<ClusterEntry>>,
) -> Result<ApplyResponse, Diagnostics> {
    let Claimed {
        client,
        spec,
        inventory,
        run_key,
    } = *claimed;
    let inventory = inventory_for_apply(provider, inventory)?;
    let snap = read_snapshot(client, &inventory, spec, &ledger, HeadStart::default()).await?;
    let (plan, mut diagnostics) = plan_at_apply(&snap, spec, planned)?;
    // What was written is recorded whatever happens next; the state is then read back (a failure), or is
    // what was planned with the minted credentials (success).
    let base = if req.prior_state.is_null() {
        Base::Planned(req.planned_state.clone())
    } else {
        Base::Prior(std::mem::take(&mut req.prior_state))
    };
    let Ok(outcome) =
        tokio::time::timeout(limit, execute(client, spec, &snap, &plan, run_key)).await
    else {
        diagnostics.push(Diagnostic::error(
            "Apply timed out",
            format!(
                "The bridge's writes did not finish within {}s (timeouts). What was written is kept and \
                 recorded; run apply again to converge.",
                limit.as_secs()
            ),
        ));
        // Objects written before the timeout carry the label at the names this apply meant to write.
        let trusted = trusting_targets(snap.observed.ledger(&ledger), plan.desired.values());
        drop((plan, snap));
        let read_back = read_back(client, base, &spec.name, &trusted, diagnostics);
        return Ok(read_back.await);
    };
    let ledger = outcome.ledger(&snap.observed, &ledger);
    // The inventory is done with before the new state is built.
    drop(snap);
    let executed = Executed {
        plan,
        outcome,
        ledger,
        diagnostics,
    };
    Ok(settle(req, claimed, base, executed).await)
}

/// The answer once the writes and deletes ran: the plan's entries with the minted credentials, or, after a
/// failure that concerns more than the clusters it names, what exists (read back).
async fn settle(
    req: &mut ApplyRequest,
    claimed: &Claimed<'_>,
    base: Base,
    executed: Executed,
) -> ApplyResponse {
    let Executed {
        plan,
        outcome,
        ledger,
        mut diagnostics,
    } = executed;
    let spec = claimed.spec;
    let failed: BTreeSet<String> = outcome.failed().map(String::from).collect();
    // A write, a mint or a deregistration that failed for one cluster is that cluster's problem (unless
    // `strict`): a warning names it, every other cluster is recorded as planned, and the bridge is not marked
    // failed (Terraform would taint a new one). The state records the plan for it; the next refresh reads what
    // exists and the next plan shows what is left to do.
    if !spec.strict && !diagnostics.has_errors() && !failed.is_empty() {
        let ledger = trusting_targets(ledger, failed.iter().filter_map(|k| plan.desired.get(k)));
        diagnostics.extend(as_warnings(outcome_diags(&outcome)));
        drop(base);
        let entries = entries_despite_failures(plan, outcome.minted, &failed);
        return applied(req, spec, entries, ledger, diagnostics);
    }
    if !outcome.is_clean() || diagnostics.has_errors() {
        diagnostics.extend(outcome_diags(&outcome));
        // A failed write may have been carried out with its answer lost: its objects, if they exist, are
        // this apply's (the snapshot found those names free or owned) and are recorded when read back.
        let ledger = trusting_targets(ledger, failed.iter().filter_map(|k| plan.desired.get(k)));
        drop((plan, outcome));
        return read_back(claimed.client, base, &spec.name, &ledger, diagnostics).await;
    }
    drop(base);
    let mut entries = plan.into_entries();
    entries.extend(outcome.minted);
    applied(req, spec, entries, ledger, diagnostics)
}

/// The answer of an apply that wrote what it planned: the planned state with `entries`, and the ledger.
fn applied(
    req: &mut ApplyRequest,
    spec: &BridgeSpec,
    entries: BTreeMap<String, ClusterEntry>,
    ledger: Ledger,
    diagnostics: Diagnostics,
) -> ApplyResponse {
    ApplyResponse {
        new_state: with_clusters(
            std::mem::take(&mut req.planned_state),
            &spec.name,
            clusters_value(&entries),
        ),
        // The inventory reads of the configuration just applied: the next refresh may read ahead with them.
        private: ledger.with_reads(Some(reads_sha256(spec))).to_private(),
        diagnostics,
        keep_prior_state: false,
    }
}

/// The inventory's connection at apply (known by then, or the apply stops).
fn inventory_for_apply(
    provider: &ProviderState,
    block: Option<&ConnectionConfig>,
) -> Result<kube::Client, Diagnostics> {
    match crate::provider::blocks::inventory::client_of(provider, block, Default::default()) {
        Ok(c) => Ok(c),
        Err(NotReady::Fail(d)) => Err(d.into()),
        Err(NotReady::Defer(_)) => Err(Diagnostic::error(
            "Inventory connection unknown at apply",
            "Run apply again.",
        )
        .into()),
    }
}

/// Destroy: removes exactly what the bridge owns, whatever the inventory looks like (it is not read).
async fn destroy(client: &kube::Client, req: &mut ApplyRequest, ledger: Ledger) -> ApplyResponse {
    let prior = std::mem::take(&mut req.prior_state);
    let bridge = prior.get_attr("name").as_str().unwrap_or_default();
    let bridge = bridge.to_string();
    let config = BridgeConfig::of_state(&prior);
    let deletion_timeout = config
        .to_spec()
        .map(|s| s.deletion_timeout)
        .unwrap_or(crate::bridge::DEFAULT_DELETION_TIMEOUT);
    let limit = timeouts::delete_limit(config.timeouts.as_ref());
    let deleting = delete_all(client, &bridge, &ledger, deletion_timeout);
    let (diagnostics, ledger) = match tokio::time::timeout(limit, deleting).await {
        // The claim goes last: a destroy interrupted before this point is finished by the next one.
        Ok(Ok(())) => {
            match release_claim(client, &claim_namespace(&prior), &bridge, &prior).await {
                Ok(()) => return ApplyResponse::default(),
                Err(d) => (d, Ledger::default()),
            }
        }
        Ok(Err(DestroyError::Read(e))) => (io_diags(e), ledger),
        Ok(Err(DestroyError::Remove { errors, left })) => (removals_diags(&errors), left),
        Err(_) => (
            Diagnostics::from(Diagnostic::error(
                "Destroy timed out",
                format!(
                    "Not every bridged cluster was removed within {}s (timeouts.delete); run destroy again.",
                    limit.as_secs()
                ),
            )),
            ledger,
        ),
    };
    read_back(client, Base::Prior(prior), &bridge, &ledger, diagnostics).await
}

/// After a failed or timed-out apply or destroy: the state is what exists now (configuration from `base`), with
/// its ledger, and `diagnostics`; when what exists cannot be read, the prior state whole, or the planned state of
/// a create.
async fn read_back(
    client: &kube::Client,
    base: Base,
    bridge: &str,
    ledger: &Ledger,
    mut diagnostics: Diagnostics,
) -> ApplyResponse {
    let observed = match read_owned(client, bridge, ledger).await {
        Ok(observed) => observed,
        Err(e) => {
            diagnostics.push(io_diag(&e));
            // The prior state's `clusters` was not decoded: the plugin layer answers with it whole.
            let (new_state, keep_prior_state) = match base {
                Base::Prior(_) => (Value::Null, true),
                Base::Planned(v) => (v, false),
            };
            return ApplyResponse {
                new_state,
                keep_prior_state,
                private: ledger.to_private(),
                diagnostics,
            };
        }
    };
    let base = base.into_value();
    let config = BridgeConfig::of_state(&base);
    let entries = observed.entries(|k| config.renews(k));
    let new_state = if base.is_null() && entries.is_empty() {
        Value::Null
    } else {
        with_clusters(
            if base.is_null() { null_state() } else { base },
            bridge,
            clusters_value(&entries),
        )
    };
    ApplyResponse {
        new_state,
        keep_prior_state: false,
        private: observed.ledger(ledger).to_private(),
        diagnostics,
    }
}

/// What an apply writes with, once the claim is its own.
#[derive(Clone, Copy)]
struct Claimed<'a> {
    client: &'a kube::Client,
    spec: &'a BridgeSpec,
    /// The `inventory` block as configured.
    inventory: Option<&'a ConnectionConfig>,
    run_key: &'a RunKey,
}

/// What the writes and deletes left: the plan they carried out, what they did, the ledger after them, and the
/// diagnostics of the plan at apply.
struct Executed {
    plan: Plan,
    outcome: Outcome,
    ledger: Ledger,
    diagnostics: Diagnostics,
}

/// The state a failed apply starts its answer from: the prior state (its `clusters` undecoded, see
/// `Resource::apply_unread_attributes`) or, for a create, the planned state.
enum Base {
    Prior(Value),
    Planned(Value),
}

impl Base {
    fn into_value(self) -> Value {
        match self {
            Base::Prior(v) | Base::Planned(v) => v,
        }
    }
}

/// Errors confined to one cluster as warnings (outside `strict`).
fn as_warnings(diagnostics: Diagnostics) -> impl Iterator<Item = Diagnostic> {
    diagnostics.into_vec().into_iter().map(|mut d| {
        if d.is_error() {
            d.severity = crate::tfplugin::Severity::Warning;
            d.detail
                .push_str(" Every other cluster was applied; strict = true makes this an error.");
        }
        d
    })
}

/// The entries of an apply in which the clusters `failed` failed (outside `strict`): the plan's, with the minted
/// credentials, and known values where the plan left a credential to mint that was not minted.
fn entries_despite_failures(
    plan: Plan,
    minted: BTreeMap<String, ClusterEntry>,
    failed: &BTreeSet<String>,
) -> BTreeMap<String, ClusterEntry> {
    let mut entries = plan.into_entries();
    entries.extend(minted);
    for key in failed {
        if let Some(e) = entries.get_mut(key)
            && e.credential_pending
        {
            // Minting failed: known values for what the plan left unknown.
            e.credential_pending = false;
            e.kubeconfig_sha256 = None;
            e.credential_expires_at = None;
        }
    }
    entries
}

/// The plan apply executes: planned again against what exists now, renewing the credentials the plan said
/// to renew. An error that concerns the whole bridge (strict, max_removals, configuration) stops the apply
/// (`Err`); a cluster whose profile changed since plan is left as it is, with an error naming it (in the
/// returned diagnostics), and the others are applied as planned.
fn plan_at_apply(
    snap: &Snapshot,
    spec: &BridgeSpec,
    planned: BTreeMap<String, Option<ClusterEntry>>,
) -> Result<(Plan, Diagnostics), Diagnostics> {
    let mints: BTreeSet<String> = planned
        .iter()
        .filter(|(_, e)| e.as_ref().is_none_or(|e| e.credential_pending))
        .map(|(k, _)| k.clone())
        .collect();
    let mut plan = snap.plan(spec, jiff::Timestamp::now(), Phase::Apply, Some(&mints));
    let errors = |plan: &Plan| -> Diagnostics {
        plan.problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .map(problem_diag)
            .collect()
    };
    if plan.has_errors() {
        return Err(errors(&plan));
    }
    isolate_drift(&mut plan, &snap.observed, &planned);
    // (What plan promised is done with: tens of megabytes at ten thousand clusters.)
    drop(planned);
    let diagnostics = errors(&plan);
    Ok((plan, diagnostics))
}

/// `ledger` trusting the names of the given planned clusters: an object written at one of them (before a timeout,
/// or by a write whose answer was lost) carries the label and is then recorded by the read back.
fn trusting_targets<'a>(
    mut ledger: Ledger,
    targets: impl Iterator<Item = &'a DesiredCluster>,
) -> Ledger {
    for d in targets {
        if let Some(id) = &d.entry.sveltos_cluster {
            ledger.trust_name(Kind::SveltosCluster, id);
        }
        if let Some(id) = &d.entry.secret {
            ledger.trust_name(Kind::Secret, id);
        }
    }
    ledger
}
