//! terraform-provider-sveltos: bridges KEP-4322 ClusterProfiles into Sveltos SveltosClusters.
//!
//! Layers (`docs/design/architecture.md` has the map of which may use which; `tests/layers.rs` checks it):
//! [`tfplugin`] (generic Terraform plugin protocol, knows nothing of Sveltos), [`api`] (Kubernetes types and
//! CRDs), [`bridge`] (pure domain core, no IO), [`k8s`] (all Kubernetes IO), and the thin mapping layer:
//! [`config_blocks`], [`resources`], [`data_sources`] and [`ephemeral`], wired together by [`provider`].
//! [`docs`] renders the registry docs pages from the schema.

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
