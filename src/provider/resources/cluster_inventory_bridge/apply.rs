//! `ApplyResourceChange`: the request read once ([`ApplyArgs`]), the claim taken, the apply carried out by the
//! Kubernetes layer (`runtime::apply`: read afresh, plan in phase `Apply`, write and delete, read back after a
//! failure or a timeout), and its result answered as the new state with its diagnostics. Destroy removes exactly
//! what the bridge owns, then its claim.

use std::collections::BTreeMap;

use crate::{
    domain::{
        BridgeSpec, desired::ClusterEntry, exec::ProvidersFile, ownership::Ledger, plan::Promised,
    },
    provider::{
        blocks::{credentials as credentials_block, inventory as inventory_block},
        diag::{
            apply_timed_out_diag, confined_diags, destroy_diags, io_diag, not_applied_diags,
            not_ready_diags, outcome_diags, problems_diags,
        },
        state::{NotReady, ProviderState},
    },
    runtime::{
        apply::{Applied, ApplyRun, DestroyRun, End, NotApplied, ReadBack, Stop, apply, destroy},
        deregister::Removal,
        inventory::reads_sha256,
    },
    tfplugin::{ApplyRequest, ApplyResponse, Diagnostic, Diagnostics, Value},
};

use super::{
    claim::{RunEnd, claim_for_apply, claim_namespace, finish_run, ledger_of},
    clusters::{ClustersAnswer, Earlier, Recording, clusters_value, entries_from_value},
    gate,
    model::BridgeConfig,
    schema::{null_state, skipped_of, skipped_value, with_clusters},
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
    if req.is_delete() {
        return destroy_bridge(&client, req).await;
    }
    let args = ApplyArgs::read(provider, req)?;
    // The claim first: a second state using this name stops here, before anything is written.
    let takes_over = args.ledger.takes_over().map(String::from);
    let run = claim_for_apply(
        &client,
        &args.spec,
        &req.prior_state,
        takes_over.as_deref(),
        args.limit,
    )
    .await?;
    req.planned_state
        .set_attr("instance_id", Value::string(&run.instance));
    let base = Base::of(req);
    // The claim is this state's now: nothing is left to take over.
    let ledger = args
        .ledger
        .with_run_keys(run.keys.clone())
        .with_journals(run.journals().clone())
        .taking_over(None);
    let apply_run = ApplyRun {
        client: &client,
        inventory: &args.inventory,
        spec: &args.spec,
        providers: args.providers,
        run_key: &run.key,
        limit: args.limit,
    };
    let applied = apply(apply_run, ledger, args.planned).await;
    let mut result = respond(req, base, &args.spec, applied);
    let end = RunEnd {
        failed: result.as_ref().map_or(true, |r| r.diagnostics.has_errors()),
        private: result.as_ref().ok().map(|r| r.private.clone()),
        skipped: result.as_ref().ok().and_then(|r| skipped_of(&r.new_state)),
    };
    if let Some(w) = finish_run(&client, &args.spec, run, end).await {
        match &mut result {
            Ok(resp) => resp.diagnostics.push(w),
            Err(d) => d.push(w),
        }
    }
    result
}

/// An apply's request, read before anything is written: what plan promised (as entries), the settings, the time
/// limit, the inventory's connection, the operator's providers file and what the bridge owns.
struct ApplyArgs {
    planned: BTreeMap<String, Option<Promised>>,
    spec: BridgeSpec,
    limit: std::time::Duration,
    inventory: kube::Client,
    providers: Option<ProvidersFile>,
    ledger: Ledger,
}

impl ApplyArgs {
    /// Reads `req`. The planned `clusters` value itself (tens of megabytes for ten thousand clusters) is not
    /// needed again: the new state's `clusters` is built from what apply wrote.
    fn read(provider: &ProviderState, req: &mut ApplyRequest) -> Result<Self, Diagnostics> {
        // Only what apply compares is kept of each entry (`Promised`: hashes, not the entries).
        let planned = entries_from_value(req.planned_state.get_attr("clusters"))
            .into_iter()
            .map(|(k, e)| (k, e.as_ref().map(Promised::of)))
            .collect();
        req.planned_state.set_attr("clusters", Value::Null);
        let config = BridgeConfig::read(&req.config)?;
        let spec = config.to_spec()?;
        let limit = timeouts::limit(config.timeouts.as_ref(), req.is_create())?;
        let inventory = inventory_for_apply(provider, config.inventory.as_ref())?;
        let providers = credentials_block::providers(&spec.credentials)?;
        let ledger = ledger_of(&req.planned_private, &req.prior_state)?;
        Ok(Self {
            planned,
            spec,
            limit,
            inventory,
            providers,
            ledger,
        })
    }
}

/// The inventory's connection at apply (known by then, or the apply stops).
fn inventory_for_apply(
    provider: &ProviderState,
    block: Option<&crate::provider::blocks::connection::ConnectionConfig>,
) -> Result<kube::Client, Diagnostics> {
    match inventory_block::client_of(provider, block, Default::default()) {
        Ok(c) => Ok(c),
        Err(NotReady::Fail(d)) => Err(d.into()),
        Err(NotReady::Defer(_)) => Err(Diagnostic::error(
            "Inventory connection unknown at apply",
            "Run apply again.",
        )
        .into()),
    }
}

/// The answer to what the apply did: the planned state with the entries written, or what exists read back.
fn respond(
    req: &mut ApplyRequest,
    base: Base,
    spec: &BridgeSpec,
    applied: Result<Applied, NotApplied>,
) -> Result<ApplyResponse, Diagnostics> {
    let Applied {
        problems,
        skipped,
        end,
        not_ready,
    } = applied.map_err(not_applied_diags)?;
    let mut diagnostics = problems_diags(&problems);
    let mut resp = match end {
        End::Written {
            entries,
            ledger,
            confined,
        } => {
            drop(base);
            if let Some(outcome) = confined {
                diagnostics.extend(confined_diags(&outcome));
            }
            diagnostics.extend(not_ready_diags(&not_ready, spec.strict).into_vec());
            written(req, spec, entries, ledger, diagnostics)
        }
        End::ReadBack { cause, read_back } => {
            match cause {
                Stop::TimedOut(limit) => diagnostics.push(apply_timed_out_diag(limit)),
                Stop::Failed(outcome) => diagnostics.extend(outcome_diags(&outcome)),
            }
            read_back_state(base, &spec.name, read_back, diagnostics)
        }
    };
    // A plan that left `skipped` unknown (`fail_on_skipped` while clusters are skipped): the apply's own plan says.
    if !resp.new_state.is_null() && !resp.new_state.get_attr("skipped").is_known() {
        resp.new_state.set_attr("skipped", skipped_value(&skipped));
    }
    resp.diagnostics
        .extend(gate::at_apply(spec.fail_on_skipped, &skipped));
    Ok(resp)
}

/// The answer of an apply that wrote what it planned: the planned state with `entries`, and the ledger.
fn written(
    req: &mut ApplyRequest,
    spec: &BridgeSpec,
    entries: BTreeMap<String, ClusterEntry>,
    ledger: Ledger,
    diagnostics: Diagnostics,
) -> ApplyResponse {
    // Encoded here, its digest recorded: the next refresh of the same entries answers with the bytes it receives.
    let answer = ClustersAnswer::of(entries, Earlier::default(), Recording::Recorded);
    // The inventory reads of the configuration just applied: the next refresh may read ahead with them.
    let ledger = answer.recorded_in(ledger.with_reads(Some(reads_sha256(spec))));
    let (new_state, attribute_bytes) =
        answer.into_state(std::mem::take(&mut req.planned_state), &spec.name);
    ApplyResponse {
        new_state,
        attribute_bytes,
        private: ledger.to_private(),
        diagnostics,
        keep_prior_state: false,
    }
}

/// Destroy: removes exactly what the bridge owns, whatever the inventory looks like (it is not read), then the
/// claim; after a failure, the state is what exists.
async fn destroy_bridge(
    client: &kube::Client,
    req: &mut ApplyRequest,
) -> Result<ApplyResponse, Diagnostics> {
    let prior = std::mem::take(&mut req.prior_state);
    let ledger = ledger_of(&req.planned_private, &prior)?;
    let bridge = prior.get_attr("name").as_str().unwrap_or_default();
    let bridge = bridge.to_string();
    let config = BridgeConfig::of_state(&prior);
    // The removal the prior state was configured with (the defaults if it no longer validates). Destroy never
    // reads the hub, so a state written before `inventory` required `namespaces` keeps its removal settings.
    let removal = BridgeConfig {
        inventory: None,
        ..config.clone()
    }
    .to_spec()
    .map_or_else(|_| Removal::default(), |s| Removal::of(&s));
    let claim_namespace = claim_namespace(&prior);
    let namespaces = config.namespaces.clone().unwrap_or_default();
    // An imported state that has not applied yet still finds the claim under the instance it takes over.
    let takes_over = ledger.takes_over().map(String::from);
    let run = DestroyRun {
        client,
        bridge: &bridge,
        ledger,
        removal,
        limit: timeouts::delete_limit(config.timeouts.as_ref()),
        claim_namespace: &claim_namespace,
        namespaces: &namespaces,
        instance: prior.get_attr("instance_id").as_str(),
        takes_over: takes_over.as_deref(),
    };
    let Err((stop, read_back)) = destroy(run).await else {
        return Ok(ApplyResponse::default());
    };
    let diagnostics = destroy_diags(stop);
    Ok(read_back_state(
        Base::Prior(prior),
        &bridge,
        read_back,
        diagnostics,
    ))
}

/// After a failed or timed-out apply or destroy: the state is what exists now (configuration from `base`), with
/// its ledger, and `diagnostics`; when what exists cannot be read, the prior state whole, or the planned state of
/// a create.
fn read_back_state(
    base: Base,
    bridge: &str,
    read_back: ReadBack,
    mut diagnostics: Diagnostics,
) -> ApplyResponse {
    let ReadBack { ledger, observed } = read_back;
    let observed = match observed {
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
                attribute_bytes: Vec::new(),
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
            clusters_value(entries),
        )
    };
    ApplyResponse {
        new_state,
        attribute_bytes: Vec::new(),
        keep_prior_state: false,
        private: observed.ledger(&ledger).to_private(),
        diagnostics,
    }
}

/// The state a failed apply starts its answer from: the prior state (its `clusters` undecoded, see
/// `Resource::apply_unread_attributes`) or, for a create, the planned state.
enum Base {
    Prior(Value),
    Planned(Value),
}

impl Base {
    /// The base of `req`'s answer (the prior state is taken out of it).
    fn of(req: &mut ApplyRequest) -> Self {
        if req.prior_state.is_null() {
            Base::Planned(req.planned_state.clone())
        } else {
            Base::Prior(std::mem::take(&mut req.prior_state))
        }
    }

    fn into_value(self) -> Value {
        match self {
            Base::Prior(v) | Base::Planned(v) => v,
        }
    }
}
