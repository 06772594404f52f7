//! `PlanResourceChange`: the planned `clusters` are what the inventory asks for now, read and planned by the core
//! in phase `Plan` (or `Replan` right before apply, see [`super::phase`]); the bridge's claim is read and checked
//! in the same call down (`runtime::plan::read_for_plan`).

use std::collections::BTreeMap;

use crate::{
    domain::{
        BridgeSpec,
        claim_check::Checker,
        desired::ClusterEntry,
        plan::{Phase, Skipped},
    },
    provider::{
        blocks::{credentials as credentials_block, inventory as inventory_block},
        diag::{plan_stop_diags, problem_diag},
        state::{NotReady, ProviderState},
    },
    runtime::{
        plan::{PlanRun, read_for_plan},
        snapshot::HeadStart,
    },
    tfplugin::{
        AttributePath, DeferredReason, Diagnostic, Diagnostics, PlanRequest, PlanResponse, Value,
    },
};

use super::{
    claim::ledger_of,
    clusters::{ClustersAnswer, Earlier, Recording},
    gate::{self, AtPlan},
    model::BridgeConfig,
    phase::PhaseMemo,
    read_ahead::{self, Pending},
    schema::skipped_value,
};

/// Why a plan stops without planning `clusters`: its diagnostics, and the attributes whose change forces a
/// replacement (known once the request was read).
pub(super) struct PlanFailure {
    diagnostics: Diagnostics,
    requires_replace: Vec<AttributePath>,
}

impl PlanFailure {
    /// The answer: the proposed state as `req` holds it by now, with the diagnostics.
    pub(super) fn respond(self, req: &PlanRequest) -> PlanResponse {
        PlanResponse {
            diagnostics: self.diagnostics,
            requires_replace: self.requires_replace,
            ..PlanResponse::planned(req, req.proposed_new_state.clone())
        }
    }
}

impl From<Diagnostics> for PlanFailure {
    fn from(diagnostics: Diagnostics) -> Self {
        Self {
            diagnostics,
            requires_replace: Vec::new(),
        }
    }
}

/// What a plan needs before it reads anything.
enum PlanInputs {
    /// The bridge's settings, the provider's client (writes, the bridge's own objects) and the inventory's.
    Ready(Box<BridgeSpec>, kube::Client, kube::Client),
    /// Something is not known yet: `clusters` is unknown, deferred with this reason when the client allows.
    Unknown(Option<DeferredReason>),
}

/// The plan of `req`, or why there is none (answered by [`PlanFailure::respond`]).
pub(super) async fn plan_bridge(
    provider: &ProviderState,
    memo: &PhaseMemo,
    req: &mut PlanRequest,
) -> Result<PlanResponse, PlanFailure> {
    if req.is_destroy() {
        // Nothing read ahead is needed: the destroy reads what exists when it runs.
        memo.cancel_pending(&req.prior_state);
        return Ok(PlanResponse::planned(req, Value::Null));
    }
    // What was read ahead for this plan (see `read_ahead`): taken now, so that a plan that stops early drops
    // it and cancels its reads.
    let mut pending = match req.prior_state.get_attr("name").as_str() {
        Some(name) => memo.take_pending(name),
        None => Pending::default(),
    };
    // The refresh's reading serves this plan only if its prior private data is what that refresh returned; then
    // its ledger is that data's, already decoded.
    pending.refreshed = pending
        .refreshed
        .and_then(|r| r.for_plan(&req.prior_private));
    let ledger = match pending.refreshed.as_mut().and_then(|r| r.ledger.take()) {
        Some(ledger) => ledger,
        None => ledger_of(&req.prior_private, &req.prior_state)?,
    };
    let earlier = ledger.answered().cloned();
    // The plan is computed from what the cluster holds, never from the prior or proposed `clusters` (tens of
    // megabytes for ten thousand clusters): free them before reading the inventory.
    req.prior_state.set_attr("clusters", Value::Null);
    req.proposed_new_state.set_attr("clusters", Value::Null);
    let mut planned = req.proposed_new_state.clone();
    let name_value = req.config.get_attr("name").clone();
    let mut requires_replace = Vec::new();
    if !req.prior_state.is_null() && req.prior_state.get_attr("name") != &name_value {
        requires_replace.push(AttributePath::attr("name"));
    }
    let failed = |diagnostics| PlanFailure {
        diagnostics,
        requires_replace: requires_replace.clone(),
    };
    let (spec, client, inventory) = match plan_inputs(provider, req).map_err(failed)? {
        PlanInputs::Ready(spec, client, inventory) => (*spec, client, inventory),
        PlanInputs::Unknown(deferred) => {
            planned.set_attr("id", name_value);
            planned.set_attr("instance_id", planned_instance(&req.prior_state));
            return Ok(unknown_plan(req, planned, requires_replace, deferred));
        }
    };
    let existing = !req.prior_state.is_null();
    let takes_over = ledger.takes_over().map(String::from);
    let who = checker(memo, &spec, req, takes_over.as_deref());
    planned.set_attr("instance_id", planned_instance(&req.prior_state));
    let providers =
        credentials_block::providers(&spec.credentials).map_err(|d| failed(d.into()))?;
    let run = PlanRun {
        client: &client,
        inventory: &inventory,
        spec: &spec,
        ledger,
        who,
        providers,
        ahead: head_start(pending, &spec, req),
    };
    let phase = |spec: &BridgeSpec| memo.plan_phase(&spec.name, existing);
    let (entries, skipped, mut diagnostics) = planned_entries(run, phase).await.map_err(failed)?;
    let skipped = gated_skipped(&spec, existing, &skipped, &mut diagnostics).map_err(failed)?;
    planned.set_attr("skipped", skipped);
    // Entries the prior state holds already are planned with its bytes (see `ClustersAnswer`).
    let earlier = Earlier {
        record: earlier.as_ref(),
        received_sha256: req.prior_unread.sha256("clusters"),
    };
    let answer = ClustersAnswer::of(entries, earlier, Recording::Unrecorded);
    let (planned_state, attribute_bytes) = answer.into_state(planned, &spec.name);
    Ok(PlanResponse {
        requires_replace,
        diagnostics: diagnostics.into(),
        attribute_bytes,
        ..PlanResponse::planned(req, planned_state)
    })
}

/// Who checks the claim of the bridge `req` plans (see [`Checker`]), having recorded the prior state's instance id
/// as seen by this process.
fn checker<'a>(
    memo: &PhaseMemo,
    spec: &BridgeSpec,
    req: &'a PlanRequest,
    takes_over: Option<&'a str>,
) -> Checker<'a> {
    let instance = req.prior_state.get_attr("instance_id").as_str();
    let existing = !req.prior_state.is_null();
    if existing {
        memo.seen(&spec.name, instance.map(String::from));
    }
    Checker {
        instance,
        takes_over,
        existing,
        seen: memo.seen_instance(&spec.name),
        // Terraform plans the replacement of an existing object with the private data of that object's plan.
        replacement: !existing && !req.prior_private.is_empty(),
    }
}

/// The planned `skipped`, through the `fail_on_skipped` gate (see [`gate`]): known, or unknown with a warning that
/// the apply will fail after its writes; `Err` (the plan's diagnostics and the gate's error) when the bridge is
/// being created.
fn gated_skipped(
    spec: &BridgeSpec,
    existing: bool,
    skipped: &BTreeMap<String, Skipped>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Value, Diagnostics> {
    match gate::at_plan(spec.fail_on_skipped, existing, skipped) {
        AtPlan::Open => Ok(skipped_value(skipped)),
        AtPlan::FailsAfterApply(warning) => {
            diagnostics.push(warning);
            Ok(Value::unknown())
        }
        AtPlan::Refused(error) => {
            diagnostics.push(error);
            Err(std::mem::take(diagnostics).into())
        }
    }
}

/// The planned `instance_id`: the prior state's, kept by every apply of this state; unknown for a new bridge (or a
/// state written before claims existed), whose apply takes it from the claim it writes.
fn planned_instance(prior: &Value) -> Value {
    match prior.get_attr("instance_id").as_str() {
        Some(instance) => Value::string(instance),
        None => Value::unknown(),
    }
}

/// The plan of a bridge whose configuration or connection is not known yet: `clusters` and `skipped` known after
/// apply, deferred with `deferred` when the client allows, or with a warning that the per-cluster review is missing.
fn unknown_plan(
    req: &PlanRequest,
    mut planned: Value,
    requires_replace: Vec<AttributePath>,
    deferred: Option<DeferredReason>,
) -> PlanResponse {
    planned.set_attr("clusters", Value::unknown());
    planned.set_attr("skipped", Value::unknown());
    let mut diagnostics = Diagnostics::default();
    if deferred.is_none() {
        diagnostics.push(review_missing(&req.config));
    }
    PlanResponse {
        requires_replace,
        deferred,
        diagnostics,
        ..PlanResponse::planned(req, planned)
    }
}

/// The settings and both connections of a plan: an `inventory` block not known yet defers, like the
/// provider's own configuration; a client that cannot defer gets `clusters` known after apply, as for any
/// other value not known yet.
fn plan_inputs(provider: &ProviderState, req: &PlanRequest) -> Result<PlanInputs, Diagnostics> {
    let unknown_inventory = !inventory_block::unknown(&req.config).is_empty();
    if unknown_inventory && req.client.deferral_allowed {
        return Ok(PlanInputs::Unknown(Some(
            DeferredReason::ResourceConfigUnknown,
        )));
    }
    if !req.config.is_wholly_known() {
        return Ok(PlanInputs::Unknown(None));
    }
    let config = BridgeConfig::read(&req.config)?;
    let spec = config.to_spec()?;
    let clients = provider.client(req.client).and_then(|c| {
        inventory_block::client_of(provider, config.inventory.as_ref(), req.client).map(|i| (c, i))
    });
    match clients {
        Ok((client, inventory)) => Ok(PlanInputs::Ready(Box::new(spec), client, inventory)),
        Err(NotReady::Defer(reason)) => Ok(PlanInputs::Unknown(Some(reason))),
        Err(NotReady::Fail(d)) => Err(d.into()),
    }
}

/// The warning of a plan made while part of the configuration is unknown: which arguments, and that the
/// per-cluster review (which clusters are registered, changed or deregistered) is then missing from this plan.
fn review_missing(config: &Value) -> Diagnostic {
    let unknown: Vec<String> = match config {
        Value::Object(attrs) => attrs
            .iter()
            .filter(|(_, v)| !v.is_wholly_known())
            .map(|(k, _)| k.clone())
            .collect(),
        _ => Vec::new(),
    };
    Diagnostic::warning(
        format!(
            "No per-cluster plan: {} known only at apply",
            if unknown.is_empty() {
                "part of the configuration is".to_string()
            } else {
                format!("{} is", unknown.join(", "))
            }
        ),
        "The bridge plans every cluster from its whole configuration, so while an argument is unknown this plan \
         cannot say which clusters it will register, change or deregister: clusters and skipped are known after \
         apply. At apply, the clusters are planned again with the known values, with the same checks and limits \
         (max_removals, max_updates, strict). To review them here, make the argument known at plan (apply what it depends on \
         first, for example with -target).",
    )
}

/// What was read ahead for this plan: the refresh's reading of what the bridge owns, and the inventory when this
/// plan reads the same one. (Read for the bridge's name in the prior state: a renamed bridge reads for itself.)
fn head_start(pending: Pending, spec: &BridgeSpec, req: &PlanRequest) -> HeadStart {
    if req.prior_state.get_attr("name").as_str() != Some(spec.name.as_str()) {
        return HeadStart::default();
    }
    HeadStart {
        // Checked against the prior private data when it was taken (`plan_bridge`).
        owned: pending.refreshed.map(|r| r.observed),
        inventory: pending
            .inventory
            .and_then(|i| read_ahead::for_plan(i, spec, &req.config)),
    }
}

/// Reads the claim, the inventory and what exists (one call down, [`read_for_plan`]), plans, and returns the
/// planned entries with the plan's diagnostics. `phase` tells the first plan from the plan made again before
/// apply; it is asked once the reads succeeded.
async fn planned_entries(
    run: PlanRun<'_>,
    phase: impl FnOnce(&BridgeSpec) -> Phase,
) -> Result<PlannedEntries, Diagnostics> {
    let spec = run.spec;
    let started = std::time::Instant::now();
    let (reused, read_ahead) = (run.ahead.owned.is_some(), run.ahead.inventory.is_some());
    let snap = read_for_plan(run).await.map_err(plan_stop_diags)?;
    tracing::debug!(
        bridge = %spec.name,
        elapsed_ms = started.elapsed().as_millis() as u64,
        reused_refresh = reused,
        read_ahead,
        "read the claim, the inventory and what exists"
    );
    let plan = snap.plan(spec, jiff::Timestamp::now(), phase(spec), None);
    let diagnostics = plan.problems.iter().map(problem_diag).collect();
    let checked_ahead = snap.checked.as_ref().map_or(0, |c| c.len());
    tracing::debug!(bridge = %spec.name, clusters = plan.desired.len() + plan.kept.len(), profiles = snap.profiles.len(), checked_ahead, recorded_checks = plan.recorded_checks, "planned bridge");
    // The inventory (tens of megabytes at ten thousand clusters) is done with before the planned value is built.
    drop(snap);
    let skipped = plan.skipped();
    Ok((plan.into_entries(), skipped, diagnostics))
}

/// The planned `clusters` entries, the `skipped` clusters and the plan's diagnostics.
type PlannedEntries = (
    BTreeMap<String, ClusterEntry>,
    BTreeMap<String, Skipped>,
    Vec<Diagnostic>,
);
