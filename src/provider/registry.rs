//! The composition root of the mapping layer: the `sveltos` provider as one [`tfplugin::Provider`], listing its
//! resources, data sources and ephemeral resources over one shared [`ProviderState`]. Only the binary (and tests
//! outside `src/`) build it; nothing in the crate imports this module (`tests/plugin/layers.rs` checks it).

use std::sync::Arc;

use crate::{
    provider::{blocks::provider_config, data_sources, ephemeral, resources, state::ProviderState},
    tfplugin::{
        self, ConfigureRequest, DataSource, Diagnostics, EphemeralResource, Resource, Schema,
    },
};

/// The provider's registry address.
pub const ADDRESS: &str = "registry.terraform.io/clusterinventory/sveltos";

struct SveltosProvider {
    state: Arc<ProviderState>,
}

/// Builds the provider.
pub fn new() -> Arc<dyn tfplugin::Provider> {
    Arc::new(SveltosProvider {
        state: Arc::new(ProviderState::new()),
    })
}

#[async_trait::async_trait]
impl tfplugin::Provider for SveltosProvider {
    fn schema(&self) -> Schema {
        provider_config::config_schema()
    }

    fn resources(&self) -> Vec<Arc<dyn Resource>> {
        resources::all(&self.state)
    }

    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        data_sources::all(&self.state)
    }

    fn ephemeral_resources(&self) -> Vec<Arc<dyn EphemeralResource>> {
        ephemeral::all(&self.state)
    }

    async fn configure(&self, req: ConfigureRequest) -> Diagnostics {
        provider_config::configure(&self.state, &req.config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfplugin::Value;

    fn credential_error_paths(diags: &crate::tfplugin::Diagnostics) -> Vec<String> {
        let mut paths: Vec<String> = diags
            .iter()
            .filter(|d| d.is_error())
            .filter_map(|d| d.attribute.as_ref().map(ToString::to_string))
            .filter(|p| p.starts_with("credentials"))
            .collect();
        paths.sort();
        paths
    }

    /// The bridge resource and both ClusterProfile data sources accept and reject exactly the same
    /// `credentials` values, at the same attribute paths: there is one rule, not copies.
    #[tokio::test]
    async fn resource_and_data_sources_agree_on_credentials() {
        let provider = new();
        let resources = provider.resources();
        // The data sources with a `credentials` block (`sveltos_clusters` reads SveltosClusters and has none).
        let data_sources: Vec<_> = provider
            .data_sources()
            .into_iter()
            .filter(|d| d.schema().block.block_named("credentials").is_some())
            .collect();
        assert!(!resources.is_empty() && data_sources.len() >= 2);
        let s = |v: &str| Value::string(v);
        let l =
            |v: &[&str]| Value::string_list(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let cases: Vec<(&str, Value)> = vec![
            ("absent", Value::Null),
            ("empty block", Value::object(Vec::<(&str, Value)>::new())),
            (
                "valid",
                Value::object([
                    ("consumer", s("sveltos")),
                    ("secret_namespaces", l(&["creds"])),
                ]),
            ),
            ("empty consumer", Value::object([("consumer", s(""))])),
            (
                "bad consumer",
                Value::object([("consumer", s("has space"))]),
            ),
            ("empty key", Value::object([("kubeconfig_keys", l(&[""]))])),
            ("no keys", Value::object([("kubeconfig_keys", l(&[]))])),
            (
                "bad label key",
                Value::object([("secret_label", s("Not A/Key"))]),
            ),
            ("empty label key", Value::object([("secret_label", s(""))])),
            (
                "bad duration",
                Value::object([("refresh_before", s("soon"))]),
            ),
            (
                "bad namespace",
                Value::object([("secret_reader_namespaces", l(&["Bad_NS"]))]),
            ),
            (
                "bad server",
                Value::object([("exec_allowed_servers", l(&["https://x"]))]),
            ),
            (
                "empty providers file",
                Value::object([("exec_providers_file", s(""))]),
            ),
        ];
        for (what, block) in cases {
            let mut verdicts = Vec::new();
            for r in &resources {
                let config = Value::object([("name", s("fleet")), ("credentials", block.clone())]);
                verdicts.push((
                    r.type_name(),
                    credential_error_paths(&r.validate(&config).await),
                ));
            }
            for d in data_sources
                .iter()
                .filter(|d| d.schema().block.block_named("credentials").is_some())
            {
                let config = Value::object([
                    ("namespace", s("team-a")),
                    ("name", s("c1")),
                    ("credentials", block.clone()),
                ]);
                verdicts.push((
                    d.type_name(),
                    credential_error_paths(&d.validate(&config).await),
                ));
            }
            let first = &verdicts[0].1;
            assert!(
                verdicts.iter().all(|(_, v)| v == first),
                "{what}: resource and data sources disagree: {verdicts:?}"
            );
            let should_fail =
                !matches!(what, "absent" | "empty block" | "valid" | "empty consumer");
            assert_eq!(!first.is_empty(), should_fail, "{what}: {verdicts:?}");
        }
    }
}
