//! The pure domain core: from ClusterProfiles, credential sources and the bridge's options, compute the
//! SveltosClusters and Secrets the bridge should own, read back what it owns, and diff the two. No IO here:
//! `crate::k8s` lists and writes, `crate::provider` maps to and from Terraform values.

pub mod claim_check;
pub mod config;
pub mod credentials;
pub mod desired;
pub mod duration;
pub mod exec;
pub mod journal;
pub mod kubeconfig;
pub mod ledger_copy;
pub mod managed_view;
pub mod members;
pub mod names;
pub mod observed;
pub mod ownership;
pub mod plan;
pub mod problem;
pub mod properties;
pub mod renewal;
pub mod selector;
pub mod skipped_record;
#[cfg(test)]
pub(crate) mod testutil;
pub mod text;

use serde_with::skip_serializing_none;
use std::collections::BTreeMap;

pub use credentials::{CredentialOptions, default_kubeconfig_keys};

use crate::api::{ActiveWindow, ClusterProfile, keys};
use selector::Selector;

/// Field manager used for every server-side apply.
pub const FIELD_MANAGER: &str = "terraform-provider-sveltos";
/// Suffix of the kubeconfig Secret name (`<profile>-sveltos-kubeconfig`).
pub const SECRET_SUFFIX: &str = "-sveltos-kubeconfig";
/// Key of the kubeconfig in the bridged Secret.
pub const SECRET_KEY: &str = "kubeconfig";
/// Annotation on the bridged Secret recording where its kubeconfig came from.
pub const CREDENTIAL_SOURCE_ANNOTATION: &str = "sveltos.clusterinventory.io/credential-source";
/// Annotation on the bridged Secret: hash of the exec provider settings that minted its credential.
pub const CREDENTIAL_CONFIG_ANNOTATION: &str =
    "sveltos.clusterinventory.io/credential-config-sha256";
/// Annotation on bridged SveltosClusters and Secrets whose credentials Sveltos renews: the token renewal settings
/// as configured (JSON). Its presence tells the bridge to leave what Sveltos rewrites on renewal to Sveltos.
pub const TOKEN_RENEWAL_ANNOTATION: &str = "sveltos.clusterinventory.io/token-renewal";
/// Annotation on bridged SveltosClusters recording the bridge's configuration (no secrets), for `import`.
pub const BRIDGE_CONFIG_ANNOTATION: &str = "sveltos.clusterinventory.io/bridge-config";

/// Everything the user configured on one `sveltos_cluster_inventory_bridge`.
#[derive(Debug, Clone, PartialEq)]
pub struct BridgeSpec {
    /// The bridge's identity (ownership label value).
    pub name: String,
    /// Which ClusterProfiles to bridge.
    pub selection: Selection,
    /// Where credentials come from.
    pub credentials: CredentialOptions,
    /// Fail instead of warning when a selected profile has no usable credentials.
    pub require_credentials: bool,
    /// Labels added to every SveltosCluster.
    pub extra_labels: BTreeMap<String, String>,
    /// Annotations added to every SveltosCluster.
    pub extra_annotations: BTreeMap<String, String>,
    /// `spec.paused` for every SveltosCluster.
    pub paused: Option<bool>,
    /// `spec.consecutiveFailureThreshold`.
    pub consecutive_failure_threshold: Option<i64>,
    /// `spec.activeWindow`.
    pub active_window: Option<ActiveWindow>,
    /// Per-cluster settings keyed `namespace/name`.
    pub overrides: BTreeMap<String, Override>,
    /// Take over existing objects this bridge did not create.
    pub adopt: bool,
    /// The bridge's configuration as written, recorded on every SveltosCluster so that `import` can restore it.
    pub config_record: Option<String>,
    /// Make every per-cluster problem an error that stops the plan (default: a warning, that cluster kept).
    pub strict: bool,
    /// Fail the run when clusters are skipped, once every other cluster is applied (the resource's gate; the core
    /// plans the same either way).
    pub fail_on_skipped: bool,
    /// What happens to a bridged cluster whose profile turns unhealthy (with `require_healthy`).
    pub unhealthy: UnhealthyPolicy,
    /// A plan that would deregister more clusters than this fails.
    pub max_removals: Option<usize>,
    /// A plan that would change the SveltosClusters of more already registered clusters than this fails.
    pub max_updates: Option<usize>,
    /// Which profile labels are copied onto SveltosClusters.
    pub copy_labels: LabelCopy,
    /// What deregistration does with the add-ons Sveltos deployed to a cluster.
    pub deregistration: Deregistration,
    /// How long deregistration may wait for one cluster: for addon-controller to withdraw its add-ons
    /// ([`Deregistration::Withdraw`]), then for its SveltosCluster to be gone (a finalizer may hold it), before
    /// the kubeconfig Secret is deleted.
    pub deregistration_timeout: std::time::Duration,
    /// Namespace of the bridge's claim ConfigMap.
    pub claim_namespace: String,
    /// Let Sveltos renew every cluster's credentials (`spec.tokenRequestRenewalOption`).
    pub token_renewal: Option<TokenRenewal>,
    /// `wait_for_ready`: how long apply waits for sveltoscluster-manager to report the clusters it registered or
    /// changed Ready (`ready_timeout`); `None`: it does not wait.
    pub ready_wait: Option<std::time::Duration>,
    /// `spec.data` of every SveltosCluster (an override's keys win).
    pub data: BTreeMap<String, String>,
    /// `spec.readinessChecks` of every SveltosCluster (an override's list replaces it).
    pub readiness_checks: Vec<crate::api::ClusterCheck>,
    /// `spec.livenessChecks` of every SveltosCluster (an override's list replaces it).
    pub liveness_checks: Vec<crate::api::ClusterCheck>,
    /// `spec.pullMode` of every SveltosCluster (an override's wins).
    pub pull_mode: Option<bool>,
    /// `spec.workloadIdentity` of every SveltosCluster (an override's replaces it).
    pub workload_identity: Option<crate::api::WorkloadIdentity>,
    /// How ClusterProfiles describing one member cluster are recognised and treated (`duplicate_members`).
    pub members: members::MemberPolicy,
    /// Which ClusterProfile properties become labels and `spec.data` entries (`copy_properties`).
    pub properties: properties::PropertyCopy,
}

/// Default `ready_timeout`.
pub const DEFAULT_READY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Sveltos-side credential renewal: `spec.tokenRequestRenewalOption` of the SveltosCluster. The bridge writes the
/// bootstrap kubeconfig; afterwards what sveltoscluster-manager rewrites on renewal (the Secret's data, a new key
/// such as `re-kubeconfig`, `spec.kubeconfigKeyName`, a shortened interval) is Sveltos' and never shows as drift.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TokenRenewal {
    /// `renewTokenRequestInterval` (Go duration).
    pub interval: String,
    /// `tokenDuration` (Go duration).
    #[serde(default)]
    pub token_duration: Option<String>,
    /// `saNamespace`.
    #[serde(default)]
    pub sa_namespace: Option<String>,
    /// `saName`.
    #[serde(default)]
    pub sa_name: Option<String>,
}

/// What deregistering a cluster does with the add-ons Sveltos deployed to it (`deregistration`).
///
/// addon-controller withdraws a cluster's add-ons when the cluster stops matching a Sveltos profile while it is
/// still registered (`stopMatchingBehavior: WithdrawPolicies`, Sveltos' default); it does not when the
/// SveltosCluster is deleted: it then drops its `ClusterSummary` objects and leaves the add-ons on the cluster.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Deregistration {
    /// The cluster stops matching first: the labels the bridge wrote on its SveltosCluster are removed (the
    /// ownership label stays), the bridge waits until addon-controller has no `ClusterSummary` left for it (its
    /// add-ons withdrawn), then deletes the SveltosCluster and then its kubeconfig Secret (default).
    #[default]
    Withdraw,
    /// The SveltosCluster and then its Secret are deleted at once: add-ons stay on the cluster, no longer
    /// managed by anyone.
    Orphan,
}

impl Deregistration {
    /// The attribute's value: `withdraw` or `orphan`.
    pub fn as_str(self) -> &'static str {
        match self {
            Deregistration::Withdraw => "withdraw",
            Deregistration::Orphan => "orphan",
        }
    }
}

/// Default `deregistration_timeout`.
pub const DEFAULT_DEREGISTRATION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// What happens to an already bridged cluster whose ClusterProfile is no longer healthy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum UnhealthyPolicy {
    /// Stay registered as it is (default).
    #[default]
    Keep,
    /// Stay registered with `spec.paused = true` until healthy again.
    Pause,
    /// Deregister it.
    Remove,
}

/// Which ClusterProfile labels are copied onto the SveltosCluster: keys matching `include` (all when empty)
/// and none matching `exclude`. A pattern is a key, or a prefix ending in `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelCopy {
    /// Keys or prefixes to copy (empty: every key).
    pub include: Vec<String>,
    /// Keys or prefixes never copied.
    pub exclude: Vec<String>,
    /// Remove, at apply, the labels under `exclude` that others added to the bridge's SveltosClusters
    /// (`copy_labels.remove_foreign`).
    pub remove_foreign: bool,
}

impl Default for LabelCopy {
    fn default() -> Self {
        Self {
            include: Vec::new(),
            exclude: DEFAULT_LABEL_EXCLUDES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            remove_foreign: false,
        }
    }
}

/// Label prefixes never copied by default: Sveltos' own (`projectsveltos.io/`, which select add-ons and are
/// written by Sveltos) and the bridge's.
pub const DEFAULT_LABEL_EXCLUDES: &[&str] =
    &["projectsveltos.io/*", "sveltos.clusterinventory.io/*"];

impl LabelCopy {
    fn matches(pattern: &str, key: &str) -> bool {
        match pattern.strip_suffix('*') {
            Some(prefix) => key.starts_with(prefix),
            None => key == pattern,
        }
    }

    /// Whether a profile label with this key is copied.
    pub fn copies(&self, key: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|p| Self::matches(p, key)))
            && !self.excludes(key)
    }

    /// Whether a label with this key is under `exclude` (never copied: the boundary on add-on selection).
    pub fn excludes(&self, key: &str) -> bool {
        self.exclude.iter().any(|p| Self::matches(p, key))
    }
}

impl Default for BridgeSpec {
    fn default() -> Self {
        Self {
            name: String::new(),
            selection: Selection::default(),
            credentials: CredentialOptions::default(),
            require_credentials: false,
            extra_labels: BTreeMap::new(),
            extra_annotations: BTreeMap::new(),
            paused: None,
            consecutive_failure_threshold: None,
            active_window: None,
            overrides: BTreeMap::new(),
            adopt: false,
            config_record: None,
            strict: false,
            fail_on_skipped: false,
            unhealthy: UnhealthyPolicy::default(),
            max_removals: None,
            max_updates: None,
            copy_labels: LabelCopy::default(),
            deregistration: Deregistration::default(),
            deregistration_timeout: DEFAULT_DEREGISTRATION_TIMEOUT,
            claim_namespace: ownership::DEFAULT_CLAIM_NAMESPACE.to_string(),
            token_renewal: None,
            ready_wait: None,
            data: BTreeMap::new(),
            readiness_checks: Vec::new(),
            liveness_checks: Vec::new(),
            pull_mode: None,
            workload_identity: None,
            members: members::MemberPolicy::default(),
            properties: properties::PropertyCopy::default(),
        }
    }
}

/// Profile selection.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// Namespaces to look in (empty: all).
    pub namespaces: Vec<String>,
    /// Profile names (`name` or `namespace/name`; empty: all).
    pub names: Vec<String>,
    /// Label selector on the profiles.
    pub label_selector: Option<Selector>,
    /// Only profiles of this cluster manager.
    pub cluster_manager: Option<String>,
    /// Only profiles whose `ControlPlaneHealthy` condition is `True`.
    pub require_healthy: bool,
}

/// Per-cluster overrides.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Override {
    /// Extra labels for this cluster (win over the bridge-wide ones).
    pub extra_labels: BTreeMap<String, String>,
    /// Extra annotations for this cluster.
    pub extra_annotations: BTreeMap<String, String>,
    /// `spec.paused` for this cluster.
    pub paused: Option<bool>,
    /// Do not bridge this cluster.
    pub skip: bool,
    /// Sveltos-side renewal for this cluster (wins over the bridge-wide setting).
    pub token_renewal: Option<TokenRenewal>,
    /// `spec.activeWindow` for this cluster.
    pub active_window: Option<ActiveWindow>,
    /// `spec.consecutiveFailureThreshold` for this cluster.
    pub consecutive_failure_threshold: Option<i64>,
    /// `spec.data` entries for this cluster (win over the bridge-wide ones).
    pub data: BTreeMap<String, String>,
    /// `spec.pullMode` for this cluster.
    pub pull_mode: Option<bool>,
    /// `spec.workloadIdentity` for this cluster (replaces the bridge-wide one): then no `kubeconfigName` or
    /// `kubeconfigKeyName`.
    pub workload_identity: Option<crate::api::WorkloadIdentity>,
    /// `spec.readinessChecks` for this cluster, replacing the bridge-wide list (`Some(empty)`: none).
    pub readiness_checks: Option<Vec<crate::api::ClusterCheck>>,
    /// `spec.livenessChecks` for this cluster, replacing the bridge-wide list (`Some(empty)`: none).
    pub liveness_checks: Option<Vec<crate::api::ClusterCheck>>,
}

/// Whether the profile's `ControlPlaneHealthy` condition is `True`.
pub fn is_healthy(profile: &ClusterProfile) -> bool {
    profile.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == keys::CONTROL_PLANE_HEALTHY && c.status == "True")
    })
}

/// Why a profile is not selected, or `None` when it is.
pub fn selection_miss(sel: &Selection, profile: &ClusterProfile) -> Option<String> {
    let ns = profile.metadata.namespace.as_deref().unwrap_or_default();
    let name = profile.metadata.name.as_deref().unwrap_or_default();
    if !sel.namespaces.is_empty() && !sel.namespaces.iter().any(|n| n == ns) {
        return Some("namespace not selected".into());
    }
    if !sel.names.is_empty() {
        let key = profile.key();
        if !sel.names.iter().any(|n| n == name || *n == key) {
            return Some("name not selected".into());
        }
    }
    if let Some(s) = &sel.label_selector
        && !s.matches(&profile.labels_map())
    {
        return Some(format!("labels do not match {s}"));
    }
    if let Some(m) = &sel.cluster_manager
        && profile.spec.cluster_manager.name != *m
    {
        return Some(format!(
            "cluster manager is {:?}",
            profile.spec.cluster_manager.name
        ));
    }
    if sel.require_healthy && !is_healthy(profile) {
        return Some(unhealthy_reason());
    }
    None
}

/// Why an unhealthy profile is not selected.
pub fn unhealthy_reason() -> String {
    format!("{} is not True", keys::CONTROL_PLANE_HEALTHY)
}

/// Hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}
