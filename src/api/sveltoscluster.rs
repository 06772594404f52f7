//! Sveltos `SveltosCluster` (`lib.projectsveltos.io/v1beta1`).

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// Desired state of a SveltosCluster (the fields the bridge reads or writes).
#[skip_serializing_none]
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
    pub kubeconfig_name: Option<String>,
    /// Key of the kubeconfig inside that Secret.
    pub kubeconfig_key_name: Option<String>,
    /// Stop Sveltos from reconciling this cluster.
    pub paused: Option<bool>,
    /// Arbitrary data.
    pub data: Option<BTreeMap<String, String>>,
    /// Token renewal options.
    pub token_request_renewal_option: Option<TokenRequestRenewalOption>,
    /// When Sveltos may deploy to the cluster.
    pub active_window: Option<ActiveWindow>,
    /// Failed connectivity checks before the cluster is marked down.
    pub consecutive_failure_threshold: Option<i64>,
    /// Pull mode (immutable).
    pub pull_mode: Option<bool>,
    /// Checks sveltoscluster-manager runs on the cluster before it marks it Ready.
    pub readiness_checks: Option<Vec<ClusterCheck>>,
    /// Checks sveltoscluster-manager runs on the cluster once it is Ready (a failure counts as a failed connection).
    pub liveness_checks: Option<Vec<ClusterCheck>>,
    /// Sveltos gets the cluster's credentials from the cloud (no kubeconfig; exclusive with `kubeconfigName`).
    pub workload_identity: Option<WorkloadIdentity>,
}

/// `spec.workloadIdentity`: the cloud provider Sveltos asks for the cluster's credentials, and its settings.
#[skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadIdentity {
    /// `AWS`, `GCP` or `Azure`.
    pub provider: String,
    /// The cluster's API server URL.
    pub endpoint: String,
    /// A Secret in the cluster's namespace holding the API server's CA under `ca.crt`.
    pub ca_secret_ref: Option<LocalObjectReference>,
    /// With provider `AWS`.
    pub aws: Option<AwsIdentity>,
    /// With provider `GCP`.
    pub gcp: Option<GcpIdentity>,
    /// With provider `Azure`.
    pub azure: Option<AzureIdentity>,
}

/// A reference to an object in the same namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct LocalObjectReference {
    /// Its name.
    pub name: String,
}

/// EKS through IRSA or EKS Pod Identity.
#[skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AwsIdentity {
    /// The EKS cluster's name.
    pub cluster_name: String,
    /// Its region.
    pub region: Option<String>,
    /// The IAM role to assume.
    #[serde(rename = "roleARN")]
    pub role_arn: Option<String>,
}

/// GKE through Workload Identity Federation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GcpIdentity {
    /// The GKE cluster's name.
    pub cluster_name: String,
    /// Its region or zone.
    pub location: String,
    /// Its project.
    #[serde(rename = "projectID")]
    pub project_id: String,
}

/// AKS through Azure Workload Identity.
#[skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AzureIdentity {
    /// The managed identity's or app registration's client ID.
    #[serde(rename = "clientID")]
    pub client_id: String,
    /// The tenant.
    #[serde(rename = "tenantID")]
    pub tenant_id: String,
    /// The AKS cluster's name.
    pub cluster_name: Option<String>,
    /// Its resource group.
    pub resource_group: Option<String>,
    /// Its subscription.
    #[serde(rename = "subscriptionID")]
    pub subscription_id: Option<String>,
}

/// A readiness or liveness check: a Lua `evaluate` function over the resources the selectors pick on the cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterCheck {
    /// Name of the check (a DNS label, unique among the checks).
    pub name: String,
    /// The Lua function `evaluate`, given the selected resources (`resources`), returning `pass` and `message`.
    pub condition: String,
    /// Which resources of the cluster are given to `condition`.
    pub resource_selectors: Vec<ResourceSelector>,
}

/// Which resources of a cluster a check selects.
#[skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSelector {
    /// API group (`""` for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Only the resource with this name.
    pub name: Option<String>,
    /// Only resources in this namespace.
    pub namespace: Option<String>,
    /// A Lua function `evaluate` deciding whether one resource matches.
    pub evaluate: Option<String>,
    /// CEL rules deciding whether one resource matches.
    #[serde(rename = "evaluateCEL")]
    pub evaluate_cel: Option<Vec<CelRule>>,
    /// Label conditions.
    pub label_filters: Option<Vec<LabelFilter>>,
    /// A label selector.
    pub selector: Option<LabelSelector>,
}

/// A named CEL rule.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct CelRule {
    /// Its name.
    pub name: String,
    /// The expression (a bool).
    pub rule: String,
}

/// A label condition: `operation` is `Equal`, `Different`, `Has` or `DoesNotHave`.
#[skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct LabelFilter {
    /// The label key.
    pub key: String,
    /// The comparison.
    pub operation: String,
    /// The value compared with.
    pub value: Option<String>,
}

/// A Kubernetes label selector.
#[skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// Labels that must have these values.
    pub match_labels: Option<BTreeMap<String, String>>,
    /// Label requirements.
    pub match_expressions: Option<Vec<LabelSelectorRequirement>>,
}

/// One label requirement of a [`LabelSelector`].
#[skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct LabelSelectorRequirement {
    /// The label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: String,
    /// The values (`In`, `NotIn`).
    pub values: Option<Vec<String>>,
}

/// Token renewal options.
#[skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenRequestRenewalOption {
    /// Renewal interval (Go duration).
    // Empty: left out of an apply (the field is someone else's).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub renew_token_request_interval: String,
    /// Token lifetime (Go duration).
    pub token_duration: Option<String>,
    /// ServiceAccount name.
    #[serde(rename = "saName")]
    pub sa_name: Option<String>,
    /// ServiceAccount namespace.
    #[serde(rename = "saNamespace")]
    pub sa_namespace: Option<String>,
    /// Key to write the renewed kubeconfig under.
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
#[skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SveltosClusterStatus {
    /// Whether the cluster is ready.
    pub ready: Option<bool>,
    /// Kubernetes version of the cluster.
    pub version: Option<String>,
    /// Connection status (`Healthy` / `Down`).
    pub connection_status: Option<String>,
    /// Last failure.
    pub failure_message: Option<String>,
    /// Consecutive connection failures.
    pub connection_failures: Option<i64>,
    /// When sveltoscluster-manager last renewed the cluster's token (RFC 3339).
    pub last_reconciled_token_request_at: Option<String>,
}
