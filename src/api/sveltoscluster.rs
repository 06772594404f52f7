//! Sveltos `SveltosCluster` (`lib.projectsveltos.io/v1beta1`).

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Desired state of a SveltosCluster (the fields the bridge reads or writes; `readinessChecks`,
/// `livenessChecks` and `workloadIdentity` are not modelled).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "lib.projectsveltos.io",
    version = "v1beta1",
    kind = "SveltosCluster",
    plural = "sveltosclusters",
    singular = "sveltoscluster",
    namespaced,
    status = "SveltosClusterStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct SveltosClusterSpec {
    /// Name of the Secret (in the SveltosCluster's namespace) holding the kubeconfig.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubeconfig_name: Option<String>,
    /// Key of the kubeconfig inside that Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubeconfig_key_name: Option<String>,
    /// Stop Sveltos from reconciling this cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// Arbitrary data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<BTreeMap<String, String>>,
    /// Token renewal options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_request_renewal_option: Option<TokenRequestRenewalOption>,
    /// When Sveltos may deploy to the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_window: Option<ActiveWindow>,
    /// Failed connectivity checks before the cluster is marked down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consecutive_failure_threshold: Option<i64>,
    /// Pull mode (immutable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_mode: Option<bool>,
}

/// Token renewal options.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenRequestRenewalOption {
    /// Renewal interval (Go duration).
    // Empty: left out of an apply (the field is someone else's).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub renew_token_request_interval: String,
    /// Token lifetime (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_duration: Option<String>,
    /// ServiceAccount name.
    #[serde(rename = "saName", default, skip_serializing_if = "Option::is_none")]
    pub sa_name: Option<String>,
    /// ServiceAccount namespace.
    #[serde(
        rename = "saNamespace",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub sa_namespace: Option<String>,
    /// Key to write the renewed kubeconfig under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubeconfig_key_name: Option<String>,
}

/// A cron-style window `from`..`to`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct ActiveWindow {
    /// Cron schedule that opens the window.
    pub from: String,
    /// Cron schedule that closes the window.
    pub to: String,
}

/// Observed state, written by Sveltos (never compared by the bridge).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SveltosClusterStatus {
    /// Whether the cluster is ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// Kubernetes version of the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Connection status (`Healthy` / `Down`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_status: Option<String>,
    /// Last failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// Consecutive connection failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_failures: Option<i64>,
}
