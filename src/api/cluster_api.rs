//! Cluster API's `Cluster` (`cluster.x-k8s.io`), metadata only: Sveltos manages Cluster API clusters natively
//! (addon-controller's cluster type `Capi`), so a ClusterProfile of the same namespace and name describes a cluster
//! Sveltos already sees (`skip_cluster_api_clusters`). The bridge only lists their metadata, through the version
//! the API server prefers among [`CLUSTER_API_VERSIONS`]; it never writes one.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// The Cluster API group.
pub const CLUSTER_API_GROUP: &str = "cluster.x-k8s.io";
/// The resource (plural) of `Cluster`.
pub const CLUSTER_API_CLUSTERS: &str = "clusters";
/// The versions of `Cluster` the provider lists, newest first: v1beta2 (current Cluster API), v1beta1 (before).
pub const CLUSTER_API_VERSIONS: [&str; 2] = ["v1beta2", "v1beta1"];

macro_rules! cluster_api_cluster {
    ($name:ident, $version:literal) => {
        #[doc = concat!("A Cluster API `Cluster` read through `cluster.x-k8s.io/", $version, "` (metadata only).")]
        #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
        pub struct $name {
            /// Its metadata.
            pub metadata: ObjectMeta,
        }

        impl k8s_openapi::Resource for $name {
            const API_VERSION: &'static str = concat!("cluster.x-k8s.io/", $version);
            const GROUP: &'static str = CLUSTER_API_GROUP;
            const KIND: &'static str = "Cluster";
            const VERSION: &'static str = $version;
            const URL_PATH_SEGMENT: &'static str = CLUSTER_API_CLUSTERS;
            type Scope = k8s_openapi::NamespaceResourceScope;
        }

        impl k8s_openapi::Metadata for $name {
            type Ty = ObjectMeta;

            fn metadata(&self) -> &ObjectMeta {
                &self.metadata
            }

            fn metadata_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

cluster_api_cluster!(CapiClusterV1beta2, "v1beta2");
cluster_api_cluster!(CapiClusterV1beta1, "v1beta1");
