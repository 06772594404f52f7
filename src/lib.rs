//! terraform-provider-sveltos: bridges KEP-4322 ClusterProfiles into Sveltos SveltosClusters.
//!
//! Layers: [`tfplugin`] (generic Terraform plugin protocol, knows nothing of Sveltos), [`api`] (Kubernetes
//! types and CRDs), [`bridge`] (pure domain core, no IO), [`k8s`] (API server IO), and the thin
//! [`resources`] / [`data_sources`] wired together by [`provider`].

pub mod api;
pub mod bridge;
pub mod config_blocks;
pub mod data_sources;
pub mod docs;
pub mod ephemeral;
pub mod k8s;
pub mod provider;
pub mod resources;
pub mod tfplugin;
