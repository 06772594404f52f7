//! The validated `credentials` options, and their defaults.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use crate::{
    api::keys,
    domain::exec::{ExecScope, ServerAllowList},
};

/// Validated credential options.
#[derive(Debug, Clone, PartialEq)]
pub struct CredentialOptions {
    /// Label naming the profile on kubeconfig Secrets.
    pub secret_label: String,
    /// The consumer whose namespaces (labelled `x-k8s.io/cluster-inventory-consumer=<consumer>`) may supply
    /// credentials to profiles in any namespace ([`DEFAULT_CONSUMER`] unless configured; `None`: `consumer = ""`).
    pub consumer: Option<String>,
    /// `profile_namespace_secrets = false`: only Secrets in the consumer's namespaces (or `secret_namespaces`)
    /// count, a Secret next to its profile included. By default a Secret next to its profile counts too, whether
    /// `consumer` is set or not.
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
    /// What a `kubeconfig-secretreader` Secret supplies (`secret_reader_mode`).
    pub secret_reader_mode: SecretReaderMode,
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
            secret_reader_mode: SecretReaderMode::Credential,
            allow_exec_kubeconfigs: false,
            exec_allowed_servers: ServerAllowList::default(),
            exec_providers: BTreeMap::new(),
        }
    }
}

/// What the Secret a `kubeconfig-secretreader` access provider names supplies (`credentials.secret_reader_mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SecretReaderMode {
    /// `"credential"` (the default), as the upstream `kubeconfig-secretreader` plugin and access library do: the
    /// user of the chosen context (token, client certificate) from the Secret; the server, CA, TLS server name and
    /// proxy from the access provider's `cluster` entry in the ClusterProfile.
    #[default]
    Credential,
    /// `"whole_kubeconfig"`, the convention of Sveltos' clusterinventory-controller: the chosen context of the
    /// Secret's kubeconfig, cluster and user; the access provider's `cluster` entry only names the Secret.
    WholeKubeconfig,
}

impl SecretReaderMode {
    /// Every value, as written in the configuration.
    pub const VALUES: [&'static str; 2] = ["credential", "whole_kubeconfig"];

    /// The mode a configuration value names.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "credential" => Some(Self::Credential),
            "whole_kubeconfig" => Some(Self::WholeKubeconfig),
            _ => None,
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
