//! The `sveltos` provider: its configuration block (the hashicorp/kubernetes provider's connection attributes,
//! with the same names, environment variables and precedence) and the state shared with resources and data
//! sources.

use std::sync::{Arc, RwLock};

use crate::{
    k8s::config::{ExecSettings, KubeSettings, attribute_of, resolve},
    tfplugin::{
        self, AttributePath, ClientCapabilities, ConfigureRequest, DataSource, DeferredReason,
        Diagnostic, Diagnostics, Resource, Schema, Type, Value,
        schema::{Attribute, Block, NestedBlock},
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
}

/// Why a resource cannot talk to the cluster yet.
pub enum NotReady {
    /// Defer the operation (the client allows it).
    Defer(DeferredReason),
    /// Fail with this diagnostic.
    Fail(Diagnostic),
}

impl ProviderState {
    fn new() -> Self {
        Self {
            configured: RwLock::new(Configured::Pending),
        }
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

/// The provider configuration schema.
pub fn config_schema() -> Schema {
    let s = |name: &str, doc: &str| Attribute::string(name).optional().markdown_description(doc);
    Schema::new(0)
        .markdown_description(
            "Connects to the management cluster that holds the ClusterProfiles and SveltosClusters. Same attributes, \
             environment variables and precedence as the `hashicorp/kubernetes` provider; with nothing set, \
             `KUBECONFIG` and then in-cluster configuration are used.",
        )
        .attribute(s("config_path", "Path to a kubeconfig file. Env: `KUBE_CONFIG_PATH`."))
        .attribute(
            Attribute::list("config_paths", Type::String)
                .optional()
                .markdown_description("Kubeconfig files merged in order (first wins). Env: `KUBE_CONFIG_PATHS`."),
        )
        .attribute(s("config_context", "Kubeconfig context to use. Env: `KUBE_CTX`."))
        .attribute(s("config_context_auth_info", "Kubeconfig user to use. Env: `KUBE_CTX_AUTH_INFO`."))
        .attribute(s("config_context_cluster", "Kubeconfig cluster to use. Env: `KUBE_CTX_CLUSTER`."))
        .attribute(s("host", "API server URL. Env: `KUBE_HOST`."))
        .attribute(
            Attribute::string("token")
                .optional()
                .sensitive()
                .markdown_description("Bearer token. Env: `KUBE_TOKEN`."),
        )
        .attribute(s("cluster_ca_certificate", "PEM CA bundle of the API server. Env: `KUBE_CLUSTER_CA_CERT_DATA`."))
        .attribute(s("client_certificate", "PEM client certificate. Env: `KUBE_CLIENT_CERT_DATA`."))
        .attribute(
            Attribute::string("client_key")
                .optional()
                .sensitive()
                .markdown_description("PEM client key. Env: `KUBE_CLIENT_KEY_DATA`."),
        )
        .attribute(
            Attribute::bool("insecure")
                .optional()
                .markdown_description("Skip TLS verification of the API server. Env: `KUBE_INSECURE`."),
        )
        .attribute(s("tls_server_name", "Server name for TLS verification. Env: `KUBE_TLS_SERVER_NAME`."))
        .attribute(s("proxy_url", "Proxy URL for API requests. Env: `KUBE_PROXY_URL`."))
        .block(
            NestedBlock::single(
                "exec",
                Block::new()
                    .markdown_description("Exec credential plugin for the management cluster.")
                    .attribute(Attribute::string("api_version").required().markdown_description("ExecCredential API version, e.g. `client.authentication.k8s.io/v1`."))
                    .attribute(Attribute::string("command").required().markdown_description("Plugin command."))
                    .attribute(Attribute::list("args", Type::String).optional().markdown_description("Plugin arguments."))
                    .attribute(Attribute::map("env", Type::String).optional().markdown_description("Extra environment variables for the plugin.")),
            ),
        )
}

fn opt_string(v: &Value) -> Option<String> {
    v.as_str().filter(|s| !s.is_empty()).map(String::from)
}

/// Names of the configuration attributes whose values are unknown.
fn unknown_attributes(config: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(m) = config.as_map() {
        for (k, v) in m {
            if !v.is_wholly_known() {
                out.push(k.clone());
            }
        }
    }
    out
}

/// Maps the configuration block to [`KubeSettings`].
pub fn settings_from(config: &Value) -> KubeSettings {
    let exec = config.get_attr("exec");
    KubeSettings {
        config_path: opt_string(config.get_attr("config_path")),
        config_paths: config.get_attr("config_paths").as_string_vec(),
        config_context: opt_string(config.get_attr("config_context")),
        config_context_auth_info: opt_string(config.get_attr("config_context_auth_info")),
        config_context_cluster: opt_string(config.get_attr("config_context_cluster")),
        host: opt_string(config.get_attr("host")),
        token: opt_string(config.get_attr("token")),
        cluster_ca_certificate: opt_string(config.get_attr("cluster_ca_certificate")),
        client_certificate: opt_string(config.get_attr("client_certificate")),
        client_key: opt_string(config.get_attr("client_key")),
        insecure: config.get_attr("insecure").as_bool(),
        tls_server_name: opt_string(config.get_attr("tls_server_name")),
        proxy_url: opt_string(config.get_attr("proxy_url")),
        exec: (!exec.is_null()).then(|| ExecSettings {
            api_version: exec
                .get_attr("api_version")
                .as_str()
                .unwrap_or_default()
                .to_string(),
            command: exec
                .get_attr("command")
                .as_str()
                .unwrap_or_default()
                .to_string(),
            args: exec.get_attr("args").as_string_vec(),
            env: exec.get_attr("env").as_string_map(),
        }),
    }
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

    async fn configure(&self, req: ConfigureRequest) -> Diagnostics {
        let mut diags = Diagnostics::new();
        let unknown = unknown_attributes(&req.config);
        let result = if !unknown.is_empty() {
            tracing::debug!(attributes = ?unknown, "provider configuration has unknown values");
            Configured::Unknown(unknown)
        } else {
            let settings = settings_from(&req.config);
            let env = |k: &str| std::env::var(k).ok();
            match resolve(&settings, &env) {
                Ok(cfg) => match kube::Client::try_from(cfg) {
                    Ok(client) => Configured::Ready(client),
                    Err(e) => {
                        diags.error("Cannot create the Kubernetes client", e.to_string());
                        Configured::Failed(e.to_string())
                    }
                },
                Err(e) => {
                    let mut d = Diagnostic::error("Invalid provider configuration", e.to_string());
                    if let Some(attr) = attribute_of(&e) {
                        let mut parts = attr.split('.');
                        let mut path = AttributePath::attr(parts.next().unwrap_or(attr));
                        for part in parts {
                            path = path.then_attr(part);
                        }
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
        let data_sources = provider.data_sources();
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
            for d in &data_sources {
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
            let should_fail = !matches!(what, "absent" | "empty block" | "valid");
            assert_eq!(!first.is_empty(), should_fail, "{what}: {verdicts:?}");
        }
    }
}
