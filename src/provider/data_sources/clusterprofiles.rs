//! `sveltos_clusterprofiles`: the KEP-4322 ClusterProfiles matching some filters, each with where the bridge would
//! take its credentials from.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::{
    lookup::{notices_warning, statuses},
    profile_value::{
        InventoryBlocks, check_credentials, failed, inventory_access, profile_object_type,
        profile_value, unknown_config,
    },
};
use crate::{
    api::ClusterProfile,
    domain::{Selection, credentials::CredentialsConfig, selection_miss},
    provider::{
        blocks::{connection::ConnectionConfig, selection},
        diag::{profiles_failure, undecodable_warning},
        state::ProviderState,
    },
    runtime::profiles::{ReadProfiles, read_profiles},
    tfplugin::{
        AttributePath, DataReadRequest, DataReadResponse, DataSource, Diagnostics, Schema, Type,
        Value,
        schema::Attribute,
        value::{from_value, from_value_partial},
    },
};

/// The `sveltos_clusterprofiles` data source.
pub struct ClusterProfilesDataSource {
    state: Arc<ProviderState>,
}

impl ClusterProfilesDataSource {
    /// The data source, using the provider's shared state.
    pub fn new(state: Arc<ProviderState>) -> Self {
        Self { state }
    }
}

/// The schema of `sveltos_clusterprofiles`.
pub fn schema() -> Schema {
    Schema::new(0)
        .markdown_description(
            "Lists KEP-4322 `ClusterProfile`s (`multicluster.x-k8s.io`, v1alpha1 or v1alpha2 as served) matching the given filters, \
             each with where `sveltos_cluster_inventory_bridge` would take its kubeconfig from. Never exposes \
             credential data.",
        )
        .attribute(
            Attribute::string("id")
                .computed()
                .markdown_description("A description of the query (the filters)."),
        )
        .attribute(
            Attribute::list("namespaces", Type::String)
                .optional()
                .markdown_description("Only ClusterProfiles in these namespaces (default: all namespaces)."),
        )
        .attribute(
            Attribute::string("label_selector")
                .optional()
                .markdown_description(
                    "Only ClusterProfiles whose labels match this Kubernetes label selector, e.g. \
                     `env=prod,tier in (a,b),!legacy`.",
                ),
        )
        .attribute(
            Attribute::string("cluster_manager")
                .optional()
                .markdown_description("Only ClusterProfiles whose `spec.clusterManager.name` is this."),
        )
        .attribute(
            Attribute::bool("require_healthy")
                .optional()
                .markdown_description(
                    "Only ClusterProfiles whose `ControlPlaneHealthy` condition is `True` (default `false`), as on \
                     `sveltos_cluster_inventory_bridge`.",
                ),
        )
        .attribute(
            Attribute::bool("healthy_only")
                .optional()
                .deprecated("Use require_healthy (the same name as on sveltos_cluster_inventory_bridge).")
                .markdown_description("Deprecated alias of `require_healthy`."),
        )
        .attribute(
            Attribute::list("cluster_profiles", profile_object_type())
                .computed()
                .markdown_description(
                    "The matching ClusterProfiles, ordered by namespace and name. Each has the attributes of \
                     the `sveltos_clusterprofile` data source.",
                ),
        )
        .block(crate::provider::blocks::credentials::block())
        .block(crate::provider::blocks::inventory::block())
}

/// The configuration, as written.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProfilesConfig {
    /// `namespaces`.
    pub namespaces: Option<Vec<String>>,
    /// `label_selector`.
    pub label_selector: Option<String>,
    /// `cluster_manager`.
    pub cluster_manager: Option<String>,
    /// `require_healthy`.
    pub require_healthy: Option<bool>,
    /// `healthy_only` (deprecated alias of `require_healthy`).
    pub healthy_only: Option<bool>,
    /// The `credentials` block.
    pub credentials: Option<CredentialsConfig>,
    /// The `inventory` block.
    pub inventory: Option<ConnectionConfig>,
}

/// The filters of a configuration, or diagnostics with attribute paths.
fn selection(config: &ProfilesConfig) -> Result<Selection, Diagnostics> {
    let mut diags = Diagnostics::new();
    let namespaces = selection::namespaces(config.namespaces.as_deref(), &mut diags);
    let healthy = config.require_healthy;
    let alias = config.healthy_only;
    if let (Some(a), Some(b)) = (healthy, alias)
        && a != b
    {
        diags.attribute_error(
            AttributePath::attr("healthy_only"),
            "Conflicting health filters",
            "require_healthy and its deprecated alias healthy_only disagree; keep only require_healthy.",
        );
    }
    let label_selector = selection::label_selector(config.label_selector.as_deref(), &mut diags);
    if diags.has_errors() {
        return Err(diags);
    }
    Ok(Selection {
        namespaces,
        names: Vec::new(),
        label_selector,
        cluster_manager: config.cluster_manager.clone(),
        require_healthy: healthy.or(alias).unwrap_or(false),
    })
}

fn query_id(sel: &Selection) -> String {
    format!(
        "namespaces={};label_selector={};cluster_manager={};require_healthy={}",
        if sel.namespaces.is_empty() {
            "*".to_string()
        } else {
            sel.namespaces.join(",")
        },
        sel.label_selector
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        sel.cluster_manager.as_deref().unwrap_or_default(),
        sel.require_healthy
    )
}

#[async_trait]
impl DataSource for ClusterProfilesDataSource {
    fn type_name(&self) -> &'static str {
        "sveltos_clusterprofiles"
    }

    fn schema(&self) -> Schema {
        schema()
    }

    async fn validate(&self, config: &Value) -> Diagnostics {
        let c = match from_value_partial::<ProfilesConfig>(config) {
            Ok(c) => c,
            Err(e) => return e.to_diagnostic().into(),
        };
        let mut diags = selection(&c.value).err().unwrap_or_default();
        diags.extend(check_credentials(&c, c.value.credentials.as_ref()).into_vec());
        diags
    }

    async fn read(&self, req: DataReadRequest) -> DataReadResponse {
        let schema = schema();
        if let Some(resp) = unknown_config(&schema, &req) {
            return resp;
        }
        let config = &req.config;
        let c = match from_value::<ProfilesConfig>(config) {
            Ok(c) => c,
            Err(e) => return failed(config, e.to_diagnostic().into()),
        };
        let sel = match selection(&c) {
            Ok(s) => s,
            Err(d) => return failed(config, d),
        };
        let blocks = InventoryBlocks {
            credentials: c.credentials.as_ref(),
            inventory: c.inventory.as_ref(),
        };
        let (options, providers, client) =
            match inventory_access(&self.state, &schema, &req, blocks) {
                Ok(v) => v,
                Err(resp) => return *resp,
            };
        let keep = |p: &ClusterProfile| selection_miss(&sel, p).is_none();
        let read = match read_profiles(&client, &sel.namespaces, keep, &options, providers.as_ref())
            .await
        {
            Ok(r) => r,
            Err(e) => return failed(config, profiles_failure(&e).into()),
        };
        let statuses = statuses(&read, &options, providers.as_ref());
        let notices = notices_warning(&read.profiles, &statuses);
        let ReadProfiles {
            profiles,
            undecodable,
            ..
        } = read;
        let list: Vec<Value> = profiles
            .iter()
            .zip(&statuses)
            .map(|(p, s)| profile_value(p, s))
            .collect();
        let mut state = config.clone();
        state.set_attr("id", Value::string(query_id(&sel)));
        state.set_attr("cluster_profiles", Value::List(list));
        let mut resp = DataReadResponse {
            state,
            ..DataReadResponse::default()
        };
        if let Some(w) = undecodable_warning("ClusterProfile", undecodable) {
            resp.diagnostics.push(w);
        }
        if let Some(w) = notices {
            resp.diagnostics.push(w);
        }
        resp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_and_bad_selector_path() {
        let cfg = Value::object([
            ("namespaces", Value::string_list(["b", "a", "b"])),
            ("label_selector", Value::string("env in (prod),!legacy")),
            ("cluster_manager", Value::string("ocm")),
            ("require_healthy", Value::bool(true)),
        ]);
        let sel = selection(&from_value(&cfg).unwrap()).unwrap();
        assert_eq!(sel.namespaces, vec!["a".to_string(), "b".to_string()]);
        assert!(sel.require_healthy);
        assert_eq!(
            query_id(&sel),
            "namespaces=a,b;label_selector=env in (prod),!legacy;cluster_manager=ocm;require_healthy=true"
        );
        let bad = Value::object([("label_selector", Value::string("env in (prod"))]);
        let d = selection(&from_value(&bad).unwrap()).unwrap_err();
        let first = d.iter().next().unwrap();
        assert_eq!(first.attribute, Some(AttributePath::attr("label_selector")));
        assert!(first.detail.contains("env in (prod"), "{}", first.detail);
    }

    #[test]
    fn the_config_covers_the_schema() {
        crate::tfplugin::value::serde_bridge::coverage::assert_covers::<ProfilesConfig>(
            &schema().block,
            &[],
        );
    }

    #[test]
    fn schema_uses_plain_types_for_computed_lists() {
        let s = schema();
        let a = s.block.attribute_named("cluster_profiles").unwrap();
        assert!(matches!(
            &a.kind,
            crate::tfplugin::schema::AttributeType::Type(Type::List(_))
        ));
        let single = super::super::clusterprofile::schema();
        for name in ["id", "labels", "credential_source", "ready_to_bridge"] {
            assert!(
                single
                    .block
                    .attribute_named(name)
                    .is_some_and(|a| a.computed),
                "{name}"
            );
        }
        assert!(
            single
                .block
                .attribute_named("name")
                .is_some_and(|a| a.required)
        );
        // Terraform rejects NestingSingle blocks whose MinItems and MaxItems differ.
        for sch in [&s, &single] {
            let b = sch.block.block_named("credentials").unwrap();
            assert_eq!(b.nesting, crate::tfplugin::schema::BlockNesting::Single);
            assert_eq!(b.min_items, b.max_items);
        }
    }
}
