//! The bridge's ownership as the resource sees it: the claim that reserves the bridge name for this state (checked
//! at plan, taken at apply, released by destroy) and the ledger of the objects it owns, kept in the private state.

use crate::{
    domain::{
        BridgeSpec,
        claim_check::{Checked, Checker, check},
        journal::Journals,
        ledger_copy::LedgerCopy,
        ownership::{
            Claim, DEFAULT_CLAIM_NAMESPACE, KEPT_RUN_KEYS, Kind, Ledger, Run, RunKey, claim_name,
        },
        plan::Skipped,
        skipped_record,
    },
    k8s::claim as k8s_claim,
    provider::diag::{claim_refusal_diags, io_diags},
    tfplugin::{Diagnostic, Diagnostics, Value},
};

use std::collections::BTreeMap;

use super::clusters::entries_from_value;

/// The namespace of the claim of the bridge in `state` (a state or a configuration).
pub(super) fn claim_namespace(state: &Value) -> String {
    state
        .get_attr("claim_namespace")
        .as_str()
        .unwrap_or(DEFAULT_CLAIM_NAMESPACE)
        .to_string()
}

/// Checks that this state may use the bridge's name (see `crate::domain::claim_check`), reading its claim.
async fn check_claim_of(
    client: &kube::Client,
    spec: &BridgeSpec,
    who: Checker<'_>,
) -> Result<Checked, Diagnostics> {
    let name = claim_name(&spec.name);
    let claim = k8s_claim::read(client, &spec.claim_namespace, &name)
        .await
        .map_err(io_diags)?;
    let claim_id = format!("{}/{name}", spec.claim_namespace);
    let at = (jiff::Timestamp::now(), k8s_claim::holder_alive);
    check(&spec.name, &claim_id, claim, &who, at).map_err(|r| claim_refusal_diags(&r))
}

/// What the claim gives an apply: this state's instance id, the key of this run, and every run key the claim
/// holds with the runs' write journals (with which objects of earlier runs that died are recognised).
pub(super) struct ClaimedRun {
    pub instance: String,
    pub key: RunKey,
    pub keys: Vec<RunKey>,
    claim: Claim,
}

impl ClaimedRun {
    /// The write journals of the claim's earlier runs.
    pub fn journals(&self) -> &Journals {
        &self.claim.journals
    }
}

/// Apply-time claim: checks it again and writes it (with a new instance id for a new bridge, or the id of this
/// state's own first apply that died; the current configuration record; a new run key; this run) before any
/// other object.
pub(super) async fn claim_for_apply(
    client: &kube::Client,
    spec: &BridgeSpec,
    prior: &Value,
    takes_over: Option<&str>,
    limit: std::time::Duration,
) -> Result<ClaimedRun, Diagnostics> {
    let mine = prior.get_attr("instance_id").as_str().map(String::from);
    let who = Checker {
        instance: mine.as_deref(),
        takes_over,
        existing: !prior.is_null(),
        seen: None,
        replacement: false,
    };
    let claim = check_claim_of(client, spec, who).await?.claim;
    // Checked above: a claim another state holds stops here; one left by a first apply that died is taken over.
    let instance = mine
        .or_else(|| claim.as_ref().map(|c| c.instance.clone()))
        .unwrap_or_else(k8s_claim::new_instance_id);
    let key = k8s_claim::new_run_key().map_err(|e| {
        Diagnostics::from(Diagnostic::error(
            "Cannot make a run key",
            format!("The random generator failed: {e}"),
        ))
    })?;
    let mut keys = claim.as_ref().map(|c| c.keys.clone()).unwrap_or_default();
    keys.push(key.clone());
    let drop = keys.len().saturating_sub(KEPT_RUN_KEYS);
    keys.drain(..drop);
    let now = jiff::Timestamp::now();
    let until = now
        .checked_add(jiff::SignedDuration::try_from(limit).unwrap_or(jiff::SignedDuration::MAX))
        .unwrap_or(now);
    let wanted = Claim {
        instance: instance.clone(),
        config: spec.config_record.clone(),
        keys: keys.clone(),
        // The copy of the last finished apply, until this one finishes (see `finish_run`).
        ledger_copy: claim.as_ref().and_then(|c| c.ledger_copy.clone()),
        skipped: claim.as_ref().and_then(|c| c.skipped.clone()),
        journals: claim
            .as_ref()
            .map(|c| c.journals.clone())
            .unwrap_or_default(),
        run: Some(Run {
            holder: k8s_claim::holder(),
            started: now.to_string(),
            until: until.to_string(),
            done: false,
            first: prior.is_null(),
            failed: None,
        }),
    };
    write_claim(client, spec, &wanted).await?;
    drop_stale_journals(client, spec, &wanted).await;
    Ok(ClaimedRun {
        instance,
        key,
        keys,
        claim: wanted,
    })
}

/// Removes from the claim the write journals of the run keys it no longer holds (their marks count nowhere any
/// more). A failure leaves them: they only take room.
async fn drop_stale_journals(client: &kube::Client, spec: &BridgeSpec, claim: &Claim) {
    let kept: Vec<String> = claim.keys.iter().map(RunKey::fingerprint).collect();
    let stale = claim.journals.stale_keys(&kept);
    if stale.is_empty() {
        return;
    }
    let data = stale.into_iter().map(|k| (k, None)).collect();
    let name = claim_name(&spec.name);
    if let Err(e) = k8s_claim::patch_data(client, &spec.claim_namespace, &name, &data).await {
        tracing::warn!(error = %e, "the journals of earlier runs were not removed from the claim");
    }
}

async fn write_claim(
    client: &kube::Client,
    spec: &BridgeSpec,
    claim: &Claim,
) -> Result<(), Diagnostics> {
    k8s_claim::write(
        client,
        &spec.claim_namespace,
        &claim_name(&spec.name),
        &spec.name,
        claim,
    )
    .await
    .map_err(io_diags)
}

/// How an apply answers Terraform, as its claim records it: whether it `failed` (answers with an error), the new
/// private state (`None` when the apply wrote nothing: the claim's copy of the ledger is kept) and `skipped` in the
/// new state (`None`: the claim's record is kept).
pub(super) struct RunEnd {
    pub failed: bool,
    pub private: Option<Vec<u8>>,
    pub skipped: Option<BTreeMap<String, Skipped>>,
}

/// Records in the claim that the run finished (the provider is answering Terraform) and how (`end`): with the copy
/// of the ledger it answers with, and its `skipped` (for `import`). A failure is a warning: the run is then taken
/// for dead once its time is up, which only matters to a state without the bridge, and the copy is the last
/// apply's.
pub(super) async fn finish_run(
    client: &kube::Client,
    spec: &BridgeSpec,
    mut run: ClaimedRun,
    end: RunEnd,
) -> Option<Diagnostic> {
    // A CLI that is gone saves no state: the run stays unfinished, so that the next run of the same state, which
    // will not have this run's answer, recovers its objects.
    if !crate::tfplugin::binary::host_alive() {
        return None;
    }
    if let Some(r) = run.claim.run.as_mut() {
        r.done = true;
        r.failed = Some(end.failed);
    }
    if let Some(skipped) = &end.skipped {
        run.claim.skipped = Some(skipped_record::encode(skipped));
    }
    let private = end.private.as_deref();
    if let Some(ledger) = private.and_then(|p| Ledger::from_private(p, Vec::new).ok()) {
        // A copy the claim cannot hold (some 20,000 clusters) is left out when written: readers then say they
        // cannot tell.
        run.claim.ledger_copy = Some(LedgerCopy::of(&ledger, &run.key).encode());
    }
    write_claim(client, spec, &run.claim).await.err().map(|_| {
        Diagnostic::warning(
            "The bridge's claim was not updated",
            "Recording the end of this run in the claim failed; nothing else is affected.",
        )
    })
}

/// The ownership ledger of a bridge: from its private state, or, for states written before UIDs were
/// recorded (empty private data), the object names its `clusters` attribute lists (decoded only then: the
/// plugin layer leaves `clusters` undecoded when there is private data).
pub(super) fn ledger_of(private: &[u8], state: &Value) -> Result<Ledger, Diagnostics> {
    let legacy = if private.is_empty() {
        legacy_ids(state)
    } else {
        Vec::new()
    };
    Ledger::from_private(private, || legacy).map_err(|e| {
        Diagnostics::from(Diagnostic::error(
            "Unreadable private state",
            format!("{e}. Re-import the bridge (terraform import) to rebuild it."),
        ))
    })
}

/// The SveltosClusters and Secrets a state older than the UID ledger lists in its `clusters`.
fn legacy_ids(state: &Value) -> Vec<(Kind, String)> {
    entries_from_value(state.get_attr("clusters"))
        .into_values()
        .flatten()
        .flat_map(|e| {
            let sc = e.sveltos_cluster.map(|id| (Kind::SveltosCluster, id));
            let secret = e.secret.map(|id| (Kind::Secret, id));
            sc.into_iter().chain(secret)
        })
        .collect()
}
