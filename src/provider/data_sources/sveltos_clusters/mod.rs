//! `sveltos_clusters`: the Sveltos `SveltosCluster`s (`lib.projectsveltos.io/v1beta1`) matching some filters, each
//! with the status Sveltos reports for it (`ready`, `connectionStatus`, `failureMessage`, `version`), whether a given
//! bridge owns it, and the credential expiry that bridge recorded.
//!
//! One file per concern: the configuration and its validation ([`query`]), the [`schema`], the `clusters`
//! elements ([`values`]); the reads and the `DataSource` here.
//!
//! Secrets are only ever listed as metadata (no Secret data crosses the wire): the expiry is the annotation the
//! bridge writes on the kubeconfig Secret it owns next to the SveltosCluster.

mod query;
mod schema;
mod values;

use std::sync::Arc;

use async_trait::async_trait;

use super::{
    ownership::BridgeOwnership,
    profile_value::{failed, unknown_config},
};
use crate::{
    provider::{diag::clusters_failure, state::ProviderState},
    runtime::clusters::{ClustersRead, OfBridge, read_clusters},
    tfplugin::{
        AttributePath, DataReadRequest, DataReadResponse, DataSource, Diagnostic, Diagnostics,
        Schema, Value,
        value::{from_value, from_value_partial},
    },
};
pub use query::ClustersConfig;
use query::{Query, query};
pub use schema::{cluster_object_type, schema};
use values::cluster_values;

/// The `sveltos_clusters` data source.
pub struct SveltosClustersDataSource {
    state: Arc<ProviderState>,
}

impl SveltosClustersDataSource {
    /// The data source, using the provider's shared state.
    pub fn new(state: Arc<ProviderState>) -> Self {
        Self { state }
    }
}

/// An error when `instance_id` pins the claim and the claim of bridge `bridge` holds another instance (or there
/// is none: `found` is `None`).
fn check_instance(q: &Query, bridge: &str, found: Option<&str>) -> Result<(), Diagnostic> {
    let Some(pinned) = &q.instance_id else {
        return Ok(());
    };
    if found == Some(pinned.as_str()) {
        return Ok(());
    }
    let claim = format!(
        "{}/{}",
        q.claim_namespace,
        crate::domain::ownership::claim_name(bridge)
    );
    let what = match found {
        Some(other) => format!("holds instance {other:?}"),
        None => "does not exist".to_string(),
    };
    Err(Diagnostic::error(
        "Not this bridge's claim",
        format!(
            "instance_id is {pinned:?}, but the claim of bridge {bridge:?}, ConfigMap {claim}, {what}: set \
             claim_namespace to the bridge's own, and instance_id from the bridge's state."
        ),
    )
    .with_attribute(AttributePath::attr("instance_id")))
}

/// The warning of a bridge whose ownership cannot be told.
fn unknown_ownership(q: &Query) -> Diagnostic {
    Diagnostic::warning(
        "Ownership unknown",
        format!(
            "The claim of bridge {:?} ({}/{}) holds no copy of what the bridge owns that can be read: the bridge \
             was last applied by an earlier version of the provider, its last applies died before they \
             finished, or the copy does not fit in the claim (some 20,000 clusters). `owned` is null and \
             `owned_only = true` lists nothing until an apply of the bridge finishes with this version.",
            q.bridge.as_deref().unwrap_or_default(),
            q.claim_namespace,
            crate::domain::ownership::claim_name(q.bridge.as_deref().unwrap_or_default()),
        ),
    )
}

/// The warning of SveltosClusters carrying the label of a bridge that has no claim in `claim_namespace`.
fn no_claim(q: &Query, labelled: usize) -> Diagnostic {
    let bridge = q.bridge.as_deref().unwrap_or_default();
    Diagnostic::warning(
        "No claim for this bridge",
        format!(
            "{labelled} SveltosCluster(s) carry the label of bridge {bridge:?}, but there is no claim \
             {}/{}: none of them is reported as owned. If the bridge sets claim_namespace, set the same here \
             (and instance_id, to make this an error).",
            q.claim_namespace,
            crate::domain::ownership::claim_name(bridge),
        ),
    )
    .with_attribute(AttributePath::attr("claim_namespace"))
}

#[async_trait]
impl DataSource for SveltosClustersDataSource {
    fn type_name(&self) -> &'static str {
        "sveltos_clusters"
    }

    fn schema(&self) -> Schema {
        schema()
    }

    async fn validate(&self, config: &Value) -> Diagnostics {
        match from_value_partial::<ClustersConfig>(config) {
            Ok(c) => query(&c.value).err().unwrap_or_default(),
            Err(e) => e.to_diagnostic().into(),
        }
    }

    async fn read(&self, req: DataReadRequest) -> DataReadResponse {
        let schema = schema();
        if let Some(resp) = unknown_config(&schema, &req) {
            return resp;
        }
        let config = &req.config;
        let q = match from_value::<ClustersConfig>(config).map_err(|e| e.to_diagnostic().into()) {
            Ok(c) => match query(&c) {
                Ok(q) => q,
                Err(d) => return failed(config, d),
            },
            Err(d) => return failed(config, d),
        };
        let client = match self.state.client(req.client) {
            Ok(c) => c,
            Err(why) => return super::profile_value::not_ready(&schema, config, why),
        };
        let of = q.bridge.as_deref().map(|bridge| OfBridge {
            bridge,
            claim_namespace: &q.claim_namespace,
        });
        let found = match read_clusters(&client, &q.namespaces, of).await {
            Ok(v) => v,
            Err(e) => return failed(config, clusters_failure(&e).into()),
        };
        if let Some(b) = q.bridge.as_deref().filter(|_| !found.clusters.is_empty()) {
            let instance = found.claim.as_ref().map(|c| c.instance.as_str());
            if let Err(d) = check_instance(&q, b, instance) {
                return failed(config, d.into());
            }
        }
        let ClustersRead {
            clusters,
            secrets,
            claim,
            unreadable,
        } = found;
        let ownership = match q.bridge {
            Some(_) if !clusters.is_empty() => BridgeOwnership::from_claim(claim),
            _ => BridgeOwnership::NoClaim,
        };
        let list = cluster_values(&q, &clusters, &secrets, &ownership);
        tracing::debug!(
            listed = clusters.len(),
            secrets = secrets.len(),
            selected = list.len(),
            "read SveltosClusters"
        );
        let mut diagnostics = Diagnostics::new();
        if let Some(w) = crate::provider::diag::undecodable_warning("SveltosCluster", unreadable) {
            diagnostics.push(w);
        }
        match (&ownership, q.bridge.as_deref()) {
            (BridgeOwnership::Unknown, _) => diagnostics.push(unknown_ownership(&q)),
            (BridgeOwnership::NoClaim, Some(b)) => {
                let labelled = clusters
                    .iter()
                    .filter(|sc| super::ownership::labelled_for(&sc.metadata, b))
                    .count();
                if labelled > 0 {
                    diagnostics.push(no_claim(&q, labelled));
                }
            }
            _ => {}
        }

        let mut state = config.clone();
        state.set_attr("id", Value::string(q.id()));
        state.set_attr("clusters", Value::List(list));
        DataReadResponse {
            state,
            diagnostics,
            ..DataReadResponse::default()
        }
    }
}
