//! The `sveltos` provider: its configuration block (the hashicorp/kubernetes provider's connection attributes,
//! with the same names, environment variables and precedence) and the state shared with resources and data
//! sources.

use std::sync::{Arc, Mutex, RwLock};

use crate::{
    k8s::config::{self, KubeSettings},
    tfplugin::{
        self, AttributePath, ClientCapabilities, ConfigureRequest, DataSource, DeferredReason,
        Diagnostic, Diagnostics, EphemeralResource, Resource, Schema, Value,
    },
};

/// The provider's registry address.
pub const ADDRESS: &str = "registry.terraform.io/clusterinventory/sveltos";

/// What `ConfigureProvider` produced.
#[derive(Clone)]
enum Configured {
    /// Not configured yet.
    Pending,
    /// A client for the management cluster.
    Ready(kube::Client),
    /// Some attributes are unknown until apply (named).
    Unknown(Vec<String>),
    /// Configuration failed (the diagnostic was already reported by configure).
    Failed(String),
}

/// State shared by the provider's resources and data sources.
pub struct ProviderState {
    configured: RwLock<Configured>,
    /// Clients built from `inventory` blocks, one per distinct settings (a handful at most: one per hub a
    /// configuration names), so that every resource and data source reading the same hub shares one
    /// connection pool. Never logged: the settings may hold a token or a client key.
    inventories: Mutex<Vec<(KubeSettings, kube::Client)>>,
}

/// Why a resource cannot talk to the cluster yet.
pub enum NotReady {
    /// Defer the operation (the client allows it).
    Defer(DeferredReason),
    /// Fail with this diagnostic.
    Fail(Diagnostic),
}

impl ProviderState {
    pub(crate) fn new() -> Self {
        Self {
            configured: RwLock::new(Configured::Pending),
            inventories: Mutex::new(Vec::new()),
        }
    }

    /// A client for a cluster described by a block with the connection attributes (an `inventory` block),
    /// built on first use and cached per settings. The settings go through the same resolution as the
    /// provider block's ([`config::connect`]) but without environment fallbacks ([`hub_environment`]).
    pub fn client_for(&self, settings: &KubeSettings) -> Result<kube::Client, config::ConfigError> {
        let mut cache = self
            .inventories
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, c)) = cache.iter().find(|(s, _)| s == settings) {
            return Ok(c.clone());
        }
        // No `KUBE_*` fallback: those variables are the provider block's (the management cluster's), and a
        // `KUBE_TOKEN` filled in here would be sent to the hub. What the block says is what connects.
        let client = config::connect(settings, &hub_environment)?;
        cache.push((settings.clone(), client.clone()));
        Ok(client)
    }

    /// How many distinct `inventory` clients were built (for tests of the cache).
    pub fn inventory_clients(&self) -> usize {
        self.inventories
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }

    /// The Kubernetes client, or why there is none (deferral only when `client` allows it).
    pub fn client(&self, client: ClientCapabilities) -> Result<kube::Client, NotReady> {
        let c = self
            .configured
            .read()
            .map(|c| c.clone())
            .unwrap_or(Configured::Pending);
        match c {
            Configured::Ready(k) => Ok(k),
            Configured::Unknown(_) if client.deferral_allowed => {
                Err(NotReady::Defer(DeferredReason::ProviderConfigUnknown))
            }
            Configured::Unknown(attrs) => Err(NotReady::Fail(Diagnostic::error(
                "Provider configuration is not known until apply",
                format!(
                    "The sveltos provider's {} depend(s) on values known only after apply, and this Terraform \
                     version cannot defer. Apply the resources those values come from first (for example with \
                     -target), or configure the provider with known values. The provider never falls back to a \
                     default cluster.",
                    attrs.join(", ")
                ),
            ))),
            Configured::Failed(why) => Err(NotReady::Fail(Diagnostic::error(
                "Provider configuration failed",
                format!("The sveltos provider could not be configured: {why}"),
            ))),
            Configured::Pending => Err(NotReady::Fail(Diagnostic::error(
                "Provider not configured",
                "Terraform did not configure the sveltos provider before using it.",
            ))),
        }
    }
}

struct SveltosProvider {
    state: Arc<ProviderState>,
}

/// Builds the provider.
pub fn new() -> Arc<dyn tfplugin::Provider> {
    Arc::new(SveltosProvider {
        state: Arc::new(ProviderState::new()),
    })
}

/// The provider configuration schema: the connection attributes ([`config::with_connection_schema`]).
pub fn config_schema() -> Schema {
    let mut schema = Schema::new(0).markdown_description(
        "Connects to the management cluster that holds the ClusterProfiles and SveltosClusters. Same attributes, \
         environment variables and precedence as the `hashicorp/kubernetes` provider; with nothing set, \
         `KUBECONFIG` and then in-cluster configuration are used.",
    );
    schema.block = config::with_connection_schema(schema.block);
    schema
}

/// Maps the configuration block to [`KubeSettings`].
pub fn settings_from(config: &Value) -> KubeSettings {
    config::settings_from_value(config)
}

#[async_trait::async_trait]
impl tfplugin::Provider for SveltosProvider {
    fn schema(&self) -> Schema {
        config_schema()
    }

    fn resources(&self) -> Vec<Arc<dyn Resource>> {
        crate::resources::all(&self.state)
    }

    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        crate::data_sources::all(&self.state)
    }

    fn ephemeral_resources(&self) -> Vec<Arc<dyn EphemeralResource>> {
        crate::ephemeral::all(&self.state)
    }

    async fn configure(&self, req: ConfigureRequest) -> Diagnostics {
        let mut diags = Diagnostics::new();
        let unknown = config::unknown_attributes(&req.config, &AttributePath::root());
        let result = if !unknown.is_empty() {
            let unknown: Vec<String> = unknown.iter().map(ToString::to_string).collect();
            tracing::debug!(attributes = ?unknown, "provider configuration has unknown values");
            Configured::Unknown(unknown)
        } else {
            let settings = settings_from(&req.config);
            let env = |k: &str| std::env::var(k).ok();
            match config::connect(&settings, &env) {
                Ok(client) => Configured::Ready(client),
                Err(e @ config::ConfigError::Client(_)) => {
                    diags.error("Cannot create the Kubernetes client", e.to_string());
                    Configured::Failed(e.to_string())
                }
                Err(e) => {
                    let mut d = Diagnostic::error("Invalid provider configuration", e.to_string());
                    if let Some(path) = config::error_path(&e, &AttributePath::root()) {
                        d = d.with_attribute(path);
                    }
                    diags.push(d);
                    Configured::Failed(e.to_string())
                }
            }
        };
        if let Ok(mut c) = self.state.configured.write() {
            *c = result;
        }
        diags
    }
}

/// The environment an `inventory` block is resolved with: the home directory (to expand `~` in `config_path`),
/// nothing else: no `KUBE_*`, no `KUBECONFIG`, no in-cluster service account.
pub fn hub_environment(name: &str) -> Option<String> {
    matches!(name, "HOME" | "USERPROFILE")
        .then(|| std::env::var(name).ok())
        .flatten()
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
