//! `sveltos_cluster_inventory_bridge`: one resource that registers many ClusterProfiles as SveltosClusters.
//!
//! Read reports what this bridge owns; plan reports what the inventory asks for now; the difference is the
//! plan. Apply writes exactly what was planned or stops with "changed since plan".
//!
//! One file per concern: [`schema`], the configuration ([`model`]: read in one pass and mapped field for field
//! into the core's input, which `crate::domain::config` checks; [`timeouts`]), the computed [`clusters`]
//! attribute, the bridge's [`claim`] and ledger, the `fail_on_skipped` [`gate`], the [`phase`] detector, the RPCs
//! ([`plan`], [`apply`] with destroy, [`read`], [`import`]) and the read-ahead's policy ([`read_ahead`]). The
//! Kubernetes IO they orchestrate is `crate::runtime`; its errors and the core's problems become diagnostics in
//! `crate::provider::diag`. Each RPC runs on one `?` path, and one function per RPC builds its failure response.

mod apply;
mod claim;
pub mod clusters;
mod gate;
mod import;
pub mod model;
mod phase;
mod plan;
mod read;
mod read_ahead;
mod schema;
mod timeouts;

use std::sync::Arc;

use crate::{
    provider::state::ProviderState,
    tfplugin::{
        ApplyRequest, ApplyResponse, AttributePath, Diagnostics, ImportRequest, ImportResponse,
        PlanRequest, PlanResponse, ReadRequest, ReadResponse, Resource, Schema, UpgradeRequest,
        UpgradeResponse, Value,
    },
};
use model::BridgeConfig;
pub use schema::{TYPE_NAME, cluster_entry_type, schema};

/// The resource.
pub struct ClusterInventoryBridge {
    state: Arc<ProviderState>,
    /// What this provider process saw of each bridge (see [`phase`]).
    memo: phase::PhaseMemo,
}

impl ClusterInventoryBridge {
    /// A bridge resource using the provider's shared state.
    pub fn new(state: Arc<ProviderState>) -> Self {
        Self {
            state,
            memo: Default::default(),
        }
    }
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
        let c = match BridgeConfig::read_partial(config) {
            Ok(partial) => partial.value,
            Err(d) => return d,
        };
        let mut diags = timeouts::check(c.timeouts.as_ref());
        diags.extend(crate::provider::blocks::inventory::check_block(
            c.inventory.as_ref(),
        ));
        if let Err(d) = c.to_spec() {
            // Values not known yet are validated again at plan time.
            diags.extend(d.into_vec().into_iter().filter(|d| {
                d.attribute
                    .as_ref()
                    .is_none_or(|p| attribute_known(config, p))
            }));
        }
        diags
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
        match plan::plan_bridge(&self.state, &self.memo, &mut req).await {
            Ok(resp) => resp,
            Err(failure) => failure.respond(&req),
        }
    }

    async fn apply(&self, mut req: ApplyRequest) -> ApplyResponse {
        // Apply reads afresh what it acts on.
        self.memo.cancel_pending(&req.prior_state);
        self.memo.cancel_pending(&req.planned_state);
        match apply::apply_bridge(&self.state, &mut req).await {
            Ok(resp) => resp,
            Err(diagnostics) => apply::unapplied(&req, diagnostics),
        }
    }

    async fn read(&self, mut req: ReadRequest) -> ReadResponse {
        match read::read_bridge(&self.state, &self.memo, &mut req).await {
            Ok(resp) => resp,
            Err(unread) => unread.respond(req.private),
        }
    }

    async fn upgrade_state(&self, req: UpgradeRequest) -> UpgradeResponse {
        let upgraded = UpgradeResponse::decode(&req.raw_state_json, &self.schema());
        // The refresh that follows needs the bridge's SveltosClusters: listed from now on (see `read_ahead`).
        if !upgraded.diagnostics.has_errors()
            && let Some((bridge, listed)) =
                read_ahead::list_ahead(&self.state, &upgraded.upgraded_state)
        {
            self.memo.set_listed(&bridge, listed);
        }
        upgraded
    }

    async fn import(&self, req: ImportRequest) -> ImportResponse {
        import::import(&req)
    }
}

/// Whether the value at `path` in `config` is known (top-level attribute granularity).
fn attribute_known(config: &Value, path: &AttributePath) -> bool {
    match path.steps().first() {
        Some(crate::tfplugin::PathStep::Attribute(a)) => config.get_attr(a).is_wholly_known(),
        _ => config.is_wholly_known(),
    }
}
