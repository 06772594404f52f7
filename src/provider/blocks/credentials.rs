//! The `credentials` block: one schema, one value mapping and one validation for the bridge resource, both
//! ClusterProfile data sources and the ephemeral credentials resource.

use crate::{
    bridge::{
        credentials::{
            CredentialOptions, CredentialsConfig,
            options::{ExecProviderConfig, validate},
        },
        exec::ProvidersFile,
    },
    k8s::credentials::{ProvidersFileError, read_providers_file},
    tfplugin::{
        AttributePath, Diagnostic, Diagnostics, Type, Value,
        schema::{Attribute, Block, NestedBlock, Nesting},
    },
};

/// The block's name.
pub const BLOCK: &str = "credentials";

/// The `credentials` block (optional, at most one).
pub fn block() -> NestedBlock {
    let md = |a: Attribute, d: &str| a.optional().markdown_description(d);
    NestedBlock::single(
        BLOCK,
        Block::new()
            .markdown_description(
                "Where kubeconfigs come from, and which sources the inventory may name. The same block, with the same \
                 rules, on `sveltos_cluster_inventory_bridge`, the `sveltos_clusterprofile(s)` data sources and the \
                 `sveltos_cluster_credentials` ephemeral resource.",
            )
            .attribute(md(
                Attribute::string("secret_label"),
                "Label naming the ClusterProfile on kubeconfig Secrets (default `x-k8s.io/cluster-profile`).",
            ))
            .attribute(md(
                Attribute::string("consumer"),
                "Consumer name of the KEP push model (default `sveltos`): labelled Secrets in namespaces labelled \
                 `x-k8s.io/cluster-inventory-consumer=<consumer>` may supply credentials to ClusterProfiles in any \
                 namespace. Unset, a Secret next to its ClusterProfile counts too; set explicitly, only Secrets in the \
                 consumer's namespaces (or `secret_namespaces`) count. `\"\"`: no consumer namespaces.",
            ))
            .attribute(md(
                Attribute::list("kubeconfig_keys", Type::String),
                "Secret data keys tried in order (default `[\"Config\", \"config\", \"kubeconfig\", \"value\"]`).",
            ))
            .attribute(md(
                Attribute::bool("use_access_providers"),
                "Use exec-plugin access providers from `status.accessProviders` (default true; the \
                 `kubeconfig-secretreader` provider is always understood).",
            ))
            .attribute(md(
                Attribute::string("exec_providers_file"),
                "Path of the KEP-5339 providers file (`{\"providers\": [{\"name\", \"execConfig\"}]}`) naming the exec \
                 plugins that may run.",
            ))
            .attribute(md(
                Attribute::string("refresh_before"),
                "Renew an exec credential when it expires within this long (Go duration, default `10m`): the re-plan \
                 right before apply uses this margin, `plan` twice it, so that a saved plan applied within this long \
                 of being made stays valid. Used by the bridge and the ephemeral credentials.",
            ))
            .attribute(md(
                Attribute::list("secret_namespaces", Type::String),
                "Namespaces whose labelled Secrets may supply credentials to ClusterProfiles in other namespaces \
                 (with `x-k8s.io/cluster-profile-namespace`), besides the consumer's namespaces.",
            ))
            .attribute(md(
                Attribute::list("secret_reader_namespaces", Type::String),
                "Namespaces, besides the ClusterProfile's own, in which a `kubeconfig-secretreader` access provider \
                 may name a Secret. A provider naming any other namespace is not read, and the cluster is skipped \
                 with a warning.",
            ))
            .attribute(md(
                Attribute::bool("allow_exec_kubeconfigs"),
                "Accept kubeconfigs whose users run an `exec` plugin (default false: such kubeconfigs would run a \
                 command inside Sveltos' pods, so they are refused). Set it only when Sveltos' images ship the plugin \
                 and you trust the inventory's writers with it.",
            ))
            .attribute(md(
                Attribute::list("exec_allowed_servers", Type::String),
                "When set, exec plugins only run for ClusterProfiles whose access provider's `server` host matches one \
                 of these patterns (`api.example.com`, `*.eks.amazonaws.com`, `10.0.0.1:6443`), whatever the \
                 provider; each provider's `exec_providers[...].servers` applies as well.",
            ))
            .attribute(md(
                exec_providers_attribute(),
                "Which ClusterProfiles may use each provider of `exec_providers_file`, keyed by the provider's name. \
                 A provider that is not listed here is never run, for any ClusterProfile (the ClusterProfiles naming \
                 it are skipped with a warning that names this attribute).",
            )),
    )
}

/// The `exec_providers` attribute: a map of provider name to scope.
fn exec_providers_attribute() -> Attribute {
    let md = |a: Attribute, d: &str| a.markdown_description(d);
    Attribute::nested(
        "exec_providers",
        Nesting::Map,
        [
            md(
                Attribute::list("namespaces", Type::String).required(),
                "Namespaces whose ClusterProfiles may use the provider (a token it mints is written only into the \
                 bridged Secret of the ClusterProfile it was minted for), or `[\"*\"]` for every namespace the \
                 configuration selects.",
            ),
            md(
                Attribute::list("servers", Type::String).optional(),
                "Host patterns the ClusterProfile's `cluster.server` must match before the plugin runs, in the syntax \
                 of `exec_allowed_servers`; when set, the server must also be `https://` without \
                 `insecure-skip-tls-verify`. Default: any server.",
            ),
            md(
                Attribute::list("profile_env", Type::String).optional(),
                "Environment variables a ClusterProfile may add through the \
                 `clusterprofiles.multicluster.x-k8s.io/exec/additional-envs` extension (exact names; read only \
                 when the providers file sets `profileSourcedEnvVarsPolicy`). Default: none; a ClusterProfile adding \
                 any other variable is skipped with a warning. Variables that change what the plugin runs or trusts \
                 (`PATH`, `LD_*`, proxies, ...) cannot be listed.",
            ),
        ],
    )
}

fn opt_str(v: &Value) -> Option<String> {
    v.as_str().map(String::from)
}

fn opt_list(v: &Value) -> Option<Vec<String>> {
    v.as_list().map(|_| v.as_string_vec())
}

/// Reads the block (`None` when absent or not known yet).
pub fn from_value(block: &Value) -> Option<CredentialsConfig> {
    if block.is_null() || !block.is_known() {
        return None;
    }
    Some(CredentialsConfig {
        secret_label: opt_str(block.get_attr("secret_label")),
        consumer: opt_str(block.get_attr("consumer")),
        kubeconfig_keys: opt_list(block.get_attr("kubeconfig_keys")),
        use_access_providers: block.get_attr("use_access_providers").as_bool(),
        exec_providers_file: opt_str(block.get_attr("exec_providers_file")),
        refresh_before: opt_str(block.get_attr("refresh_before")),
        secret_namespaces: opt_list(block.get_attr("secret_namespaces")),
        secret_reader_namespaces: opt_list(block.get_attr("secret_reader_namespaces")),
        allow_exec_kubeconfigs: block.get_attr("allow_exec_kubeconfigs").as_bool(),
        exec_allowed_servers: opt_list(block.get_attr("exec_allowed_servers")),
        exec_providers: block.get_attr("exec_providers").as_map().map(|m| {
            m.iter()
                .map(|(name, e)| {
                    let e = ExecProviderConfig {
                        namespaces: opt_list(e.get_attr("namespaces")),
                        servers: opt_list(e.get_attr("servers")),
                        profile_env: opt_list(e.get_attr("profile_env")),
                    };
                    (name.clone(), e)
                })
                .collect()
        }),
    })
}

/// Writes the block back (used to restore an imported bridge's configuration).
pub fn to_value(config: Option<&CredentialsConfig>) -> Value {
    let Some(c) = config else {
        return Value::Null;
    };
    let s = |v: &Option<String>| v.as_ref().map(Value::string).unwrap_or(Value::Null);
    let l = |v: &Option<Vec<String>>| {
        v.as_ref()
            .map(|l| Value::string_list(l.clone()))
            .unwrap_or(Value::Null)
    };
    let b = |v: Option<bool>| v.map(Value::bool).unwrap_or(Value::Null);
    Value::object([
        ("secret_label", s(&c.secret_label)),
        ("consumer", s(&c.consumer)),
        ("kubeconfig_keys", l(&c.kubeconfig_keys)),
        ("use_access_providers", b(c.use_access_providers)),
        ("exec_providers_file", s(&c.exec_providers_file)),
        ("refresh_before", s(&c.refresh_before)),
        ("secret_namespaces", l(&c.secret_namespaces)),
        ("secret_reader_namespaces", l(&c.secret_reader_namespaces)),
        ("allow_exec_kubeconfigs", b(c.allow_exec_kubeconfigs)),
        ("exec_allowed_servers", l(&c.exec_allowed_servers)),
        (
            "exec_providers",
            c.exec_providers
                .as_ref()
                .map(|m| {
                    Value::map(m.iter().map(|(name, e)| {
                        let v = Value::object([
                            ("namespaces", l(&e.namespaces)),
                            ("servers", l(&e.servers)),
                            ("profile_env", l(&e.profile_env)),
                        ]);
                        (name.clone(), v)
                    }))
                })
                .unwrap_or(Value::Null),
        ),
    ])
}

/// Validates the block's value into options; errors carry attribute paths under `credentials`.
pub fn options(block: &Value) -> Result<CredentialOptions, Diagnostics> {
    validate(from_value(block).as_ref()).map_err(|p| crate::provider::diag::problems_diags(&p))
}

/// Validation at `Validate*Config` time: the block's errors once its value is wholly known (unknown values are
/// checked again when they are known).
pub fn check(block: &Value) -> Diagnostics {
    if !block.is_wholly_known() {
        return Diagnostics::new();
    }
    options(block).err().unwrap_or_default()
}

/// The providers file the options name, read and parsed (`None` when none is configured). The error points at
/// `credentials.exec_providers_file`.
pub fn providers(options: &CredentialOptions) -> Result<Option<ProvidersFile>, Diagnostic> {
    let Some(path) = &options.exec_providers_file else {
        return Ok(None);
    };
    read_providers_file(path)
        .map(|file| Some(file.scoped(&options.exec_providers)))
        .map_err(|e| {
            let summary = match e {
                ProvidersFileError::Read { .. } => "Cannot read the exec providers file",
                ProvidersFileError::Parse { .. } => "Invalid exec providers file",
            };
            Diagnostic::error(summary, e.to_string())
                .with_attribute(AttributePath::attr(BLOCK).then_attr("exec_providers_file"))
        })
}

/// Options and providers file of a block value: what every data source and the ephemeral resource need.
pub fn settings(block: &Value) -> Result<(CredentialOptions, Option<ProvidersFile>), Diagnostics> {
    let options = options(block)?;
    let providers = providers(&options).map_err(Diagnostics::from)?;
    Ok((options, providers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_round_trip_covers_every_attribute_of_the_schema() {
        let c = CredentialsConfig {
            secret_label: Some("a/b".into()),
            consumer: Some("c".into()),
            kubeconfig_keys: Some(vec!["k".into()]),
            use_access_providers: Some(false),
            exec_providers_file: Some("/p.json".into()),
            refresh_before: Some("5m".into()),
            secret_namespaces: Some(vec!["n".into()]),
            secret_reader_namespaces: Some(vec!["r".into()]),
            allow_exec_kubeconfigs: Some(true),
            exec_allowed_servers: Some(vec!["*.x".into()]),
            exec_providers: Some(
                [(
                    "aws".to_string(),
                    ExecProviderConfig {
                        namespaces: Some(vec!["team-a".into()]),
                        servers: Some(vec!["*.eks.amazonaws.com".into()]),
                        profile_env: Some(vec!["AWS_REGION".into()]),
                    },
                )]
                .into(),
            ),
        };
        let v = to_value(Some(&c));
        let names: Vec<&String> = v.as_map().unwrap().keys().collect();
        let schema_names: Vec<String> = {
            let mut n: Vec<String> = block()
                .block
                .attributes
                .iter()
                .map(|a| a.name.clone())
                .collect();
            n.sort();
            n
        };
        assert_eq!(names.into_iter().cloned().collect::<Vec<_>>(), schema_names);
        assert_eq!(from_value(&v), Some(c));
        assert_eq!(from_value(&Value::Null), None);
    }
}
