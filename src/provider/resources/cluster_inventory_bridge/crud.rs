//! The IO side of the bridge resource: read the inventory and what exists with a constant number of
//! LISTs, then execute the writes and deletes the pure core decided on.

use std::collections::{BTreeMap, BTreeSet};

use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kube::Client;

use crate::{
    api::{ClusterProfile, SveltosCluster, keys},
    bridge::{
        BridgeSpec,
        credentials::{CheckedKubeconfigs, access_providers},
        desired::{ClusterEntry, Material, desired},
        exec::{ProvidersFile, static_kubeconfig},
        observed::World,
        ownership::{Kind, Ledger, MARK_ANNOTATION, RunKey},
        plan::{
            CreationTargets, Delete, Inputs, Phase, Plan, Write, actions, invocation_sha256,
            locate_all, plan,
        },
    },
    k8s::{
        bodies, credentials,
        exec::run as run_exec,
        io::{self, IoError},
    },
    tfplugin::{Diagnostic, Diagnostics},
};

use super::prefetch::{Background, Prefetched};

/// How many clusters are written or deleted at once.
pub const CONCURRENCY: usize = 16;

/// Everything read from the cluster for one plan or apply.
pub struct Snapshot {
    pub profiles: Vec<ClusterProfile>,
    pub credential_secrets: Vec<Secret>,
    pub namespace_labels: BTreeMap<String, BTreeMap<String, String>>,
    pub providers: Option<ProvidersFile>,
    pub world: World,
    pub fetched: BTreeMap<(String, String), Option<Secret>>,
    /// Kubeconfigs found inert while the inventory was read ahead (none when it was read by the plan).
    pub checked: Option<CheckedKubeconfigs>,
    /// ClusterProfiles that exist but do not decode, by key, with why (escaped, bounded).
    pub undecodable: BTreeMap<String, String>,
}

/// A Kubernetes error as a diagnostic.
pub fn io_diag(e: &IoError) -> Diagnostic {
    Diagnostic::error(
        format!("Cannot {} {}", e.action, e.object),
        e.message.clone(),
    )
}

pub use crate::provider::blocks::problem_diag;

fn owner_selector(bridge: &str) -> String {
    format!("{}={bridge}", keys::BRIDGE_LABEL)
}

/// What this bridge owns: per kind, a metadata LIST of the objects carrying the bridge's label (cluster-wide),
/// then the bodies of those the ledger recognises only (`k8s::bodies`); labelled objects it does not recognise
/// are impostors, known from their metadata.
pub async fn read_owned(client: &Client, bridge: &str, ledger: &Ledger) -> Result<World, IoError> {
    let sel = owner_selector(bridge);
    // Each batch of bodies is reduced to what the bridge keeps of it (identities and hashes) as it is decoded:
    // the listed objects, Secrets with their kubeconfig bytes, are never all held at once.
    let (mut clusters, mut secrets) = (World::default(), World::default());
    futures::try_join!(
        read_labelled::<SveltosCluster>(
            client,
            &sel,
            bridge,
            ledger,
            Kind::SveltosCluster,
            &mut clusters,
            |w, page| w.add_owned_clusters(bridge, ledger, page),
        ),
        read_labelled::<Secret>(
            client,
            &sel,
            bridge,
            ledger,
            Kind::Secret,
            &mut secrets,
            |w, page| w.add_owned_secrets(bridge, ledger, page),
        ),
    )?;
    clusters.join(secrets);
    Ok(clusters)
}

/// [`read_owned`] for one kind.
async fn read_labelled<K>(
    client: &Client,
    selector: &str,
    bridge: &str,
    ledger: &Ledger,
    kind: Kind,
    world: &mut World,
    add: impl Fn(&mut World, &[K]),
) -> Result<(), IoError>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
    <K as kube::Resource>::DynamicType: Default,
{
    let (mut listed, mut wanted) = (Vec::new(), BTreeSet::new());
    io::list_metadata_each::<K>(client, &[], Some(selector), |metas| {
        wanted.extend(world.sort_labelled(bridge, ledger, kind, &metas));
        listed.extend(metas.iter().map(bodies::key_of));
    })
    .await?;
    bodies::read_bodies::<K>(client, Some(selector), &listed, &wanted, |page| {
        add(world, &page)
    })
    .await
}

/// Reads the inventory and what exists: four LISTs (profiles, labelled credential Secrets, and the
/// SveltosClusters and Secrets this bridge owns), one GET per Secret named by a `kubeconfig-secretreader`
/// provider, and a collision check of the objects the plan would create ([`existing_at`]).
///
/// The inventory (ClusterProfiles, credential Secrets, consumer namespaces, secret-reader Secrets) is read
/// through `inventory`, the cluster of the `inventory` block or the provider's own; what the bridge owns and
/// might collide with is read through `client`, the cluster it writes to. `owned`, when given, is what the bridge
/// owns as a refresh just read it with this `ledger` (see [`read_owned`]): those two LISTs are then not made again.
/// `prefetched`, when given, is [`read_inventory`] started earlier for this same inventory and selection.
pub async fn snapshot(
    client: &Client,
    inventory: &Client,
    spec: &BridgeSpec,
    ledger: &Ledger,
    owned: Option<World>,
    prefetched: Option<Background<Prefetched>>,
) -> Result<Snapshot, Diagnostics> {
    let providers = crate::provider::blocks::credentials::providers(&spec.credentials)
        .map_err(Diagnostics::from)?;
    let lists = async {
        futures::try_join!(
            async {
                // A prefetch that failed (or was cancelled) is read again: it is only ever a head start.
                if let Some(pre) = prefetched
                    && let Some(Prefetched { reads, checked }) = pre.join().await
                {
                    return Ok((reads, Some(checked)));
                }
                Ok((read_inventory(inventory, spec).await?, None))
            },
            async {
                match owned {
                    Some(world) => Ok(world),
                    None => read_owned(client, &spec.name, ledger).await,
                }
            },
        )
    };
    let (((profiles, undecodable, reads), checked), world) =
        lists.await.map_err(|e| Diagnostics::from(io_diag(&e)))?;
    let credentials::CredentialReads {
        labelled: credential_secrets,
        namespace_labels,
    } = reads;
    let mut snap = Snapshot {
        profiles,
        credential_secrets,
        namespace_labels,
        providers,
        world,
        fetched: BTreeMap::new(),
        checked,
        undecodable: io::Undecodable::by_key(undecodable),
    };
    let located = locate_all(&snap.inputs(spec, jiff::Timestamp::now(), Phase::Plan, None));
    snap.fetched = credentials::read_named_secrets(inventory, &located.secrets_to_read())
        .await
        .map_err(|e| Diagnostics::from(io_diag(&e)))?;
    let targets = located.creation_targets(&snap.profiles, &snap.world);
    let (clusters, secrets) = existing_at(client, &targets)
        .await
        .map_err(|e| Diagnostics::from(io_diag(&e)))?;
    snap.world.add_foreign(ledger, &clusters, &secrets);
    Ok(snap)
}

/// What [`read_inventory`] returns: the ClusterProfiles in scope, those that do not decode, and the credential
/// sources.
pub type InventoryReads = (
    Vec<ClusterProfile>,
    Vec<io::Undecodable>,
    credentials::CredentialReads,
);

/// Reads the inventory a plan of `spec` needs, whatever the bridge owns: the ClusterProfiles of its namespaces
/// and the credential sources (labelled Secrets, consumer namespaces), concurrently. What it reads depends only on
/// `spec.selection.namespaces`, `spec.credentials` and the `inventory` connection.
pub async fn read_inventory(
    inventory: &Client,
    spec: &BridgeSpec,
) -> Result<InventoryReads, IoError> {
    let (profiles, undecodable) =
        io::list_tolerant::<ClusterProfile>(inventory, &spec.selection.namespaces, None).await?;
    let profile_keys: Vec<String> = profiles.iter().map(|p| p.key()).collect();
    let sources = credentials::read_sources(inventory, &spec.credentials, &profile_keys).await?;
    Ok((profiles, undecodable, sources))
}

/// Up to this many objects to create are checked one GET each; more, with metadata LISTs of their namespaces.
const COLLISION_GETS: usize = 64;

/// The metadata of objects that already exist where the plan would create SveltosClusters and Secrets. Nothing is
/// read when nothing is to be created (a no-change plan); a few targets cost a metadata GET each, many a metadata
/// LIST per namespace involved (or one cluster-wide LIST when they span many namespaces).
async fn existing_at(
    client: &Client,
    targets: &CreationTargets,
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
    let keep = |metas: Vec<ObjectMeta>, wanted: &BTreeSet<(String, String)>| -> Vec<ObjectMeta> {
        metas
            .into_iter()
            .filter(|m| {
                wanted.contains(&(
                    m.namespace.clone().unwrap_or_default(),
                    m.name.clone().unwrap_or_default(),
                ))
            })
            .collect()
    };
    let (clusters, secrets) = futures::try_join!(
        io::list_metadata::<SveltosCluster>(client, &namespaces),
        io::list_metadata::<Secret>(client, &namespaces),
    )?;
    Ok((
        keep(clusters, &targets.clusters),
        keep(secrets, &targets.secrets),
    ))
}

/// The metadata of those of `objects` (`namespace`, `name`) that exist: one metadata GET each, concurrently.
async fn metadata_of<K>(
    client: &Client,
    objects: &BTreeSet<(String, String)>,
) -> Result<Vec<ObjectMeta>, IoError>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
    <K as kube::Resource>::DynamicType: Default,
{
    let found: Vec<Option<ObjectMeta>> = stream::iter(objects.clone())
        .map(|(ns, name)| async move { io::get_metadata_opt::<K>(client, &ns, &name).await })
        .buffer_unordered(CONCURRENCY)
        .try_collect()
        .await?;
    Ok(found.into_iter().flatten().collect())
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
            world: &self.world,
            now,
            phase,
            planned_mints,
            undecodable: &self.undecodable,
        }
    }

    /// Plans against this snapshot.
    pub fn plan(
        &self,
        spec: &BridgeSpec,
        now: jiff::Timestamp,
        phase: Phase,
        planned_mints: Option<&BTreeSet<String>>,
    ) -> Plan {
        let inputs = self.inputs(spec, now, phase, planned_mints);
        let located = locate_all(&inputs);
        plan(&inputs, &located, &self.fetched)
    }
}

/// Result of executing the writes and deletes.
pub struct Outcome {
    /// Final entries of clusters whose credential was minted during apply.
    pub minted: BTreeMap<String, ClusterEntry>,
    /// Objects written (kind, `namespace/name`, UID): recorded in the ledger.
    pub written: Vec<(Kind, String, String)>,
    /// Objects deleted (kind, `namespace/name`): forgotten by the ledger.
    pub deleted: Vec<(Kind, String)>,
    /// Errors, each naming the cluster and object.
    pub diagnostics: Diagnostics,
    /// Profile keys whose write failed. Their objects may exist all the same: the API server can carry out a
    /// write whose answer is lost (a connection reset, a restart), so the names are trusted when reading back.
    pub failed: Vec<String>,
}

impl Outcome {
    /// The ledger after this outcome, starting from what the world owned.
    pub fn ledger(&self, world: &World) -> Ledger {
        let mut l = world.ledger();
        for (kind, id, uid) in &self.written {
            l.record(*kind, id, uid);
        }
        for (kind, id) in &self.deleted {
            l.forget(*kind, id);
        }
        l
    }
}

/// Writes (Secret before SveltosCluster) and deletes (SveltosCluster, wait until it is gone, then Secret) with
/// bounded concurrency.
pub async fn execute(
    client: &Client,
    spec: &BridgeSpec,
    snap: &Snapshot,
    plan: &Plan,
    run_key: &RunKey,
) -> Outcome {
    let (writes, deletes) = actions(plan, &snap.world);
    tracing::info!(bridge = %spec.name, writes = writes.len(), deletes = deletes.len(), "applying bridge changes");
    let write_results: Vec<(String, Result<Written, Diagnostic>)> = stream::iter(writes)
        .map(|w| async move {
            (
                w.key.clone(),
                write_one(client, spec, snap, w, run_key).await,
            )
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let mut out = deregister(client, &snap.world, deletes, spec.deletion_timeout).await;
    for (key, r) in write_results {
        match r {
            Ok(w) => {
                if let Some((k, e)) = w.minted {
                    out.minted.insert(k, e);
                }
                out.written.extend(w.objects);
            }
            Err(d) => {
                out.diagnostics.push(d);
                out.failed.push(key);
            }
        }
    }
    out
}

/// What one write produced.
struct Written {
    minted: Option<(String, ClusterEntry)>,
    objects: Vec<(Kind, String, String)>,
}

fn written_id<K: kube::Resource>(obj: &K) -> (String, String) {
    let m = obj.meta();
    (
        format!(
            "{}/{}",
            m.namespace.as_deref().unwrap_or_default(),
            m.name.as_deref().unwrap_or_default()
        ),
        m.uid.clone().unwrap_or_default(),
    )
}

/// Sets `obj`'s [`MARK_ANNOTATION`] for this run (see `crate::bridge::ownership::RunKey`).
fn marked<K: kube::Resource>(mut obj: K, kind: Kind, run_key: &RunKey) -> K {
    let m = obj.meta_mut();
    let id = format!(
        "{}/{}",
        m.namespace.as_deref().unwrap_or_default(),
        m.name.as_deref().unwrap_or_default()
    );
    m.annotations
        .get_or_insert_with(Default::default)
        .insert(MARK_ANNOTATION.to_string(), run_key.mark(kind, &id));
    obj
}

async fn write_one(
    client: &Client,
    spec: &BridgeSpec,
    snap: &Snapshot,
    w: Write,
    run_key: &RunKey,
) -> Result<Written, Diagnostic> {
    let cluster_err = |e: IoError| {
        Diagnostic::error(
            format!("Cannot bridge ClusterProfile {}", w.key),
            format!("{e}. Nothing else was changed for this cluster; run apply again to converge."),
        )
    };
    let mut secret = w.secret.clone();
    let mut minted = None;
    if let Some(inv) = &w.exec {
        let (s, entry) = mint(spec, snap, &w, inv).await?;
        secret = s;
        minted = Some((w.key.clone(), entry));
    }
    let mut objects = Vec::new();
    let secret = secret.map(|s| marked(s, Kind::Secret, run_key));
    let sveltos_cluster = w
        .sveltos_cluster
        .clone()
        .map(|sc| marked(sc, Kind::SveltosCluster, run_key));
    if let Some(s) = &secret {
        if w.adopt_secret {
            io::take_ownership(client, s).await.map_err(cluster_err)?;
        }
        let (id, uid) = written_id(&io::apply(client, s).await.map_err(cluster_err)?);
        objects.push((Kind::Secret, id, uid));
    }
    if let Some(sc) = &sveltos_cluster {
        if w.adopt_sveltos_cluster {
            io::take_ownership(client, sc).await.map_err(cluster_err)?;
        }
        let (id, uid) = written_id(&io::apply(client, sc).await.map_err(cluster_err)?);
        objects.push((Kind::SveltosCluster, id, uid));
    }
    Ok(Written { minted, objects })
}

/// Runs the exec plugin of one cluster and builds its Secret and entry.
async fn mint(
    spec: &BridgeSpec,
    snap: &Snapshot,
    w: &Write,
    inv: &crate::bridge::exec::ExecInvocation,
) -> Result<(Option<Secret>, ClusterEntry), Diagnostic> {
    let profile = snap
        .profiles
        .iter()
        .find(|p| p.key() == w.key)
        .ok_or_else(|| {
            Diagnostic::error(
                format!("ClusterProfile {} vanished during apply", w.key),
                "Run plan again.",
            )
        })?;
    let cluster = access_providers(profile)
        .into_iter()
        .find(|a| a.name == inv.provider)
        .and_then(|a| a.cluster.clone())
        .ok_or_else(|| {
            Diagnostic::error(
                format!(
                    "Access provider {} of ClusterProfile {} vanished",
                    inv.provider, w.key
                ),
                "Run plan again.",
            )
        })?;
    let cred = run_exec(inv).await.map_err(|e| {
        Diagnostic::error(
            format!("Cannot mint credentials for ClusterProfile {}", w.key),
            e.to_string(),
        )
    })?;
    let bytes = static_kubeconfig(&cluster, &cred).map_err(|e| {
        Diagnostic::error(
            format!("Cannot mint credentials for ClusterProfile {}", w.key),
            format!("The access provider's cluster entry cannot be written as a kubeconfig: {e}."),
        )
    })?;
    let source = crate::bridge::credentials::CredentialSource::Exec {
        provider: inv.provider.clone(),
    };
    let d = desired(
        spec,
        profile,
        &source,
        &Material::Bytes {
            bytes,
            expires_at: cred.expiration_timestamp.clone(),
            config_sha256: Some(invocation_sha256(inv)),
        },
        w.health_pause,
    );
    Ok((d.secret, d.entry))
}

/// How often deregistration checks whether a SveltosCluster is gone.
const GONE_POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// Deregisters clusters in Sveltos' order, many at once: delete the SveltosCluster (only if it still has the
/// UID the bridge recorded), wait until it is gone (Sveltos' finalizers withdraw add-ons with the kubeconfig),
/// then delete the Secret. A cluster still present after `timeout` is an error naming it; its Secret is kept,
/// and the next apply or destroy resumes.
pub async fn deregister(
    client: &Client,
    world: &World,
    deletes: Vec<Delete>,
    timeout: std::time::Duration,
) -> Outcome {
    let results: Vec<Result<Vec<(Kind, String)>, Diagnostic>> = stream::iter(deletes)
        .map(|d| delete_one(client, world, d, timeout))
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let mut out = Outcome {
        minted: BTreeMap::new(),
        written: Vec::new(),
        deleted: Vec::new(),
        diagnostics: Diagnostics::new(),
        failed: Vec::new(),
    };
    for r in results {
        match r {
            Ok(gone) => out.deleted.extend(gone),
            Err(d) => out.diagnostics.push(d),
        }
    }
    out
}

async fn delete_one(
    client: &Client,
    world: &World,
    d: Delete,
    timeout: std::time::Duration,
) -> Result<Vec<(Kind, String)>, Diagnostic> {
    let err = |e: IoError| {
        Diagnostic::error(
            format!("Cannot remove the bridged cluster {}", d.key),
            format!("{e}. Run apply again to finish removing it."),
        )
    };
    let owned = world.owned.get(&d.key);
    let mut gone = Vec::new();
    if let Some((ns, name)) = &d.sveltos_cluster {
        let uid = owned
            .and_then(|o| o.sveltos_cluster.as_ref())
            .and_then(|s| s.uid.as_deref());
        let deleted = io::delete_owned::<SveltosCluster>(client, ns, name, uid)
            .await
            .map_err(err)?;
        // Only a SveltosCluster the delete left terminating is waited for: one the API server removed at once is
        // gone already (no read needed).
        if deleted == io::Deleted::Terminating {
            let deadline = tokio::time::Instant::now() + timeout;
            loop {
                let now = io::get_metadata_opt::<SveltosCluster>(client, ns, name)
                    .await
                    .map_err(err)?;
                if now.is_none_or(|m| m.uid.as_deref() != uid && uid.is_some()) {
                    break;
                }
                if tokio::time::Instant::now() >= deadline {
                    return Err(Diagnostic::error(
                        format!("SveltosCluster {ns}/{name} is still being deleted"),
                        format!(
                            "ClusterProfile {}: the SveltosCluster was asked to go but still exists after                              deletion_timeout ({}s), most likely because Sveltos' finalizers are still withdrawing                              add-ons. Its kubeconfig Secret was kept so that Sveltos can finish; run apply (or                              destroy) again to resume.",
                            d.key,
                            timeout.as_secs()
                        ),
                    ));
                }
                tokio::time::sleep(GONE_POLL).await;
            }
        }
        gone.push((Kind::SveltosCluster, format!("{ns}/{name}")));
    }
    if let Some((ns, name)) = &d.secret {
        let uid = owned
            .and_then(|o| o.secret.as_ref())
            .and_then(|s| s.uid.as_deref());
        io::delete_owned::<Secret>(client, ns, name, uid)
            .await
            .map_err(err)?;
        gone.push((Kind::Secret, format!("{ns}/{name}")));
    }
    Ok(gone)
}

/// Deletes everything this bridge owns (destroy), whatever the inventory looks like: SveltosClusters first,
/// then, once each is gone, its Secret. Returns the ledger of what is left.
pub async fn delete_all(
    client: &Client,
    bridge: &str,
    ledger: &Ledger,
    timeout: std::time::Duration,
) -> Result<(), (Diagnostics, Ledger)> {
    let world = read_owned(client, bridge, ledger)
        .await
        .map_err(|e| (Diagnostics::from(io_diag(&e)), ledger.clone()))?;
    // Against an empty plan (made for apply: nothing to write), every owned cluster is a delete.
    let empty = Plan {
        for_apply: true,
        ..Plan::default()
    };
    let (_, deletes) = actions(&empty, &world);
    let out = deregister(client, &world, deletes, timeout).await;
    if out.diagnostics.has_errors() {
        let left = out.ledger(&world);
        Err((out.diagnostics, left))
    } else {
        Ok(())
    }
}
