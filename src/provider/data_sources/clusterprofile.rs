//! `sveltos_clusterprofile`: one KEP-4322 ClusterProfile by `namespace` and `name`, with where the bridge would
//! take its credentials from.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::{
    lookup::{notices_warning, statuses},
    profile_value::{
        InventoryBlocks, check_credentials, failed, inventory_access, profile_attributes,
        profile_attrs, unknown_config,
    },
};
use crate::{
    domain::credentials::CredentialsConfig,
    provider::{
        blocks::{connection::ConnectionConfig, selection::profile_identity},
        diag::profiles_failure,
        state::ProviderState,
    },
    runtime::profiles::read_profile,
    tfplugin::{
        DataReadRequest, DataReadResponse, DataSource, Diagnostics, Schema, Value,
        value::{from_value, from_value_partial},
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
            "Reads one KEP-4322 `ClusterProfile` (`multicluster.x-k8s.io`, v1alpha1 or v1alpha2 as served) and reports where \
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

/// The configuration, as written.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProfileConfig {
    /// `namespace` (required; `None` only while not known).
    pub namespace: Option<String>,
    /// `name` (required; `None` only while not known).
    pub name: Option<String>,
    /// The `credentials` block.
    pub credentials: Option<CredentialsConfig>,
    /// The `inventory` block.
    pub inventory: Option<ConnectionConfig>,
}

impl ProfileConfig {
    fn check_identity(&self) -> Diagnostics {
        profile_identity(self.namespace.as_deref(), self.name.as_deref())
    }

    /// Reads and checks a configuration whose values are all known (a read).
    fn read(config: &Value) -> Result<Self, Diagnostics> {
        let c = from_value::<Self>(config).map_err(|e| Diagnostics::from(e.to_diagnostic()))?;
        let mut diags = c.check_identity();
        diags
            .extend(crate::provider::blocks::credentials::check(c.credentials.as_ref()).into_vec());
        if diags.has_errors() {
            return Err(diags);
        }
        Ok(c)
    }
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
        let c = match from_value_partial::<ProfileConfig>(config) {
            Ok(c) => c,
            Err(e) => return e.to_diagnostic().into(),
        };
        let mut diags = c.value.check_identity();
        diags.extend(check_credentials(&c, c.value.credentials.as_ref()).into_vec());
        diags
    }

    async fn read(&self, req: DataReadRequest) -> DataReadResponse {
        let schema = schema();
        if let Some(resp) = unknown_config(&schema, &req) {
            return resp;
        }
        let config = &req.config;
        let c = match ProfileConfig::read(config) {
            Ok(c) => c,
            Err(d) => return failed(config, d),
        };
        let namespace = c.namespace.as_deref().unwrap_or_default();
        let name = c.name.as_deref().unwrap_or_default();
        let blocks = InventoryBlocks {
            credentials: c.credentials.as_ref(),
            inventory: c.inventory.as_ref(),
        };
        let (options, providers, client) =
            match inventory_access(&self.state, &schema, &req, blocks) {
                Ok(v) => v,
                Err(resp) => return *resp,
            };
        let read = match read_profile(&client, namespace, name, &options, providers.as_ref()).await
        {
            Ok(r) => r,
            Err(e) => return failed(config, profiles_failure(&e).into()),
        };
        let statuses = statuses(&read, &options, providers.as_ref());
        let profiles = &read.profiles;
        let notices = notices_warning(profiles, &statuses);
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
            diagnostics: notices.into_iter().collect(),
            ..DataReadResponse::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_covers_the_schema() {
        crate::tfplugin::value::serde_bridge::coverage::assert_covers::<ProfileConfig>(
            &schema().block,
            &[],
        );
    }
}
