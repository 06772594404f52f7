//! `sveltos_cluster_inventory_bridge`: one resource that registers many ClusterProfiles as SveltosClusters.
//!
//! Read reports what this bridge owns; plan reports what the inventory asks for now; the difference is the
//! plan. Apply writes exactly what was planned or stops with "changed since plan".

mod crud;
pub mod model;
mod timeouts;

use std::sync::Arc;

use crate::bridge::{
    ownership::{IMPORTED, Kind, Ledger},
    plan::{Phase, Severity, isolate_drift},
};
use crate::{
    bridge::{BRIDGE_CONFIG_ANNOTATION, desired::ClusterEntry},
    provider::{NotReady, ProviderState},
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
}

impl ClusterInventoryBridge {
    /// A bridge resource using the provider's shared state.
    pub fn new(state: Arc<ProviderState>) -> Self {
        Self { state }
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

/// The resource schema.
pub fn schema() -> Schema {
    let md = |a: Attribute, d: &str| a.markdown_description(d);
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
        .attribute(md(
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
                ],
            )
            .optional(),
            "Per-cluster settings keyed `namespace/name` of the ClusterProfile.",
        ))
        .attribute(md(
            Attribute::map("clusters", cluster_entry_type()).computed(),
            "The bridged clusters keyed `namespace/name`: `sveltos_cluster` and `secret` (`namespace/name`), \
             `credential_source`, `kubeconfig_sha256`, `credential_expires_at`, `labels` and `config_sha256` \
             (hash of the managed SveltosCluster fields). Hashes only, never credentials.",
        ))
        .block(crate::config_blocks::credentials::block())
        .block(crate::config_blocks::inventory::block())
        .block(NestedBlock::single(
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
        ))
        .block(timeouts::block())
        .block(
            NestedBlock::single(
                "active_window",
                Block::new()
                    .markdown_description("`spec.activeWindow` of every SveltosCluster.")
                    .attribute(md(Attribute::string("from").required(), "Cron schedule opening the window."))
                    .attribute(md(Attribute::string("to").required(), "Cron schedule closing the window.")),
            ),
        )
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

    async fn plan(&self, mut req: PlanRequest) -> PlanResponse {
        if req.is_destroy() {
            return PlanResponse::planned(&req, Value::Null);
        }
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
        // An `inventory` block not known yet defers, like the provider's own configuration; a client that cannot
        // defer gets `clusters` known after apply, as for any other value not known yet.
        let unknown_inventory = !crate::config_blocks::inventory::unknown(&req.config).is_empty();
        if unknown_inventory && req.client.deferral_allowed {
            planned.set_attr("id", name_value);
            planned.set_attr("clusters", Value::unknown());
            resp.planned_state = planned;
            resp.deferred = Some(crate::tfplugin::DeferredReason::ResourceConfigUnknown);
            return resp;
        }
        if !req.config.is_wholly_known() {
            planned.set_attr("id", name_value.clone());
            planned.set_attr("clusters", Value::unknown());
            resp.planned_state = planned;
            return resp;
        }
        let spec = match BridgeConfig::from_value(&req.config).to_spec() {
            Ok(s) => s,
            Err(d) => {
                resp.diagnostics = d;
                resp.planned_state = req.proposed_new_state.clone();
                return resp;
            }
        };
        let client = match self.state.client(req.client) {
            Ok(c) => c,
            Err(NotReady::Defer(reason)) => {
                planned.set_attr("id", name_value);
                planned.set_attr("clusters", Value::unknown());
                resp.planned_state = planned;
                resp.deferred = Some(reason);
                return resp;
            }
            Err(NotReady::Fail(d)) => {
                resp.planned_state = req.proposed_new_state.clone();
                resp.diagnostics.push(d);
                return resp;
            }
        };
        let inventory =
            match crate::config_blocks::inventory::client(&self.state, &req.config, req.client) {
                Ok(c) => c,
                Err(NotReady::Defer(reason)) => {
                    planned.set_attr("id", name_value);
                    planned.set_attr("clusters", Value::unknown());
                    resp.planned_state = planned;
                    resp.deferred = Some(reason);
                    return resp;
                }
                Err(NotReady::Fail(d)) => {
                    resp.planned_state = req.proposed_new_state.clone();
                    resp.diagnostics.push(d);
                    return resp;
                }
            };
        let snap = match snapshot(&client, &inventory, &spec, &ledger).await {
            Ok(s) => s,
            Err(d) => {
                resp.planned_state = req.proposed_new_state.clone();
                resp.diagnostics = d;
                return resp;
            }
        };
        let plan = snap.plan(&spec, jiff::Timestamp::now(), Phase::Plan, None);
        resp.diagnostics
            .extend(plan.problems.iter().map(problem_diag));
        let entries = plan.entries();
        tracing::debug!(bridge = %spec.name, clusters = entries.len(), profiles = snap.profiles.len(), "planned bridge");
        // The inventory and the desired objects (tens of megabytes at ten thousand clusters) are done with before
        // the planned value is built.
        drop((plan, snap));
        resp.planned_state = with_clusters(planned, &spec.name, clusters_value(&entries));
        resp
    }

    async fn apply(&self, mut req: ApplyRequest) -> ApplyResponse {
        let mut resp = ApplyResponse {
            private: req.planned_private.clone(),
            ..Default::default()
        };
        let client = match self.state.client(Default::default()) {
            Ok(c) => c,
            Err(NotReady::Fail(d)) => {
                resp.new_state = req.prior_state.clone();
                resp.diagnostics.push(d);
                return resp;
            }
            Err(NotReady::Defer(_)) => {
                resp.new_state = req.prior_state.clone();
                resp.diagnostics.error(
                    "Provider configuration unknown at apply",
                    "Run apply again.",
                );
                return resp;
            }
        };
        let ledger = match ledger_of(&req.planned_private, &req.prior_state) {
            Ok(l) => l,
            Err(d) => {
                resp.new_state = req.prior_state.clone();
                resp.diagnostics = d;
                return resp;
            }
        };
        if req.is_delete() {
            return self.destroy(&client, req, ledger).await;
        }
        // What plan promised, as entries; the planned `clusters` value itself (tens of megabytes for ten thousand
        // clusters) is not needed again: the new state's `clusters` is built from what apply wrote.
        let planned = entries_from_value(req.planned_state.get_attr("clusters"));
        req.planned_state.set_attr("clusters", Value::Null);
        let config = BridgeConfig::from_value(&req.config);
        let (spec, limit) = match config
            .to_spec()
            .and_then(|s| timeouts::limit(&req.config, req.is_create()).map(|l| (s, l)))
        {
            Ok(v) => v,
            Err(d) => {
                resp.diagnostics = d;
                resp.new_state = req.prior_state.clone();
                return resp;
            }
        };
        let inventory = match crate::config_blocks::inventory::client(
            &self.state,
            &req.config,
            Default::default(),
        ) {
            Ok(c) => c,
            Err(NotReady::Fail(d)) => {
                resp.diagnostics.push(d);
                resp.new_state = req.prior_state.clone();
                return resp;
            }
            Err(NotReady::Defer(_)) => {
                resp.new_state = req.prior_state.clone();
                resp.diagnostics
                    .error("Inventory connection unknown at apply", "Run apply again.");
                return resp;
            }
        };
        let snap = match snapshot(&client, &inventory, &spec, &ledger).await {
            Ok(s) => s,
            Err(d) => {
                resp.diagnostics = d;
                resp.new_state = req.prior_state.clone();
                return resp;
            }
        };
        let mints: std::collections::BTreeSet<String> = planned
            .iter()
            .filter(|(_, e)| e.as_ref().is_none_or(|e| e.credential_pending))
            .map(|(k, _)| k.clone())
            .collect();
        let mut plan = snap.plan(&spec, jiff::Timestamp::now(), Phase::Apply, Some(&mints));
        let errors = |plan: &crate::bridge::plan::Plan| -> Vec<Diagnostic> {
            plan.problems
                .iter()
                .filter(|p| p.severity == Severity::Error)
                .map(problem_diag)
                .collect()
        };
        if plan.has_errors() {
            // An error that concerns the whole bridge (strict, max_removals, configuration): nothing is written.
            resp.diagnostics.extend(errors(&plan));
            resp.new_state = req.prior_state.clone();
            return resp;
        }
        // A cluster whose profile changed since plan is left as it is (an error names it); the others are
        // applied as planned.
        isolate_drift(&mut plan, &snap.world, &planned);
        resp.diagnostics.extend(errors(&plan));
        let Ok(outcome) = tokio::time::timeout(limit, execute(&client, &spec, &snap, &plan)).await
        else {
            resp.diagnostics.push(Diagnostic::error(
                    "Apply timed out",
                    format!(
                        "The bridge's writes did not finish within {}s (timeouts). What was written is kept and \
                         recorded; run apply again to converge.",
                        limit.as_secs()
                    ),
                ));
            // Objects written before the timeout carry the label at the names this apply meant to write.
            let mut trusted = snap.world.ledger();
            for d in plan.desired.values() {
                if let Some(id) = &d.entry.sveltos_cluster {
                    trusted.trust_name(Kind::SveltosCluster, id);
                }
                if let Some(id) = &d.entry.secret {
                    trusted.trust_name(Kind::Secret, id);
                }
            }
            let base = if req.prior_state.is_null() {
                req.planned_state.clone()
            } else {
                req.prior_state.clone()
            };
            let (state, ledger) = self
                .reread(&client, &base, &spec.name, &trusted, &mut resp.diagnostics)
                .await;
            resp.new_state = state;
            resp.private = ledger.to_private();
            return resp;
        };
        let ledger = outcome.ledger(&snap.world);
        resp.private = ledger.to_private();
        let drifted = resp.diagnostics.has_errors();
        if outcome.diagnostics.has_errors() || drifted {
            resp.diagnostics.extend(outcome.diagnostics.into_vec());
            let base = if req.prior_state.is_null() {
                req.planned_state.clone()
            } else {
                req.prior_state.clone()
            };
            drop((plan, snap));
            let (state, ledger) = self
                .reread(&client, &base, &spec.name, &ledger, &mut resp.diagnostics)
                .await;
            resp.new_state = state;
            resp.private = ledger.to_private();
            return resp;
        }
        let mut entries = plan.entries();
        drop((plan, snap));
        for (k, e) in outcome.minted {
            entries.insert(k, e);
        }
        resp.new_state = with_clusters(
            std::mem::take(&mut req.planned_state),
            &spec.name,
            clusters_value(&entries),
        );
        resp
    }

    async fn read(&self, req: ReadRequest) -> ReadResponse {
        let mut resp = ReadResponse {
            private: req.private.clone(),
            ..Default::default()
        };
        let client = match self.state.client(req.client) {
            Ok(c) => c,
            Err(NotReady::Defer(reason)) => {
                resp.new_state = req.current_state.clone();
                resp.deferred = Some(reason);
                return resp;
            }
            Err(NotReady::Fail(d)) => {
                resp.new_state = req.current_state.clone();
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
        let ledger = match ledger_of(&req.private, &req.current_state) {
            Ok(l) => l,
            Err(d) => {
                resp.new_state = req.current_state.clone();
                resp.diagnostics = d;
                return resp;
            }
        };
        let world = match read_owned(&client, &bridge, &ledger).await {
            Ok(w) => w,
            Err(e) => {
                resp.new_state = req.current_state.clone();
                resp.diagnostics.push(io_diag(&e));
                return resp;
            }
        };
        let mut state = req.current_state.clone();
        // A freshly imported bridge carries the import marker (the CLI keeps private data through import): it
        // takes over every object carrying its label, and restores its configuration.
        if req.private == IMPORTED {
            // Restore the configuration recorded on the bridged SveltosClusters.
            let record = world.records.first().cloned();
            match record.map(|r| serde_json::from_str::<BridgeConfig>(&r)) {
                Some(Ok(cfg)) if cfg.name == bridge => cfg.write_into(&mut state),
                Some(_) => resp.diagnostics.push(Diagnostic::warning(
                    "Imported bridge configuration not restored",
                    format!("The {BRIDGE_CONFIG_ANNOTATION} annotation of bridge {bridge:?} is unreadable; the next plan shows the configuration as changes."),
                )),
                None => {}
            }
        }
        if !ledger.is_empty() || req.private == IMPORTED || !world.owned.is_empty() {
            resp.private = world.ledger().to_private();
        }
        let entries: std::collections::BTreeMap<String, ClusterEntry> = world.entries();
        resp.new_state = with_clusters(state, &bridge, clusters_value(&entries));
        resp
    }

    async fn import(&self, req: ImportRequest) -> ImportResponse {
        let mut resp = ImportResponse::default();
        if crate::bridge::selector::label_value(&req.id).is_err() || req.id.is_empty() {
            resp.diagnostics.push(Diagnostic::error(
                "Invalid import ID",
                format!("{:?} is not a bridge name. Use: terraform import sveltos_cluster_inventory_bridge.<address> <bridge name>", req.id),
            ));
            return resp;
        }
        let mut state = null_state();
        state.set_attr("name", Value::string(&req.id));
        state.set_attr("id", Value::string(&req.id));
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
        let mut resp = ApplyResponse::default();
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
        let result = tokio::time::timeout(
            limit,
            delete_all(client, &bridge, &ledger, deletion_timeout),
        )
        .await;
        let failure = match result {
            Ok(Ok(())) => return resp,
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
        resp.diagnostics = failure.0;
        let (state, ledger) = self
            .reread(
                client,
                &req.prior_state,
                &bridge,
                &failure.1,
                &mut resp.diagnostics,
            )
            .await;
        resp.new_state = state;
        resp.private = ledger.to_private();
        resp
    }

    /// After a failed apply: state = what exists now (configuration from `base`), with its ledger.
    async fn reread(
        &self,
        client: &kube::Client,
        base: &Value,
        bridge: &str,
        ledger: &Ledger,
        diags: &mut Diagnostics,
    ) -> (Value, Ledger) {
        match read_owned(client, bridge, ledger).await {
            Ok(world) => {
                let entries = world.entries();
                let ledger = world.ledger();
                if base.is_null() && entries.is_empty() {
                    return (Value::Null, ledger);
                }
                let state = with_clusters(
                    if base.is_null() {
                        null_state()
                    } else {
                        base.clone()
                    },
                    bridge,
                    clusters_value(&entries),
                );
                (state, ledger)
            }
            Err(e) => {
                diags.push(io_diag(&e));
                (base.clone(), ledger.clone())
            }
        }
    }
}

/// Whether the value at `path` in `config` is known (top-level attribute granularity).
fn attribute_known(config: &Value, path: &AttributePath) -> bool {
    match path.steps().first() {
        Some(crate::tfplugin::PathStep::Attribute(a)) => config.get_attr(a).is_wholly_known(),
        _ => config.is_wholly_known(),
    }
}
