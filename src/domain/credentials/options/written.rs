//! The `credentials` block as the user wrote it, also kept in the bridge's configuration record.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// The `credentials` block as written (every attribute optional).
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CredentialsConfig {
    /// `secret_label`.
    #[serde(default)]
    pub secret_label: Option<String>,
    /// `consumer`.
    #[serde(default)]
    pub consumer: Option<String>,
    /// `profile_namespace_secrets`.
    #[serde(default)]
    pub profile_namespace_secrets: Option<bool>,
    /// `kubeconfig_keys`.
    #[serde(default)]
    pub kubeconfig_keys: Option<Vec<String>>,
    /// `use_access_providers`.
    #[serde(default)]
    pub use_access_providers: Option<bool>,
    /// `exec_providers_file`.
    #[serde(default)]
    pub exec_providers_file: Option<String>,
    /// `refresh_before`.
    #[serde(default)]
    pub refresh_before: Option<String>,
    /// `secret_namespaces`.
    #[serde(default)]
    pub secret_namespaces: Option<Vec<String>>,
    /// `secret_reader_namespaces`.
    #[serde(default)]
    pub secret_reader_namespaces: Option<Vec<String>>,
    /// `secret_reader_mode`.
    #[serde(default)]
    pub secret_reader_mode: Option<String>,
    /// `allow_exec_kubeconfigs`.
    #[serde(default)]
    pub allow_exec_kubeconfigs: Option<bool>,
    /// `exec_allowed_servers`.
    #[serde(default)]
    pub exec_allowed_servers: Option<Vec<String>>,
    /// `exec_providers`, by provider name.
    #[serde(default)]
    pub exec_providers: Option<BTreeMap<String, ExecProviderConfig>>,
}

/// One entry of `credentials.exec_providers` as written: which ClusterProfiles may use a provider of the providers
/// file, and what they may add.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecProviderConfig {
    /// `namespaces` (required): namespace names, or `["*"]`.
    #[serde(default)]
    pub namespaces: Option<Vec<String>>,
    /// `servers`: host patterns, as `exec_allowed_servers`.
    #[serde(default)]
    pub servers: Option<Vec<String>>,
    /// `profile_env`: variable names a profile may add.
    #[serde(default)]
    pub profile_env: Option<Vec<String>>,
}
