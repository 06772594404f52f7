//! `sveltos_cluster_inventory_bridge`: one resource that registers many ClusterProfiles as SveltosClusters.
//!
//! Read reports what this bridge owns; plan reports what the inventory asks for now; the difference is the
//! plan. Apply writes exactly what was planned or stops with "changed since plan".

mod crud;
pub mod model;
mod prefetch;
mod timeouts;

use std::sync::Arc;

use crate::bridge::{
    BridgeSpec,
    observed::World,
    ownership::DEFAULT_CLAIM_NAMESPACE,
    ownership::{
        Claim, IMPORTED, KEPT_RUN_KEYS, Kind, Ledger, Run, RunKey, check_claim, claim_name,
    },
    plan::{Phase, Severity, isolate_drift},
    sha256_hex,
};
use crate::k8s::claim as k8s_claim;
use crate::{
    bridge::desired::ClusterEntry,
    provider::state::{NotReady, ProviderState},
    tfplugin::{
        ApplyRequest, ApplyResponse, AttributePath, Diagnostic, Diagnostics, ImportRequest,
        ImportResponse, ImportedResource, PlanRequest, PlanResponse, ReadRequest, ReadResponse,
        Resource, Schema, Type, Value,
        schema::{Attribute, Block, NestedBlock, Nesting},
    },
};
use crud::{delete_all, execute, io_diag, problem_diag, read_owned, snapshot};
use model::{BridgeConfig, clusters_value, entries_from_value};

/// Resource type name.
pub const TYPE_NAME: &str = "sveltos_cluster_inventory_bridge";

/// The resource.
pub struct ClusterInventoryBridge {
    state: Arc<ProviderState>,
    /// What this provider process saw of each bridge (by name): see [`PlanMemo`].
    memo: std::sync::Mutex<std::collections::HashMap<String, PlanMemo>>,
}

/// What one provider process saw of a bridge, to tell Terraform's first plan from the plan it makes again right
/// before apply (the protocol does not say which is which). Terraform refreshes (ReadResource) before the first
/// plan, in the same process; the re-plan before apply runs in the process of the apply walk, without a refresh
/// (for `apply` as for a saved plan). See `crate::bridge::plan::Phase`.
#[derive(Debug, Default)]
struct PlanMemo {
    refreshed: bool,
    planned: bool,
    /// The instance id of the state refreshed last: Terraform refreshes a tainted bridge, then plans its
    /// replacement with no prior state; this tells that case from another state using the name.
    refreshed_instance: Option<String>,
    /// Reads started ahead for the next refresh or plan of this bridge (see [`prefetch`]).
    pending: prefetch::Pending,
}

impl ClusterInventoryBridge {
    /// [`Resource::apply`] once the claim is this run's: reads, plans, writes (each object marked with
    /// `run_key`) and builds the new state.
    #[allow(clippy::too_many_arguments)]
    async fn apply_claimed(
        &self,
        req: &mut ApplyRequest,
        client: &kube::Client,
        spec: &BridgeSpec,
        limit: std::time::Duration,
        ledger: Ledger,
        planned: std::collections::BTreeMap<String, Option<ClusterEntry>>,
        run_key: &RunKey,
    ) -> ApplyResponse {
        let failed = |req: &ApplyRequest, diagnostics: Diagnostics| ApplyResponse {
            keep_prior_state: true,
            private: req.planned_private.clone(),
            diagnostics,
            ..Default::default()
        };
        let inventory = match self.inventory_for_apply(&req.config) {
            Ok(c) => c,
            Err(d) => return failed(req, d),
        };
        let snap = match snapshot(client, &inventory, spec, &ledger, None, None).await {
            Ok(s) => s,
            Err(d) => return failed(req, d),
        };
        let (plan, mut diagnostics) = match plan_at_apply(&snap, spec, planned) {
            Ok(v) => v,
            Err(d) => return failed(req, d),
        };
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
            let trusted = trusting_targets(snap.world.ledger(), plan.desired.values());
            drop((plan, snap));
            return self
                .read_back(client, base, &spec.name, &trusted, diagnostics)
                .await;
        };
        let ledger = outcome.ledger(&snap.world);
        // A write, a mint or a deregistration that failed for one cluster is that cluster's problem (unless
        // `strict`): a warning names it, every other cluster is recorded as planned, and the bridge is not marked
        // failed (Terraform would taint a new one). The state records the plan for it; the next refresh reads what
        // exists and the next plan shows what is left to do.
        let per_cluster = !spec.strict && !diagnostics.has_errors() && !outcome.failed.is_empty();
        if per_cluster {
            let failed: std::collections::BTreeSet<String> =
                outcome.failed.iter().cloned().collect();
            let ledger =
                trusting_targets(ledger, failed.iter().filter_map(|k| plan.desired.get(k)));
            diagnostics.extend(outcome.diagnostics.into_vec().into_iter().map(|mut d| {
                if d.is_error() {
                    d.severity = crate::tfplugin::Severity::Warning;
                    d.detail.push_str(
                        " Every other cluster was applied; strict = true makes this an error.",
                    );
                }
                d
            }));
            drop(snap);
            let mut entries = plan.into_entries();
            entries.extend(outcome.minted);
            for key in &failed {
                if let Some(e) = entries.get_mut(key)
                    && e.credential_pending
                {
                    // Minting failed: known values for what the plan left unknown.
                    e.credential_pending = false;
                    e.kubeconfig_sha256 = None;
                    e.credential_expires_at = None;
                }
            }
            return self.applied(req, spec, entries, ledger, diagnostics);
        }
        if outcome.diagnostics.has_errors() || diagnostics.has_errors() {
            diagnostics.extend(outcome.diagnostics.into_vec());
            // A failed write may have been carried out with its answer lost: its objects, if they exist, are
            // this apply's (the snapshot found those names free or owned) and are recorded when read back.
            let ledger = trusting_targets(
                ledger,
                outcome.failed.iter().filter_map(|k| plan.desired.get(k)),
            );
            drop((plan, snap));
            return self
                .read_back(client, base, &spec.name, &ledger, diagnostics)
                .await;
        }
        // The inventory is done with before the new state is built: its entries are taken out of the plan.
        drop((snap, base));
        let mut entries = plan.into_entries();
        entries.extend(outcome.minted);
        self.applied(req, spec, entries, ledger, diagnostics)
    }

    /// The answer of an apply that wrote what it planned: the planned state with `entries`, and the ledger.
    fn applied(
        &self,
        req: &mut ApplyRequest,
        spec: &BridgeSpec,
        entries: std::collections::BTreeMap<String, ClusterEntry>,
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
            private: ledger
                .with_reads(Some(prefetch::reads_sha256(spec)))
                .to_private(),
            diagnostics,
            keep_prior_state: false,
        }
    }

    /// A bridge resource using the provider's shared state.
    pub fn new(state: Arc<ProviderState>) -> Self {
        Self {
            state,
            memo: Default::default(),
        }
    }

    fn memo<T>(&self, bridge: &str, f: impl FnOnce(&mut PlanMemo) -> T) -> T {
        let mut m = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        f(m.entry(bridge.to_string()).or_default())
    }
}

/// The type of one `clusters` entry.
pub fn cluster_entry_type() -> Type {
    Type::object([
        ("sveltos_cluster", Type::String),
        ("secret", Type::String),
        ("credential_source", Type::String),
        ("kubeconfig_sha256", Type::String),
        ("credential_expires_at", Type::String),
        ("labels", Type::map(Type::String)),
        ("config_sha256", Type::String),
    ])
}

/// The attributes of `token_renewal` (the block, and the object in `overrides`).
fn token_renewal_attributes() -> Vec<Attribute> {
    let md = |a: Attribute, d: &str| a.markdown_description(d);
    vec![
        md(
            Attribute::string("interval").required(),
            "`renewTokenRequestInterval`: how often Sveltos renews the token (Go duration, e.g. `1h`).",
        ),
        md(
            Attribute::string("token_duration").optional(),
            "`tokenDuration`: how long each token is valid (Go duration; default: the interval). Longer than the \
             interval leaves a buffer for connectivity loss.",
        ),
        md(
            Attribute::string("service_account").optional(),
            "`saNamespace/saName` of the ServiceAccount on the member cluster to mint tokens for (default: deduced \
             by Sveltos from the kubeconfig).",
        ),
    ]
}

/// The resource schema.
pub fn schema() -> Schema {
    Schema::new(0)
        .markdown_description(
            "Registers the ClusterProfiles of a [Cluster Inventory](https://github.com/kubernetes/enhancements/tree/master/keps/sig-multicluster/4322-cluster-inventory) \
             as Sveltos `SveltosCluster`s: for profile `ns/name` it writes SveltosCluster `ns/name` and Secret \
             `ns/name-sveltos-kubeconfig` (key `kubeconfig`). One resource manages many clusters; `plan` shows each \
             added, changed or removed cluster. State holds identities and hashes only, never credentials.",
        )
        .attribute(md(Attribute::string("id").computed(), "The bridge name."))
        .attribute(md(
            Attribute::string("name").required(),
            "The bridge's identity, written as the value of the `sveltos.clusterinventory.io/bridge` label on every \
             object it creates. Changing it replaces the bridge.",
        ))
        .attribute(md(
            Attribute::list("namespaces", Type::String).optional(),
            "Only ClusterProfiles in these namespaces (default: all).",
        ))
        .attribute(md(
            Attribute::list("names", Type::String).optional(),
            "Only ClusterProfiles with these names (`name` or `namespace/name`).",
        ))
        .attribute(md(
            Attribute::string("label_selector").optional(),
            "Only ClusterProfiles matching this label selector (`env=prod,tier in (a,b)`).",
        ))
        .attribute(md(
            Attribute::string("cluster_manager").optional(),
            "Only ClusterProfiles whose `spec.clusterManager.name` is this.",
        ))
        .attribute(md(
            Attribute::bool("require_healthy").optional(),
            "Register only ClusterProfiles whose `ControlPlaneHealthy` condition is `True` (default false). What \
             happens to an already bridged cluster whose profile turns unhealthy is set by `unhealthy`.",
        ))
        .attribute(md(
            Attribute::bool("require_credentials").optional(),
            "Fail the plan when a selected ClusterProfile that is not bridged yet has no usable credentials, \
             instead of skipping it with a warning (default false). An already bridged cluster whose credentials \
             became unusable is always kept as it is.",
        ))
        .attribute(md(
            Attribute::map("extra_labels", Type::String).optional(),
            "Labels added to every SveltosCluster (on top of the ClusterProfile's labels).",
        ))
        .attribute(md(
            Attribute::map("extra_annotations", Type::String).optional(),
            "Annotations added to every SveltosCluster.",
        ))
        .attribute(md(Attribute::bool("paused").optional(), "`spec.paused` of every SveltosCluster."))
        .attribute(md(
            Attribute::number("consecutive_failure_threshold").optional(),
            "`spec.consecutiveFailureThreshold` of every SveltosCluster.",
        ))
        .attribute(md(
            Attribute::string("claim_namespace").optional(),
            "Namespace of the bridge's claim, a ConfigMap `sveltos-bridge-<name>` holding this state's instance id and \
             the bridge's configuration (for `import`). A second Terraform state that uses the same `name` on the same \
             management cluster fails at plan instead of deleting this bridge's clusters. Default `default`.",
        ))
        .attribute(md(
            Attribute::string("instance_id").computed(),
            "Random id of this bridge instance, also held by its claim.",
        ))
        .attribute(md(
            Attribute::bool("strict").optional(),
            "Make every problem confined to one cluster (two candidate Secrets, no usable or a refused \
             credential, a name collision, ...) an error that stops the plan. Default false: that cluster is kept \
             exactly as it is (or not registered), every other cluster is planned and applied, and one warning \
             per cause lists the clusters concerned.",
        ))
        .attribute(md(
            Attribute::string("unhealthy").optional(),
            "With `require_healthy`: what happens to an already bridged cluster whose ClusterProfile is no longer \
             healthy. `keep` (default) leaves it registered as it is, `pause` sets `spec.paused = true` on its \
             SveltosCluster until it is healthy again, `remove` deregisters it. New clusters are registered only \
             when healthy.",
        ))
        .attribute(md(
            Attribute::number("max_removals").optional(),
            "A plan that would deregister more clusters than this fails, naming the count and the first clusters; \
             nothing is written. Destroy is not limited. Every plan that deregisters clusters carries a warning \
             listing them.",
        ))
        .attribute(md(
            Attribute::string("deletion_timeout").optional(),
            "How long deregistration waits for a SveltosCluster to be gone (Sveltos' finalizers withdraw add-ons \
             with its kubeconfig) before it deletes the kubeconfig Secret (Go duration, default `5m`). On timeout \
             the apply fails naming the cluster, the Secret is kept, and the next apply resumes.",
        ))
        .attribute(md(
            Attribute::bool("adopt").optional(),
            "Take over existing SveltosClusters and Secrets with the same names that this bridge did not create \
             (default false: such a cluster is left alone, nothing is written to those objects, and a warning \
             names them; with `strict = true` it is an error).",
        ))
        .attribute(overrides_attribute())
        .attribute(md(
            Attribute::map("clusters", cluster_entry_type()).computed(),
            "The bridged clusters keyed `namespace/name`: `sveltos_cluster` and `secret` (`namespace/name`), \
             `credential_source`, `kubeconfig_sha256`, `credential_expires_at`, `labels` and `config_sha256` \
             (hash of the managed SveltosCluster fields). Hashes only, never credentials.",
        ))
        .block(crate::provider::blocks::credentials::block())
        .block(crate::provider::blocks::inventory::resource_block())
        .block(copy_labels_block())
        .block(timeouts::block())
        .block(token_renewal_block())
        .block(active_window_block())
}

/// Adds the `markdown_description` to an attribute.
fn md(a: Attribute, d: &str) -> Attribute {
    a.markdown_description(d)
}

/// The `from` and `to` attributes of an active window.
fn window_attributes() -> [Attribute; 2] {
    [
        md(
            Attribute::string("from").required(),
            "Cron schedule opening the window.",
        ),
        md(
            Attribute::string("to").required(),
            "Cron schedule closing the window.",
        ),
    ]
}

/// The `overrides` attribute: per-cluster settings.
fn overrides_attribute() -> Attribute {
    md(
        Attribute::nested(
            "overrides",
            Nesting::Map,
            [
                md(Attribute::map("extra_labels", Type::String).optional(), "Extra labels for this cluster."),
                md(
                    Attribute::map("extra_annotations", Type::String).optional(),
                    "Extra annotations for this cluster.",
                ),
                md(Attribute::bool("paused").optional(), "`spec.paused` for this cluster."),
                md(Attribute::bool("skip").optional(), "Do not bridge this cluster."),
                md(
                    Attribute::nested("token_renewal", Nesting::Single, token_renewal_attributes()).optional(),
                    "Sveltos-side credential renewal for this cluster (wins over the bridge-wide `token_renewal`).",
                ),
                md(
                    Attribute::nested("active_window", Nesting::Single, window_attributes()).optional(),
                    "`spec.activeWindow` for this cluster.",
                ),
                md(
                    Attribute::number("consecutive_failure_threshold").optional(),
                    "`spec.consecutiveFailureThreshold` for this cluster.",
                ),
            ],
        )
        .optional(),
        "Per-cluster settings keyed `namespace/name` of the ClusterProfile.",
    )
}

/// The `copy_labels` block.
fn copy_labels_block() -> NestedBlock {
    NestedBlock::single(
        "copy_labels",
        Block::new()
            .markdown_description(
                "Which ClusterProfile labels are copied onto SveltosClusters. Default: every label except those \
                 under `projectsveltos.io/` and `sveltos.clusterinventory.io/` (whoever labels a ClusterProfile \
                 would otherwise choose which Sveltos profiles, add-ons and Secrets the cluster receives). \
                 `extra_labels` always win.",
            )
            .attribute(md(
                Attribute::list("include", Type::String).optional(),
                "Copy only labels whose key matches one of these (a key, or a prefix ending in `*`). Default: all.",
            ))
            .attribute(md(
                Attribute::list("exclude", Type::String).optional(),
                "Never copy labels whose key matches one of these (a key, or a prefix ending in `*`). Default \
                 `[\"projectsveltos.io/*\", \"sveltos.clusterinventory.io/*\"]`; setting it replaces the default.",
            )),
    )
}

/// The bridge-wide `token_renewal` block.
fn token_renewal_block() -> NestedBlock {
    let mut b = Block::new().markdown_description(
        "Let Sveltos renew every bridged cluster's credentials (`spec.tokenRequestRenewalOption`): the bridge \
         registers the cluster with the source kubeconfig, then sveltoscluster-manager mints ServiceAccount \
         tokens on the member cluster on this interval and rewrites the kubeconfig Secret. What Sveltos \
         rewrites on renewal (the Secret's data, a new key such as `re-kubeconfig`, `spec.kubeconfigKeyName`, \
         a shortened interval) never shows as drift and is never reverted; a rotated source credential still \
         shows in plan and is written (and the SveltosCluster pointed back at it). See the guide \
         \"Continuous credentials with Sveltos token renewal\".",
    );
    for a in token_renewal_attributes() {
        b = b.attribute(a);
    }
    NestedBlock::single("token_renewal", b)
}

/// The bridge-wide `active_window` block.
fn active_window_block() -> NestedBlock {
    let mut b = Block::new().markdown_description("`spec.activeWindow` of every SveltosCluster.");
    for a in window_attributes() {
        b = b.attribute(a);
    }
    NestedBlock::single("active_window", b)
}

/// A state value with every attribute null.
fn null_state() -> Value {
    let s = schema();
    let mut attrs: Vec<(String, Value)> = s
        .block
        .attributes
        .iter()
        .map(|a| (a.name.clone(), Value::Null))
        .collect();
    attrs.extend(
        s.block
            .blocks
            .iter()
            .map(|b| (b.type_name.clone(), Value::Null)),
    );
    Value::object(attrs)
}

/// Plan-time check that this state may use the bridge's name (see `crate::bridge::ownership::Claim`).
async fn check_claim_of(
    client: &kube::Client,
    spec: &BridgeSpec,
    instance: Option<&str>,
    existing: bool,
    refreshed: Option<String>,
) -> Result<Option<Claim>, Diagnostics> {
    let name = claim_name(&spec.name);
    let claim = k8s_claim::read(client, &spec.claim_namespace, &name)
        .await
        .map_err(|e| Diagnostics::from(io_diag(&e)))?;
    // A state written before claims existed has no instance id: it takes the claim over. So does a new resource
    // whose own first apply died (the claim's run never finished and its process is gone or its time is up).
    let legacy = existing && instance.is_none();
    let abandoned = !existing
        && claim
            .as_ref()
            .is_some_and(|c| c.abandoned(jiff::Timestamp::now(), k8s_claim::holder_alive));
    check_claim(
        &spec.name,
        &format!("{}/{name}", spec.claim_namespace),
        instance,
        legacy,
        claim.as_ref(),
        abandoned,
    )
    .map_err(|e| {
        let diagnostic = if instance.is_none() && refreshed.as_deref() == Some(e.other.as_str()) {
            Diagnostic::error(
                "Bridge tainted after a failed first apply",
                format!(
                    "Bridge {:?} is this state's own (instance {}), marked tainted by Terraform because its first \
                     apply failed part-way. Replacing it would deregister every cluster it registered and register \
                     them again, so nothing was planned. Run `terraform untaint` (or `tofu untaint`) with the \
                     resource's address; the next apply then resumes where the failed one stopped.",
                    e.bridge, e.other
                ),
            )
        } else {
            Diagnostic::error(
                "Bridge name already used by another state",
                format!(
                    "{e}. Two states managing one bridge name would delete each other's clusters, so nothing was \
                     written. If the bridge belongs in another state, use another name here. To move it to this \
                     state: remove it from the other state (`terraform state rm <address>` there) and run \
                     `terraform import <address> {}` here. (A first apply of this state that was interrupted needs \
                     neither: it is taken over once its run is gone, at the latest when its timeout has passed.)",
                    e.bridge
                ),
            )
        };
        Diagnostics::from(diagnostic.with_attribute(AttributePath::attr("name")))
    })?;
    Ok(claim)
}

/// What the claim gives an apply: this state's instance id, the key of this run, and every run key the claim
/// holds (with which objects of earlier runs that died are recognised).
struct ClaimedRun {
    instance: String,
    key: RunKey,
    keys: Vec<RunKey>,
    claim: Claim,
}

/// Apply-time claim: checks it again and writes it (with a new instance id for a new bridge, or the id of this
/// state's own first apply that died; the current configuration record; a new run key; this run) before any
/// other object.
async fn claim_for_apply(
    client: &kube::Client,
    spec: &BridgeSpec,
    prior: &Value,
    limit: std::time::Duration,
) -> Result<ClaimedRun, Diagnostics> {
    let mine = prior.get_attr("instance_id").as_str().map(String::from);
    let claim = check_claim_of(client, spec, mine.as_deref(), !prior.is_null(), None).await?;
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
        run: Some(Run {
            holder: k8s_claim::holder(),
            started: now.to_string(),
            until: until.to_string(),
            done: false,
            first: prior.is_null(),
        }),
    };
    write_claim(client, spec, &wanted).await?;
    Ok(ClaimedRun {
        instance,
        key,
        keys,
        claim: wanted,
    })
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
    .map_err(|e| Diagnostics::from(io_diag(&e)))
}

/// Records in the claim that the run finished (the provider is answering Terraform). A failure is a warning:
/// the run is then taken for dead once its time is up, which only matters to a state without the bridge.
async fn finish_run(
    client: &kube::Client,
    spec: &BridgeSpec,
    mut run: ClaimedRun,
) -> Option<Diagnostic> {
    // A CLI that is gone saves no state: the run stays unfinished, so that the next run of the same state, which
    // will not have this run's answer, recovers its objects.
    if !crate::tfplugin::binary::host_alive() {
        return None;
    }
    if let Some(r) = run.claim.run.as_mut() {
        r.done = true;
    }
    write_claim(client, spec, &run.claim).await.err().map(|_| {
        Diagnostic::warning(
            "The bridge's claim was not updated",
            "Recording the end of this run in the claim failed; nothing else is affected.",
        )
    })
}

/// The ownership ledger of a bridge: from its private state, or, for states written before UIDs were
/// recorded, the object names its `clusters` attribute lists.
fn ledger_of(private: &[u8], state: &Value) -> Result<Ledger, Diagnostics> {
    Ledger::from_private(private, || {
        entries_from_value(state.get_attr("clusters"))
            .into_values()
            .flatten()
            .flat_map(|e| {
                let sc = e.sveltos_cluster.map(|id| (Kind::SveltosCluster, id));
                let secret = e.secret.map(|id| (Kind::Secret, id));
                sc.into_iter().chain(secret)
            })
            .collect()
    })
    .map_err(|e| {
        Diagnostics::from(Diagnostic::error(
            "Unreadable private state",
            format!("{e}. Re-import the bridge (terraform import) to rebuild it."),
        ))
    })
}

fn with_clusters(mut state: Value, name: &str, clusters: Value) -> Value {
    state.set_attr("id", Value::string(name));
    state.set_attr("clusters", clusters);
    state
}

#[async_trait::async_trait]
impl Resource for ClusterInventoryBridge {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        schema()
    }

    async fn validate(&self, config: &Value) -> Diagnostics {
        let mut timeouts = timeouts::check(config);
        timeouts.extend(crate::provider::blocks::inventory::check(config));
        timeouts.extend(match BridgeConfig::from_value(config).to_spec() {
            Ok(_) => Vec::new(),
            Err(d) => {
                // Values not known yet are validated again at plan time.
                d.into_vec()
                    .into_iter()
                    .filter(|d| {
                        d.attribute
                            .as_ref()
                            .is_none_or(|p| attribute_known(config, p))
                    })
                    .collect::<Vec<_>>()
            }
        });
        timeouts
    }

    fn apply_unread_attributes(&self, planned_private: &[u8]) -> &'static [&'static str] {
        // Apply reads what exists and answers with what it wrote or what exists; the prior `clusters` is needed
        // only to know what a state older than the UID ledger owns (empty private data). A failure that wrote no
        // cluster, or after which what exists cannot be read, keeps the prior state whole (`keep_prior_state`).
        self.plan_unread_attributes(planned_private)
    }

    fn read_unread_attributes(&self, private: &[u8]) -> &'static [&'static str] {
        // The refresh rebuilds `clusters` from what exists; the old value is needed only to know what a state older
        // than the UID ledger owns (empty private data). A refresh that cannot read what exists keeps the current
        // state whole (`keep_current_state`).
        self.plan_unread_attributes(private)
    }

    fn plan_unread_attributes(&self, prior_private: &[u8]) -> &'static [&'static str] {
        // The plan computes `clusters` from what exists, never from the prior or proposed value, except for
        // states older than the UID ledger, whose private data is empty and whose `clusters` names what they own.
        if prior_private.is_empty() {
            &[]
        } else {
            &["clusters"]
        }
    }

    async fn plan(&self, mut req: PlanRequest) -> PlanResponse {
        if req.is_destroy() {
            // Nothing read ahead is needed: the destroy reads what exists when it runs.
            self.cancel_pending(&req.prior_state);
            return PlanResponse::planned(&req, Value::Null);
        }
        // What was read ahead for this plan (see `prefetch`): taken now, so that a plan that stops early drops it
        // and cancels its reads.
        let pending = match req.prior_state.get_attr("name").as_str() {
            Some(name) => self.memo(name, |m| std::mem::take(&mut m.pending)),
            None => prefetch::Pending::default(),
        };
        let ledger = match ledger_of(&req.prior_private, &req.prior_state) {
            Ok(l) => l,
            Err(d) => {
                let mut resp = PlanResponse::planned(&req, req.proposed_new_state.clone());
                resp.diagnostics = d;
                return resp;
            }
        };
        // The plan is computed from what the cluster holds, never from the prior or proposed `clusters` (tens of
        // megabytes for ten thousand clusters): free them before reading the inventory.
        req.prior_state.set_attr("clusters", Value::Null);
        req.proposed_new_state.set_attr("clusters", Value::Null);
        let mut planned = req.proposed_new_state.clone();
        let name_value = req.config.get_attr("name").clone();
        let mut resp = PlanResponse::planned(&req, Value::Null);
        if !req.prior_state.is_null() && req.prior_state.get_attr("name") != &name_value {
            resp.requires_replace.push(AttributePath::attr("name"));
        }
        let (spec, client, inventory) = match self.plan_inputs(&req) {
            PlanInputs::Ready(spec, client, inventory) => (*spec, client, inventory),
            PlanInputs::Unknown(deferred) => {
                planned.set_attr("id", name_value);
                planned.set_attr("clusters", Value::unknown());
                resp.planned_state = planned;
                resp.deferred = deferred;
                return resp;
            }
            PlanInputs::Failed(d) => {
                resp.diagnostics = d;
                resp.planned_state = req.proposed_new_state.clone();
                return resp;
            }
        };
        let instance = req
            .prior_state
            .get_attr("instance_id")
            .as_str()
            .map(String::from);
        let existing = !req.prior_state.is_null();
        let refreshed = self.memo(&spec.name, |m| m.refreshed_instance.clone());
        let ledger =
            match check_claim_of(&client, &spec, instance.as_deref(), existing, refreshed).await {
                Ok(claim) => ledger.with_run_keys(claim.map(|c| c.keys).unwrap_or_default()),
                Err(d) => {
                    resp.planned_state = req.proposed_new_state.clone();
                    resp.diagnostics = d;
                    return resp;
                }
            };
        planned.set_attr(
            "instance_id",
            instance.map(Value::string).unwrap_or_else(Value::unknown),
        );
        // What was read ahead for this plan: the refresh's reading of what the bridge owns, and the inventory when
        // this plan reads the same one.
        // (Read for the bridge's name in the prior state: a renamed bridge reads for itself.)
        let pending = if req.prior_state.get_attr("name").as_str() == Some(spec.name.as_str()) {
            pending
        } else {
            prefetch::Pending::default()
        };
        let prefetched = pending
            .inventory
            .and_then(|i| i.for_plan(&spec, &req.config));
        let owned = pending
            .refreshed
            .and_then(|r| r.for_plan(&req.prior_private));
        let phase = |spec: &BridgeSpec| {
            self.memo(&spec.name, |m| {
                let first = (m.refreshed || !existing) && !m.planned;
                m.planned = true;
                if first { Phase::Plan } else { Phase::Replan }
            })
        };
        let pre = (owned, prefetched);
        match planned_entries(&client, &inventory, &spec, &ledger, pre, phase).await {
            Ok((entries, diagnostics)) => {
                resp.diagnostics.extend(diagnostics);
                resp.planned_state = with_clusters(planned, &spec.name, clusters_value(&entries));
            }
            Err(d) => {
                resp.planned_state = req.proposed_new_state.clone();
                resp.diagnostics = d;
            }
        }
        resp
    }

    async fn apply(&self, mut req: ApplyRequest) -> ApplyResponse {
        // Apply reads afresh what it acts on.
        self.cancel_pending(&req.prior_state);
        self.cancel_pending(&req.planned_state);
        // No cluster was written: the prior state is kept whole (its `clusters` was left undecoded).
        let failed = |req: &ApplyRequest, diagnostics: Diagnostics| ApplyResponse {
            keep_prior_state: true,
            private: req.planned_private.clone(),
            diagnostics,
            ..Default::default()
        };
        let client = match self.state.client(Default::default()) {
            Ok(c) => c,
            Err(NotReady::Fail(d)) => return failed(&req, d.into()),
            Err(NotReady::Defer(_)) => {
                let d = Diagnostic::error(
                    "Provider configuration unknown at apply",
                    "Run apply again.",
                );
                return failed(&req, d.into());
            }
        };
        let ledger = match ledger_of(&req.planned_private, &req.prior_state) {
            Ok(l) => l,
            Err(d) => return failed(&req, d),
        };
        if req.is_delete() {
            return self.destroy(&client, req, ledger).await;
        }
        // What plan promised, as entries; the planned `clusters` value itself (tens of megabytes for ten thousand
        // clusters) is not needed again: the new state's `clusters` is built from what apply wrote.
        let planned = entries_from_value(req.planned_state.get_attr("clusters"));
        req.planned_state.set_attr("clusters", Value::Null);
        let (spec, limit) = match BridgeConfig::from_value(&req.config)
            .to_spec()
            .and_then(|s| timeouts::limit(&req.config, req.is_create()).map(|l| (s, l)))
        {
            Ok(v) => v,
            Err(d) => return failed(&req, d),
        };
        // The claim first: a second state using this name stops here, before anything is written.
        let run = match claim_for_apply(&client, &spec, &req.prior_state, limit).await {
            Ok(r) => r,
            Err(d) => return failed(&req, d),
        };
        req.planned_state
            .set_attr("instance_id", Value::string(&run.instance));
        let ledger = ledger.with_run_keys(run.keys.clone());
        let mut resp = self
            .apply_claimed(&mut req, &client, &spec, limit, ledger, planned, &run.key)
            .await;
        if let Some(w) = finish_run(&client, &spec, run).await {
            resp.diagnostics.push(w);
        }
        resp
    }

    async fn read(&self, mut req: ReadRequest) -> ReadResponse {
        let mut resp = ReadResponse {
            private: req.private.clone(),
            ..Default::default()
        };
        let client = match self.state.client(req.client) {
            Ok(c) => c,
            Err(NotReady::Defer(reason)) => {
                resp.keep_current_state = true;
                resp.deferred = Some(reason);
                return resp;
            }
            Err(NotReady::Fail(d)) => {
                resp.keep_current_state = true;
                resp.diagnostics.push(d);
                return resp;
            }
        };
        let bridge = req
            .current_state
            .get_attr("name")
            .as_str()
            .unwrap_or_default()
            .to_string();
        let refreshed_instance = req
            .current_state
            .get_attr("instance_id")
            .as_str()
            .map(String::from);
        self.memo(&bridge, |m| {
            m.refreshed = true;
            m.planned = false;
            m.refreshed_instance = refreshed_instance;
        });
        let ledger = match ledger_of(&req.private, &req.current_state) {
            Ok(l) => l,
            Err(d) => {
                resp.keep_current_state = true;
                resp.diagnostics = d;
                return resp;
            }
        };
        // The run keys of this state's claim: objects a run that died wrote are recognised by their marks.
        let claim_ns = req
            .current_state
            .get_attr("claim_namespace")
            .as_str()
            .unwrap_or(DEFAULT_CLAIM_NAMESPACE)
            .to_string();
        let ledger = match k8s_claim::read(&client, &claim_ns, &claim_name(&bridge)).await {
            Ok(Some(c))
                if req.current_state.get_attr("instance_id").as_str()
                    == Some(c.instance.as_str()) =>
            {
                ledger.with_run_keys(c.keys)
            }
            Ok(_) => ledger,
            Err(e) => {
                tracing::debug!(%bridge, error = %e, "the claim could not be read; no run keys");
                ledger
            }
        };
        let started = std::time::Instant::now();
        let world = read_owned(&client, &bridge, &ledger).await;
        tracing::debug!(%bridge, elapsed_ms = started.elapsed().as_millis() as u64, "read what the bridge owns");
        let world = match world {
            Ok(w) => w,
            Err(e) => {
                resp.keep_current_state = true;
                resp.diagnostics.push(io_diag(&e));
                return resp;
            }
        };
        // The state is rebuilt from what exists: its old `clusters` was not decoded (a state older than the UID
        // ledger excepted) and goes before the new one is built. A failure below answers with the state as it came
        // (`keep_current_state`), which the plugin layer still holds.
        let mut state = std::mem::take(&mut req.current_state);
        state.set_attr("clusters", Value::Null);
        // A freshly imported bridge carries the import marker (the CLI keeps private data through import): it
        // takes over every object carrying its label, and restores its configuration.
        if req.private == IMPORTED {
            // Restore the instance id and configuration from the claim (states of older versions recorded the
            // configuration on the bridged SveltosClusters).
            let claim_ns = state
                .get_attr("claim_namespace")
                .as_str()
                .unwrap_or(DEFAULT_CLAIM_NAMESPACE)
                .to_string();
            let claim = match k8s_claim::read(&client, &claim_ns, &claim_name(&bridge)).await {
                Ok(c) => c,
                Err(e) => {
                    resp.keep_current_state = true;
                    resp.diagnostics.push(io_diag(&e));
                    return resp;
                }
            };
            if let Some(c) = &claim {
                state.set_attr("instance_id", Value::string(&c.instance));
            }
            let record = claim.and_then(|c| c.config);
            // Only the claim, in the operator's namespace: the bridged SveltosClusters carry a copy of the record
            // too, but they sit in the inventory's namespaces, where their tenants may rewrite it.
            match record.map(|r| serde_json::from_str::<BridgeConfig>(&r)) {
                Some(Ok(cfg)) if cfg.name == bridge => {
                    let instance = state.get_attr("instance_id").clone();
                    cfg.write_into(&mut state);
                    state.set_attr("instance_id", instance);
                }
                Some(_) => resp.diagnostics.push(Diagnostic::warning(
                    "Imported bridge configuration not restored",
                    format!("The configuration recorded in the claim of bridge {bridge:?} is unreadable; the next plan shows the configuration as changes."),
                )),
                None => resp.diagnostics.push(Diagnostic::warning(
                    "Imported bridge configuration not restored",
                    format!("The claim of bridge {bridge:?} records no configuration (it was written by an older version); the next plan shows the configuration as changes."),
                )),
            }
        }
        if !ledger.is_empty() || req.private == IMPORTED || !world.owned.is_empty() {
            let reads = ledger.reads().map(String::from);
            resp.private = world.ledger().with_reads(reads).to_private();
        }
        let config = BridgeConfig::from_value(&state);
        let entries: std::collections::BTreeMap<String, ClusterEntry> =
            world.entries(|k| config.renews(k));
        let private_sha256 = sha256_hex(&resp.private);
        // Only with settings an apply recorded (see `prefetch`).
        let inventory = self.prefetch_inventory(&state, ledger.reads(), req.client);
        self.memo(&bridge, |m| {
            m.pending = prefetch::Pending {
                refreshed: Some(prefetch::Refreshed {
                    private_sha256,
                    world,
                }),
                inventory,
            }
        });
        resp.new_state = with_clusters(state, &bridge, clusters_value(&entries));
        resp
    }

    async fn import(&self, req: ImportRequest) -> ImportResponse {
        let mut resp = ImportResponse::default();
        // `<bridge name>`, or `<claim namespace>/<bridge name>` for a claim outside the default namespace.
        let (claim_ns, name) = match req.id.split_once('/') {
            Some((ns, name)) => (Some(ns), name),
            None => (None, req.id.as_str()),
        };
        let ns_ok = claim_ns.is_none_or(|ns| crate::bridge::names::dns1123_label(ns).is_ok());
        if crate::bridge::selector::label_value(name).is_err() || name.is_empty() || !ns_ok {
            resp.diagnostics.push(Diagnostic::error(
                "Invalid import ID",
                format!("{:?} is not a bridge name. Use: terraform import sveltos_cluster_inventory_bridge.<address> <bridge name> (or <claim namespace>/<bridge name>)", req.id),
            ));
            return resp;
        }
        let mut state = null_state();
        state.set_attr("name", Value::string(name));
        state.set_attr("id", Value::string(name));
        if let Some(ns) = claim_ns {
            state.set_attr("claim_namespace", Value::string(ns));
        }
        resp.imported.push(ImportedResource {
            type_name: TYPE_NAME.to_string(),
            state,
            private: crate::bridge::ownership::IMPORTED.to_vec(),
        });
        resp
    }
}

impl ClusterInventoryBridge {
    /// Destroy: removes exactly what the bridge owns, whatever the inventory looks like (it is not read).
    async fn destroy(
        &self,
        client: &kube::Client,
        req: ApplyRequest,
        ledger: Ledger,
    ) -> ApplyResponse {
        let bridge = req
            .prior_state
            .get_attr("name")
            .as_str()
            .unwrap_or_default()
            .to_string();
        let config = BridgeConfig::from_value(&req.prior_state);
        let deletion_timeout = config
            .to_spec()
            .map(|s| s.deletion_timeout)
            .unwrap_or(crate::bridge::DEFAULT_DELETION_TIMEOUT);
        let limit = timeouts::delete_limit(&req.prior_state);
        let claim_ns = config
            .claim_namespace
            .clone()
            .unwrap_or_else(|| DEFAULT_CLAIM_NAMESPACE.to_string());
        let result = tokio::time::timeout(
            limit,
            delete_all(client, &bridge, &ledger, deletion_timeout),
        )
        .await;
        let failure = match result {
            // The claim goes last: a destroy interrupted before this point is finished by the next one.
            Ok(Ok(())) => match self
                .release_claim(client, &claim_ns, &bridge, &req.prior_state)
                .await
            {
                Ok(()) => return ApplyResponse::default(),
                Err(d) => (d, Ledger::default()),
            },
            Ok(Err((d, left))) => (d, left),
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
        let ledger = failure.1;
        self.read_back(
            client,
            Base::Prior(req.prior_state),
            &bridge,
            &ledger,
            failure.0,
        )
        .await
    }

    /// Deletes the claim of `bridge` if it is this state's.
    async fn release_claim(
        &self,
        client: &kube::Client,
        namespace: &str,
        bridge: &str,
        prior: &Value,
    ) -> Result<(), Diagnostics> {
        let name = claim_name(bridge);
        let diag = |e: crate::k8s::io::IoError| Diagnostics::from(io_diag(&e));
        let claim = k8s_claim::read_with_uid(client, namespace, &name)
            .await
            .map_err(diag)?;
        let mine = prior.get_attr("instance_id").as_str();
        if let Some((c, uid)) = claim
            && (mine.is_none() || mine == Some(c.instance.as_str()))
        {
            k8s_claim::delete(client, namespace, &name, uid.as_deref())
                .await
                .map_err(diag)?;
        }
        Ok(())
    }

    /// After a failed or timed-out apply or destroy: the state is what exists now (configuration from `base`), with
    /// its ledger, and `diagnostics`; when what exists cannot be read, the prior state whole, or the planned state of
    /// a create.
    async fn read_back(
        &self,
        client: &kube::Client,
        base: Base,
        bridge: &str,
        ledger: &Ledger,
        mut diagnostics: Diagnostics,
    ) -> ApplyResponse {
        let world = match read_owned(client, bridge, ledger).await {
            Ok(world) => world,
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
        let config = BridgeConfig::from_value(&base);
        let entries = world.entries(|k| config.renews(k));
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
            private: world.ledger().to_private(),
            diagnostics,
        }
    }
}

/// The state a failed apply starts its answer from: the prior state (its `clusters` undecoded, see
/// [`Resource::apply_unread_attributes`]) or, for a create, the planned state.
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

/// What a plan needs before it reads anything, or why it cannot be made now.
enum PlanInputs {
    /// The bridge's settings, the provider's client (writes, the bridge's own objects) and the inventory's.
    Ready(Box<BridgeSpec>, kube::Client, kube::Client),
    /// Something is not known yet: `clusters` is unknown, deferred with this reason when the client allows.
    Unknown(Option<crate::tfplugin::DeferredReason>),
    /// The configuration or a connection is wrong.
    Failed(Diagnostics),
}

impl ClusterInventoryBridge {
    /// The settings and both connections of a plan: an `inventory` block not known yet defers, like the
    /// provider's own configuration; a client that cannot defer gets `clusters` known after apply, as for any
    /// other value not known yet.
    fn plan_inputs(&self, req: &PlanRequest) -> PlanInputs {
        let unknown_inventory =
            !crate::provider::blocks::inventory::unknown(&req.config).is_empty();
        if unknown_inventory && req.client.deferral_allowed {
            return PlanInputs::Unknown(Some(
                crate::tfplugin::DeferredReason::ResourceConfigUnknown,
            ));
        }
        if !req.config.is_wholly_known() {
            return PlanInputs::Unknown(None);
        }
        let spec = match BridgeConfig::from_value(&req.config).to_spec() {
            Ok(s) => s,
            Err(d) => return PlanInputs::Failed(d),
        };
        let clients = self.state.client(req.client).and_then(|c| {
            crate::provider::blocks::inventory::client(&self.state, &req.config, req.client)
                .map(|i| (c, i))
        });
        match clients {
            Ok((client, inventory)) => PlanInputs::Ready(Box::new(spec), client, inventory),
            Err(NotReady::Defer(reason)) => PlanInputs::Unknown(Some(reason)),
            Err(NotReady::Fail(d)) => PlanInputs::Failed(d.into()),
        }
    }

    /// Starts reading the inventory a plan of `state` needs (see [`prefetch`]); `None` when the state's
    /// configuration or inventory connection is not usable as it is (the plan then reads for itself).
    fn prefetch_inventory(
        &self,
        state: &Value,
        recorded: Option<&str>,
        caps: crate::tfplugin::ClientCapabilities,
    ) -> Option<prefetch::Inventory> {
        // Only through the provider's own connection, with settings an apply recorded (see `prefetch`).
        if !prefetch::through_provider(state) {
            return None;
        }
        let spec = BridgeConfig::from_value(state).to_spec().ok()?;
        let reads = prefetch::reads_sha256(&spec);
        if recorded != Some(reads.as_str()) {
            return None;
        }
        let client = self.state.client(caps).ok()?;
        Some(prefetch::Inventory::start(client, spec, reads))
    }

    /// Cancels what was read ahead for the bridge named in `state`.
    fn cancel_pending(&self, state: &Value) {
        if let Some(bridge) = state.get_attr("name").as_str() {
            let pending = self.memo(bridge, |m| std::mem::take(&mut m.pending));
            drop(pending);
        }
    }

    /// The inventory's connection at apply (known by then, or the apply stops).
    fn inventory_for_apply(&self, config: &Value) -> Result<kube::Client, Diagnostics> {
        match crate::provider::blocks::inventory::client(&self.state, config, Default::default()) {
            Ok(c) => Ok(c),
            Err(NotReady::Fail(d)) => Err(d.into()),
            Err(NotReady::Defer(_)) => Err(Diagnostic::error(
                "Inventory connection unknown at apply",
                "Run apply again.",
            )
            .into()),
        }
    }
}

/// Reads the inventory and what exists, plans, and returns the planned entries with the plan's diagnostics.
/// `phase` tells the first plan from the plan made again before apply; it is asked once the reads succeeded.
async fn planned_entries(
    client: &kube::Client,
    inventory: &kube::Client,
    spec: &BridgeSpec,
    ledger: &Ledger,
    (owned, prefetched): (
        Option<World>,
        Option<prefetch::Background<prefetch::Prefetched>>,
    ),
    phase: impl FnOnce(&BridgeSpec) -> Phase,
) -> Result<
    (
        std::collections::BTreeMap<String, ClusterEntry>,
        Vec<Diagnostic>,
    ),
    Diagnostics,
> {
    let started = std::time::Instant::now();
    let (reused, prefetching) = (owned.is_some(), prefetched.is_some());
    let snap = snapshot(client, inventory, spec, ledger, owned, prefetched).await?;
    tracing::debug!(
        bridge = %spec.name,
        elapsed_ms = started.elapsed().as_millis() as u64,
        reused_refresh = reused,
        prefetched = prefetching,
        "read the inventory and what exists"
    );
    let plan = snap.plan(spec, jiff::Timestamp::now(), phase(spec), None);
    let diagnostics = plan.problems.iter().map(problem_diag).collect();
    tracing::debug!(bridge = %spec.name, clusters = plan.desired.len() + plan.kept.len(), profiles = snap.profiles.len(), "planned bridge");
    // The inventory (tens of megabytes at ten thousand clusters) is done with before the planned value is built.
    drop(snap);
    Ok((plan.into_entries(), diagnostics))
}

/// The plan apply executes: planned again against what exists now, renewing the credentials the plan said
/// to renew. An error that concerns the whole bridge (strict, max_removals, configuration) stops the apply
/// (`Err`); a cluster whose profile changed since plan is left as it is, with an error naming it (in the
/// returned diagnostics), and the others are applied as planned.
fn plan_at_apply(
    snap: &crud::Snapshot,
    spec: &BridgeSpec,
    planned: std::collections::BTreeMap<String, Option<ClusterEntry>>,
) -> Result<(crate::bridge::plan::Plan, Diagnostics), Diagnostics> {
    let mints: std::collections::BTreeSet<String> = planned
        .iter()
        .filter(|(_, e)| e.as_ref().is_none_or(|e| e.credential_pending))
        .map(|(k, _)| k.clone())
        .collect();
    let mut plan = snap.plan(spec, jiff::Timestamp::now(), Phase::Apply, Some(&mints));
    let errors = |plan: &crate::bridge::plan::Plan| -> Diagnostics {
        let mut d = Diagnostics::new();
        d.extend(
            plan.problems
                .iter()
                .filter(|p| p.severity == Severity::Error)
                .map(problem_diag),
        );
        d
    };
    if plan.has_errors() {
        return Err(errors(&plan));
    }
    isolate_drift(&mut plan, &snap.world, &planned);
    // (What plan promised is done with: tens of megabytes at ten thousand clusters.)
    drop(planned);
    let diagnostics = errors(&plan);
    Ok((plan, diagnostics))
}

/// `ledger` trusting the names of the given planned clusters: an object written at one of them (before a timeout,
/// or by a write whose answer was lost) carries the label and is then recorded by the read back.
fn trusting_targets<'a>(
    mut ledger: Ledger,
    targets: impl Iterator<Item = &'a crate::bridge::desired::DesiredCluster>,
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

/// Whether the value at `path` in `config` is known (top-level attribute granularity).
fn attribute_known(config: &Value, path: &AttributePath) -> bool {
    match path.steps().first() {
        Some(crate::tfplugin::PathStep::Attribute(a)) => config.get_attr(a).is_wholly_known(),
        _ => config.is_wholly_known(),
    }
}
