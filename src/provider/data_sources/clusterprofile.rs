//! `sveltos_clusterprofile`: one KEP-4322 ClusterProfile by `namespace` and `name`, with where the bridge would
//! take its credentials from.

use std::sync::Arc;

use async_trait::async_trait;

use super::{
    lookup::credential_statuses,
    profile_value::{failed, inventory_access, profile_attributes, profile_attrs, unknown_config},
};
use crate::{
    api::ClusterProfile,
    k8s::io,
    provider::state::ProviderState,
    tfplugin::{
        AttributePath, DataReadRequest, DataReadResponse, DataSource, Diagnostic, Diagnostics,
        Schema, Value,
    },
};

/// The `sveltos_clusterprofile` data source.
pub struct ClusterProfileDataSource {
    state: Arc<ProviderState>,
}

impl ClusterProfileDataSource {
    /// The data source, using the provider's shared state.
    pub fn new(state: Arc<ProviderState>) -> Self {
        Self { state }
    }
}

/// The schema of `sveltos_clusterprofile`.
pub fn schema() -> Schema {
    let mut s = Schema::new(0)
        .markdown_description(
            "Reads one KEP-4322 `ClusterProfile` (`multicluster.x-k8s.io/v1alpha1`) and reports where \
             `sveltos_cluster_inventory_bridge` would take its kubeconfig from. Never exposes credential data.",
        )
;
    for a in crate::provider::blocks::selection::profile_identity_attributes() {
        s = s.attribute(a);
    }
    for a in profile_attributes(false) {
        s = s.attribute(a);
    }
    s.block(crate::provider::blocks::credentials::block())
        .block(crate::provider::blocks::inventory::block())
}

fn check_identity(config: &Value) -> Diagnostics {
    crate::provider::blocks::selection::profile_identity(config)
}

#[async_trait]
impl DataSource for ClusterProfileDataSource {
    fn type_name(&self) -> &'static str {
        "sveltos_clusterprofile"
    }

    fn schema(&self) -> Schema {
        schema()
    }

    async fn validate(&self, config: &Value) -> Diagnostics {
        check_identity(config)
    }

    async fn read(&self, req: DataReadRequest) -> DataReadResponse {
        let schema = schema();
        if let Some(resp) = unknown_config(&schema, &req) {
            return resp;
        }
        let config = &req.config;
        let diags = check_identity(config);
        if diags.has_errors() {
            return failed(config, diags);
        }
        let namespace = config.get_attr("namespace").as_str().unwrap_or_default();
        let name = config.get_attr("name").as_str().unwrap_or_default();
        let (options, providers, client) = match inventory_access(&self.state, &schema, &req) {
            Ok(v) => v,
            Err(resp) => return *resp,
        };
        let profile = match io::get_opt::<ClusterProfile>(&client, namespace, name).await {
            Ok(Some(p)) => p,
            Ok(None) => {
                return failed(
                    config,
                    Diagnostic::error(
                        format!("ClusterProfile {namespace}/{name} not found"),
                        format!(
                            "There is no ClusterProfile (multicluster.x-k8s.io/v1alpha1) named {name} in \
                             namespace {namespace}."
                        ),
                    )
                    .with_attribute(AttributePath::attr("name"))
                    .into(),
                );
            }
            Err(e) => {
                return failed(
                    config,
                    Diagnostic::error(
                        format!("Cannot read ClusterProfile {namespace}/{name}"),
                        e.to_string(),
                    )
                    .into(),
                );
            }
        };
        let profiles = [profile];
        let statuses =
            match credential_statuses(&client, &options, providers.as_ref(), &profiles).await {
                Ok(s) => s,
                Err(e) => {
                    return failed(
                        config,
                        Diagnostic::error(
                            format!(
                                "Cannot locate the credentials of ClusterProfile {namespace}/{name}"
                            ),
                            e.to_string(),
                        )
                        .into(),
                    );
                }
            };
        let mut state = config.clone();
        if let Some(status) = statuses.first() {
            for (k, v) in profile_attrs(&profiles[0], status) {
                // `name` and `namespace` stay as configured.
                if k != "name" && k != "namespace" {
                    state.set_attr(k, v);
                }
            }
        }
        DataReadResponse {
            state,
            ..DataReadResponse::default()
        }
    }
}
