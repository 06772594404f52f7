//! KEP-4322 `ClusterProfile` (`multicluster.x-k8s.io/v1alpha1`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// Desired state of a ClusterProfile.
#[skip_serializing_none]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "multicluster.x-k8s.io",
    version = "v1alpha1",
    kind = "ClusterProfile",
    plural = "clusterprofiles",
    singular = "clusterprofile",
    namespaced,
    status = "ClusterProfileStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterProfileSpec {
    /// Human-readable name of the cluster.
    pub display_name: Option<String>,
    /// The cluster manager that owns this profile (immutable).
    pub cluster_manager: ClusterManager,
}

/// Identity of the cluster manager.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct ClusterManager {
    /// Name of the cluster manager.
    pub name: String,
}

/// Observed state of a ClusterProfile.
#[skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterProfileStatus {
    /// Conditions; `ControlPlaneHealthy` is the one the bridge reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Version information of the cluster.
    pub version: Option<ClusterVersion>,
    /// Properties of the cluster.
    // Decoded entry by entry (`decode_properties`): an entry that does not decode is kept with what is known of it
    // (`Property::unreadable`), so that it is the problem of whoever reads that property only. (A doc comment here
    // would be the CRD's description.)
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "decode_properties"
    )]
    #[schemars(with = "Vec<Property>")]
    pub properties: Vec<Property>,
    /// How to reach the cluster (current KEP).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access_providers: Vec<AccessProvider>,
    /// Deprecated predecessor of `accessProviders` (same shape; `accessProviders` wins on a name clash).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credential_providers: Vec<AccessProvider>,
}

/// Version information reported for the cluster.
#[skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct ClusterVersion {
    /// Kubernetes version of the cluster.
    pub kubernetes: Option<String>,
}

/// A name/value property of the cluster.
#[skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Property {
    /// Property name.
    pub name: String,
    /// Property value.
    pub value: String,
    /// When the value was last observed.
    pub last_observed_time: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
    /// Why this entry of `status.properties` did not decode (its `name` is then what could be read of it, maybe
    /// empty, and its `value` empty); `None` for an entry that decoded. Set when reading, never written.
    #[serde(skip)]
    #[schemars(skip)]
    pub unreadable: Option<String>,
}

/// The most entries of `status.properties` decoded: past them, one entry without a name stands for the rest
/// (whoever reads a property cannot tell whether it is among them). The upstream CRD bounds each entry (a name of
/// at most 253 characters, a value of at most 1024) but not their number.
pub const MAX_PROPERTIES: usize = 1024;

/// Longest reason kept in [`Property::unreadable`], in characters (readers escape it before showing it).
const UNREADABLE_REASON: usize = 200;

/// Decodes `status.properties` entry by entry (each as JSON first, then as a [`Property`] on its own), at most
/// [`MAX_PROPERTIES`] of them. `null` reads as no properties.
fn decode_properties<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Property>, D::Error> {
    let items: Option<Vec<serde_json::Value>> = Option::deserialize(d)?;
    let items = items.unwrap_or_default();
    let total = items.len();
    let mut out: Vec<Property> = items
        .into_iter()
        .take(MAX_PROPERTIES)
        .map(|item| {
            let name = item
                .get("name")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_string();
            serde_json::from_value::<Property>(item).unwrap_or_else(|e| Property {
                name,
                unreadable: Some(e.to_string().chars().take(UNREADABLE_REASON).collect()),
                ..Property::default()
            })
        })
        .collect();
    if total > MAX_PROPERTIES {
        out.push(Property {
            unreadable: Some(format!(
                "{total} entries, more than the {MAX_PROPERTIES} the provider reads"
            )),
            ..Property::default()
        });
    }
    Ok(out)
}

/// An access provider: a name and a kubeconfig `cluster` entry.
#[skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct AccessProvider {
    /// Provider name, e.g. `kubeconfig-secretreader` or an exec plugin provider's name.
    pub name: String,
    /// How to reach the cluster.
    pub cluster: Option<KubeconfigCluster>,
}

/// A kubeconfig `cluster` entry, with kubeconfig (dashed) field names.
#[skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct KubeconfigCluster {
    /// API server URL.
    pub server: String,
    /// Path to a CA file (not usable by the bridge; reported only).
    #[serde(rename = "certificate-authority")]
    pub certificate_authority: Option<String>,
    /// Base64 PEM CA bundle.
    #[serde(rename = "certificate-authority-data")]
    pub certificate_authority_data: Option<String>,
    /// TLS server name to verify.
    #[serde(rename = "tls-server-name")]
    pub tls_server_name: Option<String>,
    /// Skip TLS verification.
    #[serde(rename = "insecure-skip-tls-verify")]
    pub insecure_skip_tls_verify: Option<bool>,
    /// Proxy URL.
    #[serde(rename = "proxy-url")]
    pub proxy_url: Option<String>,
    /// Disable response compression.
    #[serde(rename = "disable-compression")]
    pub disable_compression: Option<bool>,
    /// Named extensions (e.g. `client.authentication.k8s.io/exec`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<NamedExtension>,
}

/// A named kubeconfig extension holding arbitrary JSON.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct NamedExtension {
    /// Extension name.
    pub name: String,
    /// Extension content.
    #[schemars(schema_with = "super::preserve_unknown_object")]
    pub extension: serde_json::Value,
}

impl ClusterProfile {
    /// `namespace/name` key of this profile.
    pub fn key(&self) -> String {
        format!(
            "{}/{}",
            self.metadata.namespace.as_deref().unwrap_or_default(),
            self.metadata.name.as_deref().unwrap_or_default()
        )
    }

    /// The profile's labels (empty when none).
    pub fn labels_map(&self) -> BTreeMap<String, String> {
        self.metadata.labels.clone().unwrap_or_default()
    }
}
