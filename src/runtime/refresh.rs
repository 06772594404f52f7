//! One refresh of a bridge (`ReadResource`), one call down: its claim read once (the run keys of its runs, and,
//! after an import, the record the state is restored from), then what the bridge owns
//! ([`super::owned::read_owned`], or what was listed of it since the state was handed over, sorted with the
//! ledger: [`super::read_ahead::OwnedAhead`]), then the inventory read ahead for the plan that follows
//! ([`super::read_ahead::ReadAhead`]) when the resource asks for it.

use kube::Client;

use super::{
    inventory::reads_sha256,
    owned::{list_clusters, owned_scope, read_owned, sort_owned},
    read_ahead::{OwnedAhead, ReadAhead},
};
use crate::{
    domain::{
        BridgeSpec,
        observed::Observed,
        ownership::{Claim, Ledger, claim_name},
    },
    k8s::{
        claim as k8s_claim,
        io::{self, IoError},
    },
};

/// Which bridge a refresh reads, and where.
pub struct RefreshOf<'a> {
    /// The bridge's name.
    pub bridge: &'a str,
    /// The namespace of its claim.
    pub claim_namespace: &'a str,
    /// The state's instance id: the claim's run keys count only when the claim holds this instance.
    pub instance: Option<&'a str>,
    /// The namespaces the state selects (the ledger's are read too).
    pub selected: &'a [String],
    /// The settings to read the inventory ahead with (the resource's policy: `None`, nothing is read ahead). It is
    /// read only when the ledger recorded these reads ([`Ledger::reads`], written by an apply): never with settings
    /// that came from the cluster (an import).
    pub ahead: Option<BridgeSpec>,
    /// The bridge's SveltosClusters, being listed since Terraform handed the state over: used when they are
    /// listed where the ledger says the bridge's objects may be ([`owned_scope`]), else cancelled.
    pub listed: Option<OwnedAhead>,
}

/// What a refresh read.
pub struct RefreshRead {
    /// The ledger, with the claim's run keys when the claim is this state's: objects a run that died wrote are
    /// then recognised by their marks.
    pub ledger: Ledger,
    /// What the bridge owns.
    pub observed: Observed,
    /// The claim as read (a claim that cannot be read adds no run key; an import needs it).
    pub claim: Result<Option<Claim>, IoError>,
    /// The inventory being read ahead for the plan, if it is.
    pub inventory: Option<ReadAhead>,
}

/// Reads the claim of `of.bridge`, then what the bridge owns with `ledger` (and the claim's run keys; see
/// [`RefreshOf::listed`]), then starts reading the inventory ahead (see [`RefreshOf::ahead`]).
pub async fn refresh(
    client: &Client,
    of: RefreshOf<'_>,
    ledger: Ledger,
) -> Result<RefreshRead, IoError> {
    let claim = k8s_claim::read(client, of.claim_namespace, &claim_name(of.bridge)).await;
    let ledger = match &claim {
        Ok(Some(c)) if of.instance == Some(c.instance.as_str()) => ledger
            .with_run_keys(c.keys.clone())
            .with_journals(c.journals.clone()),
        Ok(_) => ledger,
        Err(e) => {
            tracing::debug!(bridge = %of.bridge, error = %e, "the claim could not be read; no run keys");
            ledger
        }
    };
    let started = std::time::Instant::now();
    let scope = owned_scope(of.selected, &ledger);
    let listed = of.listed.filter(|l| l.serves(of.bridge, &scope));
    let listed_ahead = listed.is_some();
    let observed = match listed {
        Some(mut listed) => {
            // Sorted with the ledger as the listings end; a listing that failed is done again (the Secrets' too
            // when it held more than the bridge writes), within what is left of the SveltosClusters' budget.
            let budget = listed.budget();
            let secrets = listed.secrets().await;
            let clusters = async {
                match listed.join().await {
                    Some(listing) => Ok(listing),
                    None => list_clusters(client, of.bridge, &scope, &budget).await,
                }
            };
            let listings = (clusters, secrets);
            sort_owned(client, of.bridge, &ledger, (&scope, &budget), listings).await?
        }
        None => {
            // What the ledger records is read in one page where it fits (see `ReadBudget::for_refresh`).
            let budget = io::ReadBudget::for_refresh(ledger.len());
            read_owned(client, of.bridge, &ledger, of.selected, &budget).await?
        }
    };
    tracing::debug!(bridge = %of.bridge, elapsed_ms = started.elapsed().as_millis() as u64, listed_ahead, "read what the bridge owns");
    let recorded = ledger.reads();
    let inventory = of
        .ahead
        .filter(|spec| recorded == Some(reads_sha256(spec).as_str()))
        .map(|spec| {
            let checked = ledger.checked_sources().map(str::to_string).collect();
            ReadAhead::start(client.clone(), spec, checked)
        });
    Ok(RefreshRead {
        ledger,
        observed,
        claim,
        inventory,
    })
}
