//! What one plan or apply of a bridge reads: the inventory and what exists, with a constant number of LISTs
//! (plus a GET per Secret named by a `kubeconfig-secretreader` provider and the collision check of the names the
//! plan may create).

use std::collections::{BTreeMap, BTreeSet};

use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kube::Client;

use super::{
    CONCURRENCY, Namespaced,
    inventory::{InventoryReads, read_inventory},
    read_ahead::ReadAhead,
};
use crate::{
    api::{ClusterProfile, SveltosCluster},
    domain::{
        BridgeSpec,
        credentials::CheckedKubeconfigs,
        exec::ProvidersFile,
        observed::Observed,
        ownership::Ledger,
        plan::{CreationTargets, Inputs, Located, Phase, Plan, locate_all, plan},
    },
    k8s::{
        bodies, credentials,
        io::{self, IoError},
    },
};

/// Everything read from the cluster for one plan or apply.
pub struct Snapshot {
    /// The ClusterProfiles in scope (the namespaces of the selection).
    pub profiles: Vec<ClusterProfile>,
    /// The Secrets carrying the credential label (see `CredentialReads::labelled`).
    pub credential_secrets: Vec<Secret>,
    /// The labels of the namespaces carrying the consumer label (empty without a consumer).
    pub namespace_labels: BTreeMap<String, BTreeMap<String, String>>,
    /// The operator's exec providers file, if configured (scoped by the bridge's `exec_providers`).
    pub providers: Option<ProvidersFile>,
    /// What exists: what the bridge owns, impostors, and objects at the names it would create.
    pub observed: Observed,
    /// The Secrets named by `kubeconfig-secretreader` providers, by `(namespace, name)` (`None`: not found).
    pub fetched: BTreeMap<(String, String), Option<Secret>>,
    /// Kubeconfigs found inert while the inventory was read ahead (none when it was read by the plan).
    pub checked: Option<CheckedKubeconfigs>,
    /// ClusterProfiles that exist but do not decode, by key, with why (escaped, bounded).
    pub undecodable: BTreeMap<String, String>,
    /// The keys of the Cluster API Clusters in scope (`skip_cluster_api_clusters`; empty without it).
    pub cluster_api: BTreeSet<String>,
    /// The core's first phase ([`locate_all`]) of this snapshot, worked out once by [`Reading::complete`] (it
    /// depends on neither the time nor the phase) and used again by [`Snapshot::plan`]; [`Snapshot::forget_owned`]
    /// works it out anew.
    located: Located,
}

/// What a refresh already read for the plan that follows it: a head start, never needed.
#[derive(Debug, Default)]
pub struct HeadStart {
    /// What the bridge owns as the refresh read it with the plan's ledger (see [`read_owned`]).
    pub owned: Option<Observed>,
    /// The inventory read ahead ([`read_inventory`] started earlier for this same inventory and selection).
    pub inventory: Option<ReadAhead>,
}

/// Reads the inventory and what exists: four LISTs (profiles, labelled credential Secrets, and the
/// SveltosClusters and Secrets this bridge owns), one GET per Secret named by a `kubeconfig-secretreader`
/// provider, and a collision check of the objects the plan would create ([`existing_at`]).
///
/// The inventory (ClusterProfiles, credential Secrets, consumer namespaces, secret-reader Secrets) is read
/// through `inventory`, the cluster of the `inventory` block or the provider's own; what the bridge owns and
/// might collide with, and the Cluster API Clusters `skip_cluster_api_clusters` looks for, are read through
/// `client`, the cluster it writes to. `providers` is the operator's providers
/// file, already read. What `ahead` holds is not read again: what the bridge owns, read by a refresh with this
/// `ledger`, and the inventory read ahead (read again when that read failed: it is only ever a head start).
pub async fn snapshot(
    client: &Client,
    inventory: &Client,
    spec: &BridgeSpec,
    ledger: &Ledger,
    providers: Option<ProvidersFile>,
    ahead: HeadStart,
) -> Result<Snapshot, IoError> {
    let (reading, owned, read_ahead) = Reading::start((client, inventory), spec, ledger, ahead);
    let (read, observed) =
        futures::try_join!(reading.inventory(read_ahead), reading.owned(ledger, owned),)?;
    reading.complete(ledger, providers, read, observed).await
}

/// The inventory as [`read_inventory`] returned it, with the kubeconfigs checked while it was read ahead.
pub(super) type InventoryPart = (InventoryReads, Option<CheckedKubeconfigs>);

/// One [`snapshot`] in parts, for a caller that reads more beside them (the plan, its claim): where the inventory
/// and what exists are read, with what settings, within one read budget.
pub(super) struct Reading<'a> {
    pub client: &'a Client,
    pub inventory: &'a Client,
    pub spec: &'a BridgeSpec,
    pub budget: io::ReadBudget,
}

impl<'a> Reading<'a> {
    /// A reading within a fresh budget (that of a bridge with `ledger`, [`io::ReadBudget::for_owned`]), and what
    /// `ahead` holds: what the bridge owns as a refresh read it, and the inventory read ahead.
    pub fn start(
        (client, inventory): (&'a Client, &'a Client),
        spec: &'a BridgeSpec,
        ledger: &Ledger,
        ahead: HeadStart,
    ) -> (Self, Option<Observed>, Option<ReadAhead>) {
        let reading = Self {
            client,
            inventory,
            spec,
            budget: io::ReadBudget::for_owned(ledger.len()),
        };
        (reading, ahead.owned, ahead.inventory)
    }

    /// The inventory: taken from `read_ahead`, or read when there is none or it failed (it is only ever a head
    /// start).
    pub async fn inventory(&self, read_ahead: Option<ReadAhead>) -> Result<InventoryPart, IoError> {
        if let Some(read) = read_ahead
            && let Some(done) = read.join().await
        {
            return Ok((done.reads, done.checked));
        }
        Ok((
            read_inventory(self.inventory, self.client, self.spec, &self.budget).await?,
            None,
        ))
    }

    /// What the bridge owns with `ledger`: `owned` as a refresh read it, or read now ([`read_owned`]).
    pub async fn owned(
        &self,
        ledger: &Ledger,
        owned: Option<Observed>,
    ) -> Result<Observed, IoError> {
        match owned {
            Some(observed) => Ok(observed),
            None => {
                let (spec, selected) = (self.spec, &self.spec.selection.namespaces);
                super::owned::read_owned(self.client, &spec.name, ledger, selected, &self.budget)
                    .await
            }
        }
    }

    /// The snapshot of what was `read` and `observed`: the core's first phase (`locate_all`), the Secrets named by
    /// `kubeconfig-secretreader` providers, and the objects at the names the plan may create ([`existing_at`]).
    pub async fn complete(
        &self,
        ledger: &Ledger,
        providers: Option<ProvidersFile>,
        read: InventoryPart,
        observed: Observed,
    ) -> Result<Snapshot, IoError> {
        let ((profiles, undecodable, reads, cluster_api), checked) = read;
        let credentials::CredentialReads {
            labelled: credential_secrets,
            namespace_labels,
        } = reads;
        let mut snap = Snapshot {
            profiles,
            credential_secrets,
            namespace_labels,
            providers,
            observed,
            fetched: BTreeMap::new(),
            checked,
            undecodable: io::Undecodable::by_key(undecodable),
            cluster_api,
            located: Located::default(),
        };
        let (spec, budget) = (self.spec, &self.budget);
        snap.observed.mark_removable_labels(&spec.copy_labels);
        snap.locate(spec);
        let located = &snap.located;
        snap.fetched =
            credentials::read_named_secrets(self.inventory, &located.secrets_to_read(), budget)
                .await?;
        let targets = located.creation_targets(&snap.profiles, &snap.observed);
        let (clusters, secrets) = existing_at(self.client, &targets, budget).await?;
        snap.observed.add_foreign(ledger, &clusters, &secrets);
        Ok(snap)
    }
}

/// Up to this many objects to create are checked one GET each; more, with metadata LISTs of their namespaces.
const COLLISION_GETS: usize = 64;

/// The metadata of objects that already exist where the plan would create SveltosClusters and Secrets. Nothing is
/// read when nothing is to be created (a no-change plan); a few targets cost a metadata GET each, many a metadata
/// LIST per namespace involved (or one cluster-wide LIST when they span many namespaces), within `budget`. An object
/// that does not decode is there all the same (what could be read of its metadata): a collision, never written over.
async fn existing_at(
    client: &Client,
    targets: &CreationTargets,
    budget: &io::ReadBudget,
) -> Result<(Vec<ObjectMeta>, Vec<ObjectMeta>), IoError> {
    if targets.is_empty() {
        return Ok(Default::default());
    }
    if targets.len() <= COLLISION_GETS {
        return futures::try_join!(
            metadata_of::<SveltosCluster>(client, &targets.clusters),
            metadata_of::<Secret>(client, &targets.secrets),
        );
    }
    let namespaces = targets.namespaces();
    let namespaces: Vec<String> = if namespaces.len() > COLLISION_NAMESPACES {
        Vec::new() // all namespaces, one paginated LIST
    } else {
        namespaces.into_iter().collect()
    };
    futures::try_join!(
        listed_at::<SveltosCluster>(client, &namespaces, &targets.clusters, budget),
        listed_at::<Secret>(client, &namespaces, &targets.secrets, budget),
    )
}

/// The metadata of those of `wanted` that a metadata LIST of `namespaces` finds (one that does not decode as what
/// could be read of it), kept page by page as they are decoded: what else the namespaces hold (the bridge's own
/// objects among them, thousands) is never held beyond its page.
async fn listed_at<K: Namespaced>(
    client: &Client,
    namespaces: &[String],
    wanted: &BTreeSet<(String, String)>,
    budget: &io::ReadBudget,
) -> Result<Vec<ObjectMeta>, IoError> {
    let mut found = Vec::new();
    let wanted_only = |m: &ObjectMeta| wanted.contains(&bodies::key_of(m));
    let bad = io::list_metadata_each::<K>(client, namespaces, None, budget, |page| {
        found.extend(page.into_iter().filter(wanted_only));
    })
    .await?;
    found.extend(bad.into_iter().map(|u| u.meta).filter(wanted_only));
    Ok(found)
}

/// The metadata of those of `objects` (`namespace`, `name`) that exist: one metadata GET each, concurrently (one
/// that does not decode as what could be read of it).
async fn metadata_of<K: Namespaced>(
    client: &Client,
    objects: &BTreeSet<(String, String)>,
) -> Result<Vec<ObjectMeta>, IoError> {
    let found: Vec<io::Got<ObjectMeta>> = stream::iter(objects.clone())
        .map(|(ns, name)| async move { io::get_metadata::<K>(client, &ns, &name).await })
        .buffer_unordered(CONCURRENCY)
        .try_collect()
        .await?;
    Ok(found
        .into_iter()
        .filter_map(|g| match g {
            io::Got::Found(m) => Some(m),
            io::Got::Undecodable(u) => Some(u.meta.clone()),
            io::Got::Absent => None,
        })
        .collect())
}

/// Above this many namespaces, collision checks list cluster-wide instead of namespace by namespace.
const COLLISION_NAMESPACES: usize = 16;

impl Snapshot {
    /// The pure core's view of this snapshot.
    pub fn inputs<'a>(
        &'a self,
        spec: &'a BridgeSpec,
        now: jiff::Timestamp,
        phase: Phase,
        planned_mints: Option<&'a BTreeSet<String>>,
    ) -> Inputs<'a> {
        Inputs {
            spec,
            profiles: &self.profiles,
            credential_secrets: &self.credential_secrets,
            checked_kubeconfigs: self.checked.as_ref(),
            namespace_labels: &self.namespace_labels,
            providers: self.providers.as_ref(),
            observed: &self.observed,
            now,
            phase,
            planned_mints,
            undecodable: &self.undecodable,
            cluster_api: &self.cluster_api,
            // Apply's writes unpack their objects one at a time (`runtime::execute`).
            pack: phase == Phase::Apply,
        }
    }

    /// Works out [`Snapshot::located`] (what it depends on is neither the time, the phase nor the mints).
    fn locate(&mut self, spec: &BridgeSpec) {
        self.located = locate_all(&self.inputs(spec, jiff::Timestamp::now(), Phase::Plan, None));
    }

    /// Forgets what the bridge owns (a plan whose destroy comes first: it removes every object the bridge owns),
    /// and locates again without it.
    pub fn forget_owned(&mut self, spec: &BridgeSpec) {
        self.observed.owned.clear();
        self.observed.records.clear();
        self.locate(spec);
    }

    /// Drops what only planning needed (megabytes a thousand clusters): the credential Secrets read, the Secrets
    /// fetched, the inventory's checks and what was located from them; the ClusterProfiles too unless
    /// `keep_profiles`. What exists stays. Not to be planned against again.
    pub fn planned(&mut self, keep_profiles: bool) {
        self.credential_secrets = Vec::new();
        self.fetched = BTreeMap::new();
        self.checked = None;
        self.located = Located::default();
        if !keep_profiles {
            self.profiles = Vec::new();
        }
    }

    /// Plans against this snapshot (`spec`: the one it was read for).
    pub fn plan(
        &self,
        spec: &BridgeSpec,
        now: jiff::Timestamp,
        phase: Phase,
        planned_mints: Option<&BTreeSet<String>>,
    ) -> Plan {
        let inputs = self.inputs(spec, now, phase, planned_mints);
        plan(&inputs, &self.located, &self.fetched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ownership::Kind;

    #[tokio::test]
    async fn a_reading_gets_the_budget_of_what_its_ledger_records() {
        // Nothing is read: the client points nowhere.
        let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
        let client = crate::k8s::io::client(config).unwrap();
        let spec = BridgeSpec::default();
        let mut ledger = Ledger::default();
        for i in 0..1000 {
            ledger.record(Kind::SveltosCluster, &format!("ns/c{i}"), "u");
        }
        let (reading, _, _) =
            Reading::start((&client, &client), &spec, &ledger, HeadStart::default());
        assert_eq!(
            reading.budget.limit(),
            io::RUN_BYTES + 1000 * io::OWNED_BYTES
        );
    }
}
