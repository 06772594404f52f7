//! Sveltos `ClusterSummary` (`config.projectsveltos.io/v1beta1`), metadata only: addon-controller keeps one per
//! cluster and Sveltos profile matching it, and deletes it once it has withdrawn that profile's add-ons from the
//! cluster (its finalizer `clustersummaryfinalizer.projectsveltos.io` holds it until then). The bridge only lists
//! them, to know whether a cluster's add-ons are withdrawn; it never writes one.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// A `ClusterSummary`, of which the bridge reads only the metadata (no CRD is generated from it).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ClusterSummary {
    /// Its metadata.
    pub metadata: ObjectMeta,
}

impl k8s_openapi::Resource for ClusterSummary {
    const API_VERSION: &'static str = "config.projectsveltos.io/v1beta1";
    const GROUP: &'static str = "config.projectsveltos.io";
    const KIND: &'static str = "ClusterSummary";
    const VERSION: &'static str = "v1beta1";
    const URL_PATH_SEGMENT: &'static str = "clustersummaries";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::Metadata for ClusterSummary {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// The label selector of the `ClusterSummary` objects addon-controller keeps for SveltosCluster `name` (in the
/// SveltosCluster's namespace): the labels it sets on each of them, naming the cluster and its type.
pub fn cluster_summaries_of(name: &str) -> String {
    format!(
        "{}={name},{}={}",
        super::keys::CLUSTER_SUMMARY_CLUSTER_NAME_LABEL,
        super::keys::CLUSTER_SUMMARY_CLUSTER_TYPE_LABEL,
        super::keys::SVELTOS_CLUSTER_TYPE
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selector_names_the_cluster_and_its_type() {
        assert_eq!(
            cluster_summaries_of("c1"),
            "projectsveltos.io/cluster-name=c1,projectsveltos.io/cluster-type=Sveltos"
        );
    }
}
