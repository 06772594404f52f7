//! The reads of one plan of a bridge (`PlanResourceChange`), one call down: its claim read and checked (who may
//! use the bridge's name, and the run keys with which what it owns is recognised), the inventory read meanwhile
//! (it does not depend on the claim), then what the bridge owns and the rest of the snapshot
//! ([`super::snapshot`]).

use kube::Client;

use super::snapshot::{HeadStart, Reading, Snapshot};
use crate::{
    domain::{
        BridgeSpec,
        claim_check::{Checker, ClaimRefusal, check},
        exec::ProvidersFile,
        ownership::{Ledger, claim_name},
    },
    k8s::{claim as k8s_claim, io::IoError},
};

/// What a plan reads with: the provider's client (the bridge's claim and objects) and the inventory's, the
/// settings, the ledger from the prior private state, who checks the claim, the operator's providers file and what
/// was read ahead for it.
pub struct PlanRun<'a> {
    /// The cluster the bridge writes to: its claim and the objects it owns.
    pub client: &'a Client,
    /// The inventory's cluster (the `inventory` block's, or the provider's own).
    pub inventory: &'a Client,
    /// The bridge's settings.
    pub spec: &'a BridgeSpec,
    /// What the bridge owns, from the prior private state (the claim's run keys are added to it).
    pub ledger: Ledger,
    /// Who checks the claim.
    pub who: Checker<'a>,
    /// The operator's exec providers file, already read.
    pub providers: Option<ProvidersFile>,
    /// What a refresh read for this plan.
    pub ahead: HeadStart,
}

/// Why a plan stopped before it planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanStop {
    /// This state may not use the bridge's name.
    #[error(transparent)]
    Claim(ClaimRefusal),
    /// The claim, the inventory or what exists could not be read.
    #[error(transparent)]
    Read(#[from] IoError),
}

/// Reads everything the plan of `run.spec` needs: the claim, checked before anything the bridge owns is read (its
/// run keys decide what is owned), while the inventory is read (or taken from the read-ahead); then what the bridge
/// owns and the rest of the [`Snapshot`]. When the plan replaces this state's own bridge (`-replace`: what it owns
/// is destroyed before the replacement is created), the snapshot is that of a bridge that owns nothing.
pub async fn read_for_plan(run: PlanRun<'_>) -> Result<Snapshot, PlanStop> {
    let PlanRun {
        client,
        inventory,
        spec,
        ledger,
        who,
        providers,
        ahead,
    } = run;
    let (reading, refreshed, read_ahead) =
        Reading::start((client, inventory), spec, &ledger, ahead);
    let owned = async {
        let name = claim_name(&spec.name);
        let claim = k8s_claim::read(client, &spec.claim_namespace, &name).await?;
        let claim_id = format!("{}/{name}", spec.claim_namespace);
        let at = (jiff::Timestamp::now(), k8s_claim::holder_alive);
        let checked = check(&spec.name, &claim_id, claim, &who, at).map_err(PlanStop::Claim)?;
        let ledger = match checked.claim {
            Some(c) => ledger.with_run_keys(c.keys).with_journals(c.journals),
            None => ledger.with_run_keys(Vec::new()),
        };
        let observed = reading.owned(&ledger, refreshed).await?;
        Ok::<_, PlanStop>((ledger, observed, checked.replaces_own))
    };
    let read = async { reading.inventory(read_ahead).await.map_err(PlanStop::from) };
    let (read, (ledger, observed, replaces_own)) = futures::try_join!(read, owned)?;
    let mut snap = reading.complete(&ledger, providers, read, observed).await?;
    if replaces_own {
        // The destroy that comes first removes every object the bridge owns.
        snap.forget_owned(spec);
    }
    Ok(snap)
}
