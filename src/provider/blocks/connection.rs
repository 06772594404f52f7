//! The connection attributes as a Terraform block: the schema (shared by the provider block and any block
//! "with the same connection attributes as the provider", such as a resource's `inventory` block), the
//! block as written ([`ConnectionConfig`], read in one pass with the plugin layer's serde bridge), its mapping to
//! [`KubeSettings`], and attribute paths for [`ConfigError`]s.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::k8s::config::{ConfigError, attribute_of};
use crate::k8s::config::{ExecSettings, KubeSettings};
use crate::tfplugin::{
    AttributePath, Diagnostic, Type, Value,
    schema::{Attribute, Block, NestedBlock},
    value::{Sensitive, from_value},
};

/// Adds the connection attributes and the `exec` block (the `hashicorp/kubernetes` provider's names,
/// with their `KUBE_*` variables in the descriptions) to `block`, after what it already holds.
pub fn with_connection_schema(block: Block) -> Block {
    with_server_attributes(with_kubeconfig_attributes(block)).block(exec_block())
}

/// An optional string attribute with its description.
fn optional_string(name: &str, doc: &str) -> Attribute {
    Attribute::string(name).optional().markdown_description(doc)
}

/// Adds the attributes that choose a kubeconfig and what of it to use: files, context, user and cluster.
fn with_kubeconfig_attributes(block: Block) -> Block {
    let s = optional_string;
    block
        .attribute(s(
            "config_path",
            "Path to a kubeconfig file. Env: `KUBE_CONFIG_PATH`.",
        ))
        .attribute(
            Attribute::list("config_paths", Type::String)
                .optional()
                .markdown_description(
                    "Kubeconfig files merged in order (first wins). Env: `KUBE_CONFIG_PATHS`.",
                ),
        )
        .attribute(s(
            "config_context",
            "Kubeconfig context to use. Env: `KUBE_CTX`.",
        ))
        .attribute(s(
            "config_context_auth_info",
            "Kubeconfig user to use. Env: `KUBE_CTX_AUTH_INFO`.",
        ))
        .attribute(s(
            "config_context_cluster",
            "Kubeconfig cluster to use. Env: `KUBE_CTX_CLUSTER`.",
        ))
}

/// Adds the attributes that give the API server and its credentials directly: host, token, certificates and
/// TLS and proxy settings.
fn with_server_attributes(block: Block) -> Block {
    let s = optional_string;
    block
        .attribute(s("host", "API server URL. Env: `KUBE_HOST`."))
        .attribute(
            Attribute::string("token")
                .optional()
                .sensitive()
                .markdown_description("Bearer token. Env: `KUBE_TOKEN`."),
        )
        .attribute(s(
            "cluster_ca_certificate",
            "PEM CA bundle of the API server. Env: `KUBE_CLUSTER_CA_CERT_DATA`.",
        ))
        .attribute(s(
            "client_certificate",
            "PEM client certificate. Env: `KUBE_CLIENT_CERT_DATA`.",
        ))
        .attribute(
            Attribute::string("client_key")
                .optional()
                .sensitive()
                .markdown_description("PEM client key. Env: `KUBE_CLIENT_KEY_DATA`."),
        )
        .attribute(
            Attribute::bool("insecure").optional().markdown_description(
                "Skip TLS verification of the API server. Env: `KUBE_INSECURE`.",
            ),
        )
        .attribute(s(
            "tls_server_name",
            "Server name for TLS verification. Env: `KUBE_TLS_SERVER_NAME`.",
        ))
        .attribute(s(
            "proxy_url",
            "Proxy URL for API requests. Env: `KUBE_PROXY_URL`.",
        ))
}

/// The `exec` block: the exec credential plugin that authenticates to the management cluster.
fn exec_block() -> NestedBlock {
    NestedBlock::single(
        "exec",
        Block::new()
            .markdown_description("Exec credential plugin for the management cluster.")
            .attribute(
                Attribute::string("api_version")
                    .required()
                    .markdown_description(
                        "ExecCredential API version, e.g. `client.authentication.k8s.io/v1`.",
                    ),
            )
            .attribute(
                Attribute::string("command")
                    .required()
                    .markdown_description("Plugin command."),
            )
            .attribute(
                Attribute::list("args", Type::String)
                    .optional()
                    .markdown_description("Plugin arguments."),
            )
            .attribute(
                Attribute::map("env", Type::String)
                    .optional()
                    .sensitive()
                    .markdown_description("Extra environment variables for the plugin."),
            ),
    )
}

/// A block built by [`with_connection_schema`], as written: the provider block, or an `inventory` block (whose
/// resource version adds the write-only twins `token_wo`, `client_key_wo` and `exec.env_wo`; always `None`
/// elsewhere). Secrets are [`Sensitive`]. Empty strings mean unset ([`ConnectionConfig::settings`]).
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConnectionConfig {
    /// `config_path`.
    pub config_path: Option<String>,
    /// `config_paths`.
    pub config_paths: Option<Vec<String>>,
    /// `config_context`.
    pub config_context: Option<String>,
    /// `config_context_auth_info`.
    pub config_context_auth_info: Option<String>,
    /// `config_context_cluster`.
    pub config_context_cluster: Option<String>,
    /// `host`.
    pub host: Option<String>,
    /// `token`.
    pub token: Option<Sensitive<String>>,
    /// `token_wo` (the resource's `inventory` block only).
    pub token_wo: Option<Sensitive<String>>,
    /// `cluster_ca_certificate`.
    pub cluster_ca_certificate: Option<String>,
    /// `client_certificate`.
    pub client_certificate: Option<String>,
    /// `client_key`.
    pub client_key: Option<Sensitive<String>>,
    /// `client_key_wo` (the resource's `inventory` block only).
    pub client_key_wo: Option<Sensitive<String>>,
    /// `insecure`.
    pub insecure: Option<bool>,
    /// `tls_server_name`.
    pub tls_server_name: Option<String>,
    /// `proxy_url`.
    pub proxy_url: Option<String>,
    /// The `exec` block.
    pub exec: Option<ExecConfig>,
}

/// The `exec` block of a connection.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExecConfig {
    /// `api_version` (required).
    pub api_version: String,
    /// `command` (required).
    pub command: String,
    /// `args`.
    pub args: Option<Vec<String>>,
    /// `env`.
    pub env: Option<Sensitive<BTreeMap<String, String>>>,
    /// `env_wo` (the resource's `inventory` block only).
    pub env_wo: Option<Sensitive<BTreeMap<String, String>>>,
}

/// The write-only twins of a connection's stored secret attributes: (stored, write-only).
pub const TWINS: [(&str, &str); 2] = [("token", "token_wo"), ("client_key", "client_key_wo")];

/// The exec block's environment and its write-only twin.
pub const ENV_TWINS: (&str, &str) = ("env", "env_wo");

impl ConnectionConfig {
    /// The connection settings: null and empty values mean unset, write-only twins are folded into their stored
    /// attributes (`token_wo` wins over `token`, `exec.env_wo` adds to `exec.env`). The `KUBE_*` fallbacks are
    /// applied later, by [`crate::k8s::config::resolve`]/[`crate::k8s::config::connect`].
    pub fn settings(&self) -> KubeSettings {
        let string = |v: &Option<String>| v.clone().filter(|s| !s.is_empty());
        let secret = |wo: &Option<Sensitive<String>>, stored: &Option<Sensitive<String>>| {
            string(&wo.as_ref().or(stored.as_ref()).map(|s| s.expose().clone()))
        };
        KubeSettings {
            config_path: string(&self.config_path),
            config_paths: self.config_paths.clone().unwrap_or_default(),
            config_context: string(&self.config_context),
            config_context_auth_info: string(&self.config_context_auth_info),
            config_context_cluster: string(&self.config_context_cluster),
            host: string(&self.host),
            token: secret(&self.token_wo, &self.token),
            cluster_ca_certificate: string(&self.cluster_ca_certificate),
            client_certificate: string(&self.client_certificate),
            client_key: secret(&self.client_key_wo, &self.client_key),
            insecure: self.insecure,
            tls_server_name: string(&self.tls_server_name),
            proxy_url: string(&self.proxy_url),
            exec: self.exec.as_ref().map(|e| {
                let mut env = e.env.clone().map(Sensitive::into_inner).unwrap_or_default();
                env.extend(e.env_wo.iter().flat_map(|w| w.expose().clone()));
                ExecSettings {
                    api_version: e.api_version.clone(),
                    command: e.command.clone(),
                    args: e.args.clone().unwrap_or_default(),
                    env,
                }
            }),
        }
    }

    /// The write-only twin of stored attribute `stored`, when it is set.
    pub fn twin_set(&self, stored: &str) -> bool {
        match stored {
            "token" => self.token_wo.is_some(),
            "client_key" => self.client_key_wo.is_some(),
            _ => false,
        }
    }

    /// Which write-only twins are set along with their stored attribute: (stored, write-only) pairs, and the
    /// variables in both `exec.env` and `exec.env_wo`.
    pub fn conflicts(&self) -> (Vec<(&'static str, &'static str)>, Vec<String>) {
        let pairs = [
            (self.token.is_some(), self.token_wo.is_some()),
            (self.client_key.is_some(), self.client_key_wo.is_some()),
        ];
        let twins = TWINS
            .into_iter()
            .zip(pairs)
            .filter(|(_, (a, b))| *a && *b)
            .map(|(t, _)| t)
            .collect();
        let env = self
            .exec
            .as_ref()
            .and_then(|e| Some((e.env.as_ref()?, e.env_wo.as_ref()?)))
            .map(|(env, wo)| {
                wo.expose()
                    .keys()
                    .filter(|k| env.expose().contains_key(*k))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        (twins, env)
    }

    /// This connection without its secrets (`token`, `client_key`, `exec.env` and their write-only twins): what
    /// may be recorded outside the state.
    pub fn without_secrets(&self) -> Self {
        Self {
            token: None,
            token_wo: None,
            client_key: None,
            client_key_wo: None,
            exec: self.exec.as_ref().map(|e| ExecConfig {
                env: None,
                env_wo: None,
                ..e.clone()
            }),
            ..self.clone()
        }
    }
}

/// Paths (under `prefix`) of the connection attributes whose values are not known yet; empty when the
/// block is wholly known.
pub fn unknown_attributes(block: &Value, prefix: &AttributePath) -> Vec<AttributePath> {
    block
        .as_map()
        .into_iter()
        .flatten()
        .filter(|(_, v)| !v.is_wholly_known())
        .map(|(k, _)| prefix.clone().then_attr(k))
        .collect()
}

/// Reads a block built by [`with_connection_schema`] (the provider block, known) into settings; an error names
/// the attribute.
pub fn settings_from_value(block: &Value) -> Result<KubeSettings, Diagnostic> {
    from_value::<ConnectionConfig>(block)
        .map(|c| c.settings())
        .map_err(|e| e.to_diagnostic())
}

/// The attribute path (under `prefix`, the block's own path: root for the provider block) that `err`
/// concerns; `None` when it is about the environment or the configuration as a whole.
pub fn error_path(err: &ConfigError, prefix: &AttributePath) -> Option<AttributePath> {
    let dotted = attribute_of(err)?;
    Some(
        dotted
            .split('.')
            .fold(prefix.clone(), AttributePath::then_attr),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_added_after_what_the_block_holds() {
        let block =
            with_connection_schema(Block::new().attribute(Attribute::string("own").optional()));
        let names: Vec<&str> = block.attributes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names.first(), Some(&"own"));
        for name in [
            "config_path",
            "config_paths",
            "host",
            "token",
            "client_key",
            "insecure",
            "proxy_url",
        ] {
            assert!(names.contains(&name), "{name} missing: {names:?}");
        }
        assert!(block.attribute_named("token").is_some_and(|a| a.sensitive));
        assert!(
            block
                .attribute_named("client_key")
                .is_some_and(|a| a.sensitive)
        );
        assert!(block.block_named("exec").is_some());
    }

    #[test]
    fn a_nested_block_maps_to_settings_with_paths_under_its_prefix() {
        let value = Value::object([
            ("host", Value::string("https://hub.example:6443")),
            ("token", Value::string("")),
            ("config_paths", Value::string_list(["/a", "/b"])),
            ("insecure", Value::bool(true)),
            (
                "exec",
                Value::object([
                    (
                        "api_version",
                        Value::string("client.authentication.k8s.io/v1"),
                    ),
                    ("command", Value::string("get-token")),
                    ("args", Value::string_list(["--x"])),
                    ("env", Value::string_map([("A", "1")])),
                ]),
            ),
        ]);
        let s = settings_from_value(&value).unwrap();
        assert_eq!(s.host.as_deref(), Some("https://hub.example:6443"));
        assert_eq!(s.token, None, "empty means unset");
        assert_eq!(s.config_paths, ["/a", "/b"]);
        assert_eq!(s.insecure, Some(true));
        let exec = s.exec.expect("exec");
        assert_eq!(
            (exec.command.as_str(), exec.args.len(), exec.env.len()),
            ("get-token", 1, 1)
        );

        let prefix = AttributePath::attr("inventory");
        let unknown = Value::object([("host", Value::unknown()), ("token", Value::string("t"))]);
        let paths: Vec<String> = unknown_attributes(&unknown, &prefix)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(paths, ["inventory.host"]);
        assert!(unknown_attributes(&value, &prefix).is_empty());

        let err = ConfigError::ExecMissingField {
            field: "exec.command",
        };
        assert_eq!(
            error_path(&err, &prefix).map(|p| p.to_string()).as_deref(),
            Some("inventory.exec.command")
        );
        assert_eq!(
            error_path(&ConfigError::InsecureWithCa, &AttributePath::root()),
            Some(AttributePath::attr("insecure"))
        );
        assert_eq!(error_path(&ConfigError::NothingConfigured, &prefix), None);
    }
}
