//! Kubernetes API types the provider reads and writes, and the CRDs generated from them.
//!
//! `ClusterProfile` (KEP-4322, `multicluster.x-k8s.io/v1alpha1`) and `SveltosCluster`
//! (`lib.projectsveltos.io/v1beta1`) are modelled with kube's `CustomResource` derive; Sveltos' `ClusterSummary`
//! (`config.projectsveltos.io/v1beta1`), which the bridge only lists, by its metadata alone, as Cluster API's
//! `Cluster` (`cluster.x-k8s.io`, `cluster_api.rs`). Field names follow
//! upstream exactly; only the fields the provider reads or writes are modelled (a spec type's doc comment names
//! the upstream fields it leaves out, as `SveltosClusterSpec`'s does). The test environment installs CRDs written to
//! enforce what the upstream ones do (`testenv/crds/`); a test checks that the CRDs generated from these types
//! ([`crd_yamls`]) model nothing those lack.

mod cluster_api;
mod clusterprofile;
mod clustersummary;
mod sveltoscluster;
pub mod v1alpha2;

pub use cluster_api::*;
pub use clusterprofile::*;
pub use clustersummary::*;
pub use sveltoscluster::*;

use kube::CustomResourceExt;

/// Well-known label and annotation keys.
pub mod keys {
    /// Label on a kubeconfig Secret naming the ClusterProfile it belongs to (push model).
    pub const CLUSTER_PROFILE_LABEL: &str = "x-k8s.io/cluster-profile";
    /// Optional label on such a Secret naming the ClusterProfile's namespace (default: the Secret's own).
    pub const CLUSTER_PROFILE_NAMESPACE_LABEL: &str = "x-k8s.io/cluster-profile-namespace";
    /// Namespace label that marks the namespace as holding credentials for a given consumer.
    pub const CONSUMER_NAMESPACE_LABEL: &str = "x-k8s.io/cluster-inventory-consumer";
    /// Label on a ClusterProfile naming its cluster manager.
    pub const CLUSTER_MANAGER_LABEL: &str = "x-k8s.io/cluster-manager";
    /// Ownership label the bridge writes on every object it creates; the value is the bridge's name.
    pub const BRIDGE_LABEL: &str = "sveltos.clusterinventory.io/bridge";
    /// Annotation on bridged objects naming the source ClusterProfile (`namespace/name`).
    pub const SOURCE_ANNOTATION: &str = "sveltos.clusterinventory.io/cluster-profile";
    /// Annotation carrying the ClusterProfile's display name on the SveltosCluster.
    pub const DISPLAY_NAME_ANNOTATION: &str = "sveltos.clusterinventory.io/display-name";
    /// Annotation on the bridged Secret with the SHA-256 of the kubeconfig it holds.
    pub const KUBECONFIG_SHA_ANNOTATION: &str = "sveltos.clusterinventory.io/kubeconfig-sha256";
    /// Annotation on the bridged Secret with the credential's expiry (RFC 3339), when known.
    pub const EXPIRES_ANNOTATION: &str = "sveltos.clusterinventory.io/credential-expires-at";
    /// Label on a ClusterProfile identifying its member cluster across inventories (cluster-inventory-api PR #83):
    /// profiles carrying the same value describe one cluster.
    pub const INVENTORY_MEMBER_ID_LABEL: &str = "multicluster.x-k8s.io/inventory-member-id";
    /// Label written by sveltoscluster-manager; never touched by the bridge.
    pub const SVELTOS_K8S_VERSION_LABEL: &str = "projectsveltos.io/k8s-version";
    /// Label addon-controller sets on a `ClusterSummary`: the name of its cluster.
    pub const CLUSTER_SUMMARY_CLUSTER_NAME_LABEL: &str = "projectsveltos.io/cluster-name";
    /// Label addon-controller sets on a `ClusterSummary`: the type of its cluster ([`SVELTOS_CLUSTER_TYPE`]).
    pub const CLUSTER_SUMMARY_CLUSTER_TYPE_LABEL: &str = "projectsveltos.io/cluster-type";
    /// The cluster type of a SveltosCluster, as addon-controller labels its `ClusterSummary` objects.
    pub const SVELTOS_CLUSTER_TYPE: &str = "Sveltos";
    /// The ClusterProfile condition type that reports control plane health.
    pub const CONTROL_PLANE_HEALTHY: &str = "ControlPlaneHealthy";
    /// The access provider that names a Secret holding a complete kubeconfig.
    pub const SECRET_READER_PROVIDER: &str = "kubeconfig-secretreader";
    /// Cluster extension holding the exec configuration of an access provider.
    pub const EXEC_EXTENSION: &str = "client.authentication.k8s.io/exec";
    /// KEP-5339 extension: extra args for an exec plugin.
    pub const ADDITIONAL_ARGS_EXTENSION: &str =
        "clusterprofiles.multicluster.x-k8s.io/exec/additional-args";
    /// KEP-5339 extension: extra env vars for an exec plugin.
    pub const ADDITIONAL_ENVS_EXTENSION: &str =
        "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs";
}

/// The CRDs of the modelled types (what the provider reads and writes, without upstream's validation), as
/// `(file stem of the test environment's CRD, YAML)` pairs, in a stable order. The ClusterProfile CRD has v1alpha2
/// next to v1alpha1, the storage version, as upstream's does ([`v1alpha2`]).
pub fn crd_yamls() -> Vec<(&'static str, String)> {
    let render = |crd| {
        // One line per description (no folded `>` blocks), as kubectl and controller-gen write CRDs.
        let mut options = serde_saphyr::SerializerOptions::default();
        options.prefer_block_scalars = false;
        serde_saphyr::to_string_with_options(&crd, options).expect("a CRD always serializes")
    };
    vec![
        (
            "clusterprofiles",
            render(v1alpha2::with_v1alpha2(ClusterProfile::crd())),
        ),
        ("sveltosclusters", render(SveltosCluster::crd())),
    ]
}

/// Schema for a field that keeps arbitrary JSON (`x-kubernetes-preserve-unknown-fields`).
pub(crate) fn preserve_unknown_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value as Json;

    /// The paths of the nulls in `v`.
    fn nulls(v: &Json, at: &str, out: &mut Vec<String>) {
        match v {
            Json::Null => out.push(at.to_string()),
            Json::Object(m) => m
                .iter()
                .for_each(|(k, v)| nulls(v, &format!("{at}.{k}"), out)),
            Json::Array(a) => a.iter().for_each(|v| nulls(v, &format!("{at}[]"), out)),
            _ => {}
        }
    }

    /// An unset optional field is left out of what is written (`#[skip_serializing_none]`), never sent as `null`:
    /// in a server-side apply body a `null` would claim the field.
    #[test]
    fn unset_optional_fields_are_not_written() {
        let values = [
            serde_json::to_value(SveltosClusterSpec {
                workload_identity: Some(WorkloadIdentity {
                    aws: Some(Default::default()),
                    gcp: Some(Default::default()),
                    azure: Some(Default::default()),
                    ..Default::default()
                }),
                token_request_renewal_option: Some(Default::default()),
                active_window: Some(Default::default()),
                readiness_checks: Some(vec![ClusterCheck::default()]),
                ..Default::default()
            }),
            serde_json::to_value(SveltosClusterStatus::default()),
            serde_json::to_value(ClusterProfileSpec::default()),
            serde_json::to_value(ClusterProfileStatus {
                version: Some(Default::default()),
                properties: vec![Property::default()],
                access_providers: vec![AccessProvider {
                    cluster: Some(Default::default()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
        ];
        for (i, v) in values.into_iter().enumerate() {
            let v = v.expect("serializes");
            let mut found = Vec::new();
            nulls(&v, "", &mut found);
            assert!(found.is_empty(), "value {i} writes null at {found:?}: {v}");
        }
    }
}
