//! The `credentials` block as the user wrote it, also kept in the bridge's configuration record.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The `credentials` block as written (every attribute optional).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CredentialsConfig {
    /// `secret_label`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_label: Option<String>,
    /// `consumer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer: Option<String>,
    /// `profile_namespace_secrets`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_namespace_secrets: Option<bool>,
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
    /// `secret_reader_mode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_reader_mode: Option<String>,
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
