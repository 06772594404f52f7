//! The `credentials` options: as the user wrote them ([`CredentialsConfig`], also kept in the bridge's
//! configuration record) and validated ([`CredentialOptions`]). One validator for every resource, data source and
//! ephemeral resource, so that they accept and reject exactly the same values.

mod checks;
mod exec_providers;
#[cfg(test)]
mod tests;

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use serde::{Deserialize, Serialize};

use crate::{
    api::keys,
    bridge::{
        exec::{ExecScope, ServerAllowList},
        problem::Problem,
    },
};
use checks::namespace_list;
pub use checks::server_pattern;

/// The `credentials` block as written (every attribute optional).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CredentialsConfig {
    /// `secret_label`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_label: Option<String>,
    /// `consumer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer: Option<String>,
    /// `kubeconfig_keys`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubeconfig_keys: Option<Vec<String>>,
    /// `use_access_providers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_access_providers: Option<bool>,
    /// `exec_providers_file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_providers_file: Option<String>,
    /// `refresh_before`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_before: Option<String>,
    /// `secret_namespaces`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_namespaces: Option<Vec<String>>,
    /// `secret_reader_namespaces`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_reader_namespaces: Option<Vec<String>>,
    /// `allow_exec_kubeconfigs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_exec_kubeconfigs: Option<bool>,
    /// `exec_allowed_servers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_allowed_servers: Option<Vec<String>>,
    /// `exec_providers`, by provider name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_providers: Option<BTreeMap<String, ExecProviderConfig>>,
}

/// One entry of `credentials.exec_providers` as written: which ClusterProfiles may use a provider of the providers
/// file, and what they may add.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecProviderConfig {
    /// `namespaces` (required): namespace names, or `["*"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<Vec<String>>,
    /// `servers`: host patterns, as `exec_allowed_servers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<Vec<String>>,
    /// `profile_env`: variable names a profile may add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_env: Option<Vec<String>>,
}

/// Validated credential options.
#[derive(Debug, Clone, PartialEq)]
pub struct CredentialOptions {
    /// Label naming the profile on kubeconfig Secrets.
    pub secret_label: String,
    /// The consumer whose namespaces (labelled `x-k8s.io/cluster-inventory-consumer=<consumer>`) may supply
    /// credentials to profiles in any namespace ([`DEFAULT_CONSUMER`] unless configured; `None`: `consumer = ""`).
    pub consumer: Option<String>,
    /// `consumer` was set explicitly: only Secrets in the consumer's namespaces (or `secret_namespaces`) count,
    /// a Secret next to its profile included. With the default consumer, a Secret next to its profile counts too.
    pub consumer_only: bool,
    /// Keys tried, in order, for the kubeconfig inside a Secret.
    pub kubeconfig_keys: Vec<String>,
    /// Use exec-plugin access providers (the `kubeconfig-secretreader` provider is always used).
    pub use_access_providers: bool,
    /// Path of the providers file (read by `crate::k8s`).
    pub exec_providers_file: Option<String>,
    /// Refresh exec credentials this long before they expire.
    pub refresh_before: Duration,
    /// Namespaces whose labelled Secrets may supply credentials to profiles in other namespaces.
    pub secret_namespaces: BTreeSet<String>,
    /// Namespaces, besides the profile's own, that a `kubeconfig-secretreader` provider may name.
    pub secret_reader_namespaces: BTreeSet<String>,
    /// Accept kubeconfigs whose users run an `exec` plugin (Sveltos images that ship the plugin).
    pub allow_exec_kubeconfigs: bool,
    /// When non-empty, exec plugins only run for profiles whose server host matches one of these patterns.
    pub exec_allowed_servers: ServerAllowList,
    /// Which profiles may use each provider of the providers file (a provider not here is used by none).
    pub exec_providers: BTreeMap<String, ExecScope>,
}

impl Default for CredentialOptions {
    fn default() -> Self {
        Self {
            secret_label: keys::CLUSTER_PROFILE_LABEL.to_string(),
            consumer: Some(DEFAULT_CONSUMER.to_string()),
            consumer_only: false,
            kubeconfig_keys: default_kubeconfig_keys(),
            use_access_providers: true,
            exec_providers_file: None,
            refresh_before: DEFAULT_REFRESH_BEFORE,
            secret_namespaces: BTreeSet::new(),
            secret_reader_namespaces: BTreeSet::new(),
            allow_exec_kubeconfigs: false,
            exec_allowed_servers: ServerAllowList::default(),
            exec_providers: BTreeMap::new(),
        }
    }
}

/// The consumer name used when `credentials.consumer` is not set: the KEP push model's Secrets for Sveltos live in
/// namespaces labelled `x-k8s.io/cluster-inventory-consumer=sveltos`. Labelling a namespace is a cluster-scoped
/// write (`patch namespaces`), which the tenants of the security guide do not have.
pub const DEFAULT_CONSUMER: &str = "sveltos";

/// Default `refresh_before`.
pub const DEFAULT_REFRESH_BEFORE: Duration = Duration::from_secs(600);

/// The default `kubeconfig_keys`.
pub fn default_kubeconfig_keys() -> Vec<String> {
    ["Config", "config", "kubeconfig", "value"]
        .map(String::from)
        .to_vec()
}

impl CredentialsConfig {
    /// Validates the block into [`CredentialOptions`]. Every problem is an error whose path starts at
    /// `credentials`; no file is read here (the providers file is read by `crate::k8s`).
    pub fn validate(&self) -> Result<CredentialOptions, Vec<Problem>> {
        let mut problems = Vec::new();
        let mut opts = CredentialOptions::default();
        if let Some(label) = self.checked_secret_label(&mut problems) {
            opts.secret_label = label;
        }
        if let Some(consumer) = self.checked_consumer(&mut problems) {
            opts.consumer_only = consumer.is_some();
            opts.consumer = consumer;
        }
        if let Some(keys) = self.checked_kubeconfig_keys(&mut problems) {
            opts.kubeconfig_keys = keys;
        }
        if let Some(b) = self.use_access_providers {
            opts.use_access_providers = b;
        }
        opts.exec_providers_file = self.checked_exec_providers_file(&mut problems);
        if let Some(d) = self.checked_refresh_before(&mut problems) {
            opts.refresh_before = d;
        }
        opts.secret_namespaces =
            namespace_list(&mut problems, "secret_namespaces", &self.secret_namespaces);
        opts.secret_reader_namespaces = namespace_list(
            &mut problems,
            "secret_reader_namespaces",
            &self.secret_reader_namespaces,
        );
        opts.allow_exec_kubeconfigs = self.allow_exec_kubeconfigs.unwrap_or(false);
        opts.exec_allowed_servers = self.checked_exec_allowed_servers(&mut problems);
        opts.exec_providers = self.checked_exec_providers(&mut problems);
        if problems.is_empty() {
            Ok(opts)
        } else {
            Err(problems)
        }
    }
}

/// Validates an optional block (absent: the defaults).
pub fn validate(config: Option<&CredentialsConfig>) -> Result<CredentialOptions, Vec<Problem>> {
    config.cloned().unwrap_or_default().validate()
}
