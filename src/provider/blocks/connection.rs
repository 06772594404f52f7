//! The connection attributes as a Terraform block: the schema (shared by the provider block and any block
//! "with the same connection attributes as the provider", such as a resource's `inventory` block), the
//! mapping of such a block's value to [`KubeSettings`], and attribute paths for [`ConfigError`]s.

use crate::k8s::config::{ConfigError, attribute_of};
use crate::k8s::config::{ExecSettings, KubeSettings};
use crate::tfplugin::{
    AttributePath, Type, Value,
    schema::{Attribute, Block, NestedBlock},
};

/// Adds the connection attributes and the `exec` block (the `hashicorp/kubernetes` provider's names,
/// with their `KUBE_*` variables in the descriptions) to `block`, after what it already holds.
pub fn with_connection_schema(block: Block) -> Block {
    let s = |name: &str, doc: &str| Attribute::string(name).optional().markdown_description(doc);
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
        .block(NestedBlock::single(
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
                        .markdown_description("Extra environment variables for the plugin."),
                ),
        ))
}

fn opt_string(v: &Value) -> Option<String> {
    v.as_str().filter(|s| !s.is_empty()).map(String::from)
}

/// Paths (under `prefix`) of the connection attributes whose values are not known yet; empty when the
/// block is wholly known and can be mapped with [`settings_from_value`].
pub fn unknown_attributes(block: &Value, prefix: &AttributePath) -> Vec<AttributePath> {
    block
        .as_map()
        .into_iter()
        .flatten()
        .filter(|(_, v)| !v.is_wholly_known())
        .map(|(k, _)| prefix.clone().then_attr(k))
        .collect()
}

/// Maps a block built by [`with_connection_schema`] to settings. Null and empty values mean unset; the
/// `KUBE_*` fallbacks are applied later, by [`crate::k8s::config::resolve`]/[`crate::k8s::config::connect`].
pub fn settings_from_value(block: &Value) -> KubeSettings {
    let exec = block.get_attr("exec");
    let string = |name: &str| opt_string(block.get_attr(name));
    KubeSettings {
        config_path: string("config_path"),
        config_paths: block.get_attr("config_paths").as_string_vec(),
        config_context: string("config_context"),
        config_context_auth_info: string("config_context_auth_info"),
        config_context_cluster: string("config_context_cluster"),
        host: string("host"),
        token: string("token"),
        cluster_ca_certificate: string("cluster_ca_certificate"),
        client_certificate: string("client_certificate"),
        client_key: string("client_key"),
        insecure: block.get_attr("insecure").as_bool(),
        tls_server_name: string("tls_server_name"),
        proxy_url: string("proxy_url"),
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
        let s = settings_from_value(&value);
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
