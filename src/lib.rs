//! terraform-provider-sveltos: bridges KEP-4322 ClusterProfiles into Sveltos SveltosClusters.

pub mod tfplugin;
pub mod k8s;
pub mod provider;
