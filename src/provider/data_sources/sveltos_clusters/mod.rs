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
use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::ObjectMeta};

use super::{
    ownership::BridgeOwnership,
    profile_value::{failed, unknown_config},
};
use crate::{
    api::{SveltosCluster, keys},
    k8s::io::{self, IoError},
    provider::state::ProviderState,
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

/// The server-side label selector that narrows the Secret LIST to the bridge's kubeconfig Secrets
/// ([`labelled_for`] still decides).
fn owner_prefilter(bridge: &str) -> String {
    format!("{}={bridge}", keys::BRIDGE_LABEL)
}

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

/// What one read found: the SveltosClusters of `q`'s namespaces and, with a bridge, the metadata of its candidate
/// kubeconfig Secrets there and what its claim tells.
struct Found {
    clusters: Vec<SveltosCluster>,
    secrets: Vec<ObjectMeta>,
    ownership: BridgeOwnership,
    /// SveltosClusters that exist but do not decode (not listed; a warning names them).
    unreadable: Vec<io::Undecodable>,
}

/// Reads what `q` needs: a number of requests that does not depend on the number of clusters.
async fn read_objects(client: &kube::Client, q: &Query) -> Result<Found, Diagnostic> {
    let read_failed = |e: IoError| {
        Diagnostic::error(
            "Cannot read SveltosClusters",
            format!(
                "{e}. Check that the management cluster is reachable with the provider's configuration and that \
                 the SveltosCluster CRD is installed."
            ),
        )
    };
    let (clusters, unreadable): (Vec<SveltosCluster>, _) = io::list(client, &q.namespaces, None)
        .await
        .map_err(read_failed)?;
    let (secrets, ownership) = match &q.bridge {
        Some(b) if !clusters.is_empty() => {
            // A Secret that does not decode has no expiry to tell: its cluster's is null.
            let (secrets, _) = io::list_metadata::<Secret>(
                client,
                &q.namespaces,
                Some(&owner_prefilter(b)),
                &io::ReadBudget::default(),
            )
            .await
            .map_err(read_failed)?;
            let (ownership, instance) = BridgeOwnership::read(client, &q.claim_namespace, b)
                .await
                .map_err(|e| {
                    Diagnostic::error(
                        "Cannot read the bridge's claim",
                        format!(
                            "{e}. Which SveltosClusters bridge {b:?} owns is recorded in its claim, ConfigMap \
                             {}/{}: the provider's identity needs `get` on ConfigMaps there (set \
                             `claim_namespace` if the bridge sets it).",
                            q.claim_namespace,
                            crate::domain::ownership::claim_name(b)
                        ),
                    )
                    .with_attribute(AttributePath::attr("claim_namespace"))
                })?;
            check_instance(q, b, instance.as_deref())?;
            (secrets, ownership)
        }
        _ => (Vec::new(), BridgeOwnership::NoClaim),
    };
    Ok(Found {
        clusters,
        secrets,
        ownership,
        unreadable,
    })
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
        let found = match read_objects(&client, &q).await {
            Ok(v) => v,
            Err(d) => return failed(config, d.into()),
        };
        let list = cluster_values(&q, &found.clusters, &found.secrets, &found.ownership);
        tracing::debug!(
            listed = found.clusters.len(),
            secrets = found.secrets.len(),
            selected = list.len(),
            "read SveltosClusters"
        );
        let mut diagnostics = Diagnostics::new();
        if let Some(w) =
            super::clusterprofiles::undecodable_warning("SveltosCluster", found.unreadable)
        {
            diagnostics.push(w);
        }
        match (&found.ownership, q.bridge.as_deref()) {
            (BridgeOwnership::Unknown, _) => diagnostics.push(unknown_ownership(&q)),
            (BridgeOwnership::NoClaim, Some(b)) => {
                let labelled = found
                    .clusters
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
