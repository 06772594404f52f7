//! The IO side of the bridge resource: read the inventory and what exists with a constant number of paginated
//! LISTs, then execute the writes and deletes the pure core decided on.

use std::collections::{BTreeMap, BTreeSet};

use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::{
    api::core::v1::{Namespace, Secret},
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kube::{Api, Client};

use crate::{
    api::{ClusterProfile, SveltosCluster, keys},
    bridge::{
        BridgeSpec,
        credentials::access_providers,
        desired::{ClusterEntry, Material, desired},
        exec::{ProvidersFile, static_kubeconfig},
        observed::World,
        plan::{
            CreationTargets, Delete, Inputs, Plan, Problem, Severity, Step, Write, actions,
            invocation_sha256, locate_all, plan,
        },
    },
    k8s::{
        exec::run as run_exec,
        io::{self, IoError},
    },
    tfplugin::{AttributePath, Diagnostic, Diagnostics},
};

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
}

/// A Kubernetes error as a diagnostic.
pub fn io_diag(e: &IoError) -> Diagnostic {
    Diagnostic::error(
        format!("Cannot {} {}", e.action, e.object),
        e.message.clone(),
    )
}

/// A planning problem as a diagnostic with its attribute path.
pub fn problem_diag(p: &Problem) -> Diagnostic {
    let mut path: Option<AttributePath> = None;
    for step in &p.path {
        path = Some(match (path, step) {
            (None, Step::Attr(a)) => AttributePath::attr(*a),
            (None, Step::Key(k)) => AttributePath::root().then_key(k),
            (Some(p), Step::Attr(a)) => p.then_attr(*a),
            (Some(p), Step::Key(k)) => p.then_key(k),
        });
    }
    let d = match p.severity {
        Severity::Error => Diagnostic::error(&p.summary, &p.detail),
        Severity::Warning => Diagnostic::warning(&p.summary, &p.detail),
    };
    match path {
        Some(path) => d.with_attribute(path),
        None => d,
    }
}

fn owner_selector(bridge: &str) -> String {
    format!("{}={bridge}", keys::BRIDGE_LABEL)
}

/// What this bridge owns (2 LISTs, label-selected, cluster-wide).
pub async fn read_owned(client: &Client, bridge: &str) -> Result<World, IoError> {
    let sel = owner_selector(bridge);
    let (scs, secrets) = futures::try_join!(
        io::list::<SveltosCluster>(client, &[], Some(&sel)),
        io::list::<Secret>(client, &[], Some(&sel)),
    )?;
    Ok(World::build(bridge, &scs, &secrets))
}

/// Reads the inventory and what exists: four paginated LISTs (profiles, labelled credential Secrets, and the
/// SveltosClusters and Secrets this bridge owns), one GET per Secret named by a `kubeconfig-secretreader`
/// provider, and a collision check of the objects the plan would create ([`existing_at`]).
pub async fn snapshot(client: &Client, spec: &BridgeSpec) -> Result<Snapshot, Diagnostics> {
    let mut diags = Diagnostics::new();
    let providers = match &spec.credentials.exec_providers_file {
        None => None,
        Some(path) => match std::fs::read(path) {
            Ok(bytes) => match ProvidersFile::parse(&bytes) {
                Ok(f) => Some(f),
                Err(e) => {
                    diags.push(
                        Diagnostic::error("Invalid exec providers file", format!("{path}: {e}"))
                            .with_attribute(
                                AttributePath::attr("credentials").then_attr("exec_providers_file"),
                            ),
                    );
                    return Err(diags);
                }
            },
            Err(e) => {
                diags.push(
                    Diagnostic::error(
                        "Cannot read the exec providers file",
                        format!("{path}: {e}. Check the path (relative paths are resolved from the working directory)."),
                    )
                    .with_attribute(AttributePath::attr("credentials").then_attr("exec_providers_file")),
                );
                return Err(diags);
            }
        },
    };
    let ns = &spec.selection.namespaces;
    let owner = owner_selector(&spec.name);
    let secret_label = spec.credentials.secret_label.clone();
    let lists = async {
        futures::try_join!(
            io::list::<ClusterProfile>(client, ns, None),
            io::list::<Secret>(client, &[], Some(&secret_label)),
            io::list::<SveltosCluster>(client, &[], Some(&owner)),
            io::list::<Secret>(client, &[], Some(&owner)),
        )
    };
    let (profiles, credential_secrets, scs, owned_secrets) =
        lists.await.map_err(|e| Diagnostics::from(io_diag(&e)))?;
    let namespace_labels = if spec.credentials.consumer.is_some() {
        list_namespace_labels(client)
            .await
            .map_err(|e| Diagnostics::from(io_diag(&e)))?
    } else {
        BTreeMap::new()
    };
    let world = World::build(&spec.name, &scs, &owned_secrets);
    drop((scs, owned_secrets));
    let mut snap = Snapshot {
        profiles,
        credential_secrets,
        namespace_labels,
        providers,
        world,
        fetched: BTreeMap::new(),
    };
    let located = locate_all(&snap.inputs(spec, jiff::Timestamp::now()));
    for (ns, name) in located.secrets_to_read() {
        let s = io::get_opt::<Secret>(client, &ns, &name)
            .await
            .map_err(|e| Diagnostics::from(io_diag(&e)))?;
        snap.fetched.insert((ns, name), s);
    }
    let targets = located.creation_targets(&snap.profiles, &snap.world);
    let (clusters, secrets) = existing_at(client, &targets)
        .await
        .map_err(|e| Diagnostics::from(io_diag(&e)))?;
    snap.world.add_foreign(&spec.name, &clusters, &secrets);
    Ok(snap)
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

async fn list_namespace_labels(
    client: &Client,
) -> Result<BTreeMap<String, BTreeMap<String, String>>, IoError> {
    let api: Api<Namespace> = Api::all(client.clone());
    let api = &api;
    let metas = io::paginate("Namespace", "in the cluster", None, |lp| async move {
        api.list_metadata(&lp).await
    })
    .await?;
    Ok(metas
        .into_iter()
        .map(|n| {
            (
                n.metadata.name.unwrap_or_default(),
                n.metadata.labels.unwrap_or_default(),
            )
        })
        .collect())
}

impl Snapshot {
    /// The pure core's view of this snapshot.
    pub fn inputs<'a>(&'a self, spec: &'a BridgeSpec, now: jiff::Timestamp) -> Inputs<'a> {
        Inputs {
            spec,
            profiles: &self.profiles,
            credential_secrets: &self.credential_secrets,
            namespace_labels: &self.namespace_labels,
            providers: self.providers.as_ref(),
            world: &self.world,
            now,
        }
    }

    /// Plans against this snapshot.
    pub fn plan(&self, spec: &BridgeSpec, now: jiff::Timestamp) -> Plan {
        let inputs = self.inputs(spec, now);
        let located = locate_all(&inputs);
        plan(&inputs, &located, &self.fetched)
    }
}

/// Result of executing the writes and deletes.
pub struct Outcome {
    /// Final entries of clusters whose credential was minted during apply.
    pub minted: BTreeMap<String, ClusterEntry>,
    /// Errors, each naming the cluster and object.
    pub diagnostics: Diagnostics,
}

/// Writes (Secret before SveltosCluster) and deletes (SveltosCluster before Secret) with bounded concurrency.
pub async fn execute(client: &Client, spec: &BridgeSpec, snap: &Snapshot, plan: &Plan) -> Outcome {
    let (writes, deletes) = actions(plan, &snap.world);
    tracing::info!(bridge = %spec.name, writes = writes.len(), deletes = deletes.len(), "applying bridge changes");
    let write_results: Vec<Result<Option<(String, ClusterEntry)>, Diagnostic>> =
        stream::iter(writes)
            .map(|w| write_one(client, spec, snap, w))
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
    let delete_results: Vec<Result<(), Diagnostic>> = stream::iter(deletes)
        .map(|d| delete_one(client, d))
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let mut out = Outcome {
        minted: BTreeMap::new(),
        diagnostics: Diagnostics::new(),
    };
    for r in write_results {
        match r {
            Ok(Some((k, e))) => {
                out.minted.insert(k, e);
            }
            Ok(None) => {}
            Err(d) => out.diagnostics.push(d),
        }
    }
    for r in delete_results {
        if let Err(d) = r {
            out.diagnostics.push(d);
        }
    }
    out
}

async fn write_one(
    client: &Client,
    spec: &BridgeSpec,
    snap: &Snapshot,
    w: Write,
) -> Result<Option<(String, ClusterEntry)>, Diagnostic> {
    let cluster_err = |e: IoError| {
        Diagnostic::error(
            format!("Cannot bridge ClusterProfile {}", w.key),
            format!("{e}. Nothing else was changed for this cluster; run apply again to converge."),
        )
    };
    let mut secret = w.secret.clone();
    let mut minted = None;
    if let Some(inv) = &w.exec {
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
        let bytes = static_kubeconfig(
            profile.metadata.name.as_deref().unwrap_or_default(),
            &cluster,
            &cred,
        );
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
        );
        secret = d.secret;
        minted = Some((w.key.clone(), d.entry));
    }
    if let Some(s) = &secret {
        if w.adopt_secret {
            io::take_ownership(client, s).await.map_err(cluster_err)?;
        }
        io::apply(client, s).await.map_err(cluster_err)?;
    }
    if let Some(sc) = &w.sveltos_cluster {
        if w.adopt_sveltos_cluster {
            io::take_ownership(client, sc).await.map_err(cluster_err)?;
        }
        io::apply(client, sc).await.map_err(cluster_err)?;
    }
    Ok(minted)
}

async fn delete_one(client: &Client, d: Delete) -> Result<(), Diagnostic> {
    let err = |e: IoError| {
        Diagnostic::error(
            format!("Cannot remove the bridged cluster {}", d.key),
            format!("{e}. Run apply again to finish removing it."),
        )
    };
    if let Some((ns, name)) = &d.sveltos_cluster {
        io::delete::<SveltosCluster>(client, ns, name)
            .await
            .map_err(err)?;
    }
    if let Some((ns, name)) = &d.secret {
        io::delete::<Secret>(client, ns, name).await.map_err(err)?;
    }
    Ok(())
}

/// Deletes everything this bridge owns (destroy): SveltosClusters first, then Secrets.
pub async fn delete_all(client: &Client, bridge: &str) -> Result<(), Diagnostics> {
    let world = read_owned(client, bridge)
        .await
        .map_err(|e| Diagnostics::from(io_diag(&e)))?;
    // Against an empty plan, every owned cluster is a delete (SveltosCluster first, then Secret).
    let (_, deletes) = actions(&Plan::default(), &world);
    let results: Vec<Result<(), Diagnostic>> = stream::iter(deletes)
        .map(|d| delete_one(client, d))
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let mut diags = Diagnostics::new();
    diags.extend(results.into_iter().filter_map(Result::err));
    if diags.has_errors() {
        Err(diags)
    } else {
        Ok(())
    }
}
