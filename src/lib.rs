//! terraform-provider-sveltos: bridges KEP-4322 ClusterProfiles into Sveltos SveltosClusters.

pub mod api;
pub mod bridge;
pub mod k8s;
pub mod provider;
pub mod tfplugin;
