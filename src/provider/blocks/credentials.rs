//! The `credentials` block: one schema and one validation (its value is read as the core's [`CredentialsConfig`],
//! a field of each configuration type) for the bridge resource, both
//! ClusterProfile data sources and the ephemeral credentials resource.

use crate::{
    domain::{
        credentials::{CredentialOptions, CredentialsConfig, options::validate},
        exec::ProvidersFile,
    },
    k8s::credentials::{ProvidersFileError, read_providers_file},
    tfplugin::{
        AttributePath, Diagnostic, Diagnostics, Type,
        schema::{Attribute, Block, NestedBlock, Nesting},
    },
};

/// The block's name.
pub const BLOCK: &str = "credentials";

/// The `credentials` block (optional, at most one).
pub fn block() -> NestedBlock {
    let block = Block::new().markdown_description(
        "Where kubeconfigs come from, and which sources the inventory may name. The same block, with the same \
         rules, on `sveltos_cluster_inventory_bridge`, the `sveltos_clusterprofile(s)` data sources and the \
         `sveltos_cluster_credentials` ephemeral resource.",
    );
    NestedBlock::single(BLOCK, with_scope_attributes(with_source_attributes(block)))
}

/// An optional attribute with its description.
fn optional(attribute: Attribute, doc: &str) -> Attribute {
    attribute.optional().markdown_description(doc)
}

/// Adds the attributes that say where kubeconfigs come from: the labelled Secrets (label, consumer, data keys) and
/// the access providers (whether to use them, the exec providers file, when to renew what they mint).
fn with_source_attributes(block: Block) -> Block {
    let md = optional;
    block
        .attribute(md(
            Attribute::string("secret_label"),
            "Label naming the ClusterProfile on kubeconfig Secrets (default `x-k8s.io/cluster-profile`).",
        ))
        .attribute(md(
            Attribute::string("consumer"),
            "Consumer name of the KEP push model (default `sveltos`): labelled Secrets in namespaces labelled \
             `x-k8s.io/cluster-inventory-consumer=<consumer>` may supply credentials to ClusterProfiles in any \
             namespace. `\"\"`: no consumer namespaces. Set or unset, the same default behaves the same.",
        ))
        .attribute(md(
            Attribute::bool("profile_namespace_secrets"),
            "Whether a labelled Secret in a ClusterProfile's own namespace may supply its credentials (default \
             true). `false`: only Secrets in the consumer's namespaces and `secret_namespaces` count, for a \
             ClusterProfile's namespace that its writers share with others.",
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
}

/// Adds the attributes that limit what the inventory may name: the namespaces whose Secrets may supply or be named,
/// and the exec plugins that may run, and for which ClusterProfiles and servers.
fn with_scope_attributes(block: Block) -> Block {
    let md = optional;
    block
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
            Attribute::string("secret_reader_mode"),
            "What the Secret a `kubeconfig-secretreader` access provider names supplies. `\"credential\"` \
             (default, as the upstream plugin and access library): only the user of the chosen context (token, \
             client certificate); the server, CA, `tls-server-name` and `proxy-url` come from the access \
             provider's `cluster` entry in the ClusterProfile, and the plan warns for each cluster whose Secret \
             names another server. `\"whole_kubeconfig\"` (the convention of Sveltos' clusterinventory-controller, \
             for migrating from it): the chosen context of the Secret's kubeconfig, its cluster and its user.",
        ))
        .attribute(md(
            Attribute::bool("allow_exec_kubeconfigs"),
            "Accept kubeconfigs whose users run an `exec` plugin in what the bridge writes for Sveltos (default \
             false: the command would run inside Sveltos' pods, so they are refused). Set it only when Sveltos' \
             images ship the plugin and you trust the inventory's writers with it. `sveltos_cluster_credentials` \
             refuses `true`: there the command would run on the machine running Terraform.",
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
        ))
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

/// Validates the block into options; errors carry attribute paths under `credentials`.
pub fn options(block: Option<&CredentialsConfig>) -> Result<CredentialOptions, Diagnostics> {
    validate(block).map_err(|p| crate::provider::diag::problems_diags(&p))
}

/// Validation at `Validate*Config` time (the block wholly known: the caller checks values not known yet later).
pub fn check(block: Option<&CredentialsConfig>) -> Diagnostics {
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

/// Options and providers file of the block: what every data source and the ephemeral resource need.
pub fn settings(
    block: Option<&CredentialsConfig>,
) -> Result<(CredentialOptions, Option<ProvidersFile>), Diagnostics> {
    let options = options(block)?;
    let providers = providers(&options).map_err(Diagnostics::from)?;
    Ok((options, providers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_covers_the_schema() {
        crate::tfplugin::value::serde_bridge::coverage::assert_covers::<CredentialsConfig>(
            &block().block,
            &[],
        );
    }
}
