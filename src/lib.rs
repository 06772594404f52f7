//! terraform-provider-sveltos: bridges KEP-4322 ClusterProfiles into Sveltos SveltosClusters.
//!
//! Layers, one folder each (`docs/design/architecture.md` has the map of which may use which; `tests/plugin/layers.rs`
//! checks it): [`tfplugin`] (generic Terraform plugin protocol, knows nothing of Sveltos; its [`tfplugin::docs`]
//! renders the registry docs pages from a schema), [`api`] (Kubernetes types and CRDs), [`domain`] (pure domain
//! core, no IO), [`k8s`] (all Kubernetes IO and the connection settings), and the thin mapping layer
//! [`provider`]: its shared state and configuration blocks, the resources, data sources and ephemeral resources,
//! and [`provider::registry`], which wires them into one provider.

pub mod api;
pub mod domain;
pub mod k8s;
pub mod provider;
pub mod runtime;
pub mod tfplugin;
