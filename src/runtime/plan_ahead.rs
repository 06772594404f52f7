//! The plan made ahead: once a refresh has answered, the plan that follows it is made in the background, of what
//! the refresh read of the bridge's objects and of the inventory read ahead, with the settings the refreshed
//! state records (the configuration last applied), while Terraform processes the refreshed state.
//!
//! It is only ever a head start: the plan request reads and checks the bridge's claim itself, and takes what was
//! made ahead only when its own settings, claim and exec providers file are those it was made with
//! ([`Planning::Whole`]); otherwise it finishes the snapshot read ahead for its own settings (or reads the
//! inventory again when it reads another one), as it would without it. Which plan request may use it is the
//! resource's policy (`provider::resources::cluster_inventory_bridge`'s `read_ahead`).

use kube::Client;
use tokio::task::JoinHandle;

use super::{
    inventory::reads_sha256,
    read_ahead::ReadAhead,
    snapshot::{HeadStart, Reading, Snapshot},
};
use crate::{
    domain::{
        BridgeSpec,
        exec::ProvidersFile,
        observed::Observed,
        ownership::{Claim, Ledger},
        plan::Phase,
    },
    k8s::io::IoError,
};

/// What a refresh read, from which the plan that follows it is made ahead.
pub struct AheadOf {
    /// The provider's own connection (the inventory is read ahead through no other).
    pub client: Client,
    /// The settings the refreshed state records.
    pub spec: BridgeSpec,
    /// The ledger the refresh returned, as its private data reads back (`Ledger::into_stored`).
    pub ledger: Ledger,
    /// The bridge's claim as the refresh read it (`None`: there is none).
    pub claim: Option<Claim>,
    /// The operator's exec providers file for `spec`, read when the refresh answered.
    pub providers: Option<ProvidersFile>,
    /// What the refresh found the bridge owns.
    pub observed: Observed,
    /// The inventory being read ahead for `spec`.
    pub inventory: ReadAhead,
}

/// A plan being made ahead; cancelled when dropped unused.
pub struct PlanAhead {
    spec: Box<BridgeSpec>,
    reads: String,
    task: Option<JoinHandle<Option<Ahead>>>,
}

/// What a plan made ahead ended with.
pub(super) struct Ahead {
    spec: BridgeSpec,
    claim: Option<Claim>,
    providers: Option<ProvidersFile>,
    /// The snapshot, finished for `spec`, holding the plan (`Snapshot::planned_ahead`).
    snapshot: Snapshot,
}

/// How much of a plan made ahead a plan request may use (the resource's policy decides).
pub enum Planning {
    /// Everything, when it reads the same way with the same settings, claim and providers file (else as
    /// [`Planning::Reads`]).
    Whole(PlanAhead),
    /// What was read of the inventory and of the bridge's objects: the request reads the same inventory through
    /// the same connection.
    Reads(PlanAhead),
    /// What was read of the bridge's objects only.
    Owned(PlanAhead),
}

impl PlanAhead {
    /// Starts making the plan of `of.spec` (phase [`Phase::Plan`]) in the background: the claim's run keys added
    /// to the ledger ([`Ledger::with_claim`]), the inventory taken from the read ahead, the snapshot finished and
    /// planned. A failure leaves nothing: the plan request reads for itself.
    pub fn start(of: AheadOf) -> Self {
        let spec = Box::new(of.spec.clone());
        let reads = reads_sha256(&spec);
        let task = tokio::spawn(async move {
            let AheadOf {
                client,
                spec,
                ledger,
                claim,
                providers,
                observed,
                inventory,
            } = of;
            let ledger = ledger.with_claim(claim.as_ref());
            let ahead = HeadStart::default();
            let (reading, _, _) = Reading::start((&client, &client), &spec, &ledger, ahead);
            let started = std::time::Instant::now();
            let made = async {
                let read = reading.inventory(Some(inventory)).await?;
                let snap = Snapshot::of(read, observed, providers.clone());
                let mut snap = reading.finish(&ledger, snap).await?;
                let plan = snap.plan(&spec, jiff::Timestamp::now(), Phase::Plan, None);
                snap.keep_planned(plan);
                Ok::<_, IoError>(snap)
            };
            match made.await {
                Ok(snapshot) => {
                    tracing::debug!(bridge = %spec.name, elapsed_ms = started.elapsed().as_millis() as u64, "planned ahead");
                    Some(Ahead {
                        spec,
                        claim,
                        providers,
                        snapshot,
                    })
                }
                Err(e) => {
                    tracing::debug!(bridge = %spec.name, error = %e, "the plan ahead failed; the plan reads for itself");
                    None
                }
            }
        });
        Self {
            spec,
            reads,
            task: Some(task),
        }
    }

    /// The settings it plans with.
    pub fn spec(&self) -> &BridgeSpec {
        &self.spec
    }

    /// [`reads_sha256`] of those settings.
    pub fn reads(&self) -> &str {
        &self.reads
    }

    /// What it ended with, or `None` when it failed or was cancelled. If the caller stops waiting, it is
    /// cancelled too.
    pub(super) async fn join(mut self) -> Option<Ahead> {
        let made = self.task.as_mut()?.await;
        self.task = None;
        made.ok().flatten()
    }
}

impl Drop for PlanAhead {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

impl std::fmt::Debug for PlanAhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanAhead")
            .field("bridge", &self.spec.name)
            .field("pending", &self.task.is_some())
            .finish()
    }
}

impl std::fmt::Debug for Planning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (how, ahead) = match self {
            Planning::Whole(a) => ("Whole", a),
            Planning::Reads(a) => ("Reads", a),
            Planning::Owned(a) => ("Owned", a),
        };
        f.debug_tuple(how).field(ahead).finish()
    }
}

impl Ahead {
    /// Whether its plan is that of a request of `spec` that found `found`: made with the same settings, claim
    /// (the run keys decide what is owned) and exec providers file, for a bridge that is not being replaced.
    fn serves(&self, spec: &BridgeSpec, found: &Found<'_>) -> bool {
        self.spec == *spec
            && self.claim == *found.claim
            && self.providers == found.providers
            && !found.replaces_own
    }
}

/// What the plan request found when it read the claim itself, to compare with what the plan ahead was made with.
pub(super) struct Found<'a> {
    /// The claim (checked).
    pub claim: &'a Option<Claim>,
    /// The operator's exec providers file.
    pub providers: Option<ProvidersFile>,
    /// The plan replaces this state's own bridge: it owns nothing then.
    pub replaces_own: bool,
}

/// The snapshot of the plan of `reading.spec` (with `ledger`, the plan request's) from what `planning` made ahead:
/// as it is, holding its plan, when the request may use all of it and read what it was made with; else finished
/// again for the request's settings from what it read; what failed ahead is read anew.
pub(super) async fn snapshot_from(
    reading: &Reading<'_>,
    ledger: &Ledger,
    planning: Planning,
    found: Found<'_>,
) -> Result<Snapshot, IoError> {
    let (ahead, whole, reads) = match planning {
        Planning::Whole(a) => (a, true, true),
        Planning::Reads(a) => (a, false, true),
        Planning::Owned(a) => (a, false, false),
    };
    let Some(ahead) = ahead.join().await else {
        let (read, observed) =
            futures::try_join!(reading.inventory(None), reading.owned(ledger, None))?;
        return reading
            .finish(ledger, Snapshot::of(read, observed, found.providers))
            .await;
    };
    if whole && ahead.serves(reading.spec, &found) {
        return Ok(ahead.snapshot);
    }
    tracing::debug!(bridge = %reading.spec.name, whole, reads, "the plan ahead does not serve; planning again");
    let base = ahead.snapshot.reopen(found.providers);
    if reads {
        return reading.finish(ledger, base).await;
    }
    let read = reading.inventory(None).await?;
    let providers = base.providers.clone();
    reading
        .finish(ledger, Snapshot::of(read, base.into_observed(), providers))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ownership::RunKey;

    fn ahead(spec: &BridgeSpec, claim: Option<Claim>) -> Ahead {
        let read = (
            (
                Vec::new(),
                Vec::new(),
                Default::default(),
                Default::default(),
            ),
            None,
        );
        Ahead {
            spec: spec.clone(),
            claim,
            providers: None,
            snapshot: Snapshot::of(read, Observed::default(), None),
        }
    }

    #[test]
    fn a_plan_made_ahead_serves_only_the_same_settings_claim_and_providers() {
        let spec = BridgeSpec {
            name: "b".into(),
            ..Default::default()
        };
        let claim = Some(Claim::new("i-1".into(), None));
        let made = ahead(&spec, claim.clone());
        let found = |claim| Found {
            claim,
            providers: None,
            replaces_own: false,
        };
        assert!(made.serves(&spec, &found(&claim)));
        // Other settings.
        let strict = BridgeSpec {
            strict: true,
            ..spec.clone()
        };
        assert!(!made.serves(&strict, &found(&claim)));
        // A claim written since (a run key more: other objects may be owned).
        let mut keyed = claim.clone();
        if let Some(c) = keyed.as_mut() {
            c.keys.push(RunKey::new([7; 32]));
        }
        assert!(!made.serves(&spec, &found(&keyed)));
        assert!(!made.serves(&spec, &found(&None)));
        // Another providers file.
        let providers = Found {
            providers: Some(ProvidersFile::default()),
            ..found(&claim)
        };
        assert!(!made.serves(&spec, &providers));
        // `-replace`: the bridge owns nothing then.
        let replacing = Found {
            replaces_own: true,
            ..found(&claim)
        };
        assert!(!made.serves(&spec, &replacing));
    }
}
