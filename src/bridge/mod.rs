//! The pure domain core: from ClusterProfiles, credential sources and the bridge's options, compute the
//! SveltosClusters and Secrets the bridge should own, read back what it owns, and diff the two. No IO here:
//! `crate::k8s` lists and writes, `crate::resources` maps to and from Terraform values.

pub mod credentials;
pub mod desired;
pub mod duration;
pub mod exec;
pub mod kubeconfig;
pub mod observed;
pub mod plan;
pub mod selector;
#[cfg(test)]
pub(crate) mod testutil;

use std::{collections::BTreeMap, time::Duration};

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
/// Annotation on bridged SveltosClusters recording the bridge's configuration (no secrets), for `import`.
pub const BRIDGE_CONFIG_ANNOTATION: &str = "sveltos.clusterinventory.io/bridge-config";

/// Everything the user configured on one `sveltos_cluster_inventory_bridge`.
#[derive(Debug, Clone, Default, PartialEq)]
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

/// Credential options.
#[derive(Debug, Clone, PartialEq)]
pub struct CredentialOptions {
    /// Label naming the profile on kubeconfig Secrets.
    pub secret_label: String,
    /// Only Secrets in namespaces labelled `x-k8s.io/cluster-inventory-consumer=<consumer>`.
    pub consumer: Option<String>,
    /// Keys tried, in order, for the kubeconfig inside a Secret.
    pub kubeconfig_keys: Vec<String>,
    /// Use exec-plugin access providers (the `kubeconfig-secretreader` provider is always used).
    pub use_access_providers: bool,
    /// Path of the providers file (parsed by the caller).
    pub exec_providers_file: Option<String>,
    /// Refresh exec credentials this long before they expire.
    pub refresh_before: Duration,
}

impl Default for CredentialOptions {
    fn default() -> Self {
        Self {
            secret_label: keys::CLUSTER_PROFILE_LABEL.to_string(),
            consumer: None,
            kubeconfig_keys: default_kubeconfig_keys(),
            use_access_providers: true,
            exec_providers_file: None,
            refresh_before: Duration::from_secs(600),
        }
    }
}

/// The default `kubeconfig_keys`.
pub fn default_kubeconfig_keys() -> Vec<String> {
    ["Config", "config", "kubeconfig", "value"]
        .map(String::from)
        .to_vec()
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
        return Some(format!("{} is not True", keys::CONTROL_PLANE_HEALTHY));
    }
    None
}

/// Hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}
