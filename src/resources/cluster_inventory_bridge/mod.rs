//! `sveltos_cluster_inventory_bridge`: one resource that registers many ClusterProfiles as SveltosClusters.
//!
//! Read reports what this bridge owns; plan reports what the inventory asks for now; the difference is the
//! plan. Apply writes exactly what was planned or stops with "changed since plan".

mod crud;
pub mod model;

use std::sync::Arc;

use crate::{
    bridge::{BRIDGE_CONFIG_ANNOTATION, desired::ClusterEntry, plan::drift_since_plan},
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
const IMPORTED: &[u8] = b"imported";

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
            "Only ClusterProfiles whose `ControlPlaneHealthy` condition is `True` (default false).",
        ))
        .attribute(md(
            Attribute::bool("require_credentials").optional(),
            "Fail the plan when a selected ClusterProfile has no usable credentials, instead of skipping it with a \
             warning (default false).",
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
            Attribute::bool("adopt").optional(),
            "Take over existing SveltosClusters and Secrets with the same names that this bridge did not create \
             (default false: such objects are an error and nothing is written).",
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
        match BridgeConfig::from_value(config).to_spec() {
            Ok(_) => Diagnostics::new(),
            Err(d) => {
                // Values not known yet are validated again at plan time.
                d.into_vec()
                    .into_iter()
                    .filter(|d| {
                        d.attribute
                            .as_ref()
                            .is_none_or(|p| attribute_known(config, p))
                    })
                    .collect()
            }
        }
    }

    async fn plan(&self, mut req: PlanRequest) -> PlanResponse {
        if req.is_destroy() {
            return PlanResponse::planned(&req, Value::Null);
        }
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
        let snap = match snapshot(&client, &spec).await {
            Ok(s) => s,
            Err(d) => {
                resp.planned_state = req.proposed_new_state.clone();
                resp.diagnostics = d;
                return resp;
            }
        };
        let plan = snap.plan(&spec, jiff::Timestamp::now());
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
        let mut resp = ApplyResponse::default();
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
        if req.is_delete() {
            let bridge = req
                .prior_state
                .get_attr("name")
                .as_str()
                .unwrap_or_default()
                .to_string();
            if let Err(d) = delete_all(&client, &bridge).await {
                resp.diagnostics = d;
                resp.new_state = self
                    .reread(&client, &req.prior_state, &bridge, &mut resp.diagnostics)
                    .await;
            }
            return resp;
        }
        // What plan promised, as entries; the planned `clusters` value itself (tens of megabytes for ten thousand
        // clusters) is not needed again: the new state's `clusters` is built from what apply wrote.
        let planned = entries_from_value(req.planned_state.get_attr("clusters"));
        req.planned_state.set_attr("clusters", Value::Null);
        let config = BridgeConfig::from_value(&req.config);
        let spec = match config.to_spec() {
            Ok(s) => s,
            Err(d) => {
                resp.diagnostics = d;
                resp.new_state = req.prior_state.clone();
                return resp;
            }
        };
        let snap = match snapshot(&client, &spec).await {
            Ok(s) => s,
            Err(d) => {
                resp.diagnostics = d;
                resp.new_state = req.prior_state.clone();
                return resp;
            }
        };
        let plan = snap.plan(&spec, jiff::Timestamp::now());
        let drift = drift_since_plan(&planned, &plan.entries());
        if plan.has_errors() || !drift.is_empty() {
            resp.diagnostics.extend(
                plan.problems
                    .iter()
                    .filter(|p| p.severity == crate::bridge::plan::Severity::Error)
                    .map(problem_diag),
            );
            for (key, why) in drift {
                resp.diagnostics.push(Diagnostic::error(
                    format!("ClusterProfile {key} changed since plan"),
                    format!("{why} between plan and apply; nothing was written. Run plan again."),
                ));
            }
            resp.new_state = req.prior_state.clone();
            return resp;
        }
        let outcome = execute(&client, &spec, &snap, &plan).await;
        if outcome.diagnostics.has_errors() {
            resp.diagnostics = outcome.diagnostics;
            let base = if req.prior_state.is_null() {
                req.planned_state.clone()
            } else {
                req.prior_state.clone()
            };
            resp.new_state = self
                .reread(&client, &base, &spec.name, &mut resp.diagnostics)
                .await;
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
        let world = match read_owned(&client, &bridge).await {
            Ok(w) => w,
            Err(e) => {
                resp.new_state = req.current_state.clone();
                resp.diagnostics.push(io_diag(&e));
                return resp;
            }
        };
        let mut state = req.current_state.clone();
        // A freshly imported bridge has no `clusters` yet (and carries the import marker, where the CLI keeps
        // private data through import).
        if req.private == IMPORTED || req.current_state.get_attr("clusters").is_null() {
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
            resp.private = Vec::new();
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
            private: IMPORTED.to_vec(),
        });
        resp
    }
}

impl ClusterInventoryBridge {
    /// After a failed apply: state = what exists now (configuration from `base`).
    async fn reread(
        &self,
        client: &kube::Client,
        base: &Value,
        bridge: &str,
        diags: &mut Diagnostics,
    ) -> Value {
        match read_owned(client, bridge).await {
            Ok(world) => {
                let entries = world.entries();
                if base.is_null() && entries.is_empty() {
                    return Value::Null;
                }
                with_clusters(
                    if base.is_null() {
                        null_state()
                    } else {
                        base.clone()
                    },
                    bridge,
                    clusters_value(&entries),
                )
            }
            Err(e) => {
                diags.push(io_diag(&e));
                base.clone()
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
