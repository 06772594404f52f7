//! The mapping layer: Terraform values to and from the core's types, the core's problems to diagnostics with
//! attribute paths, and calls into [`crate::k8s`] for IO. One folder, whose parts depend one way:
//!
//! * [`state`]: [`state::ProviderState`], the clients every resource and data source reads through;
//! * [`diag`]: the one mapping from the core's problems and the Kubernetes layer's errors to diagnostics, which
//!   every other part may use;
//! * [`blocks`]: configuration blocks defined once (the connection attributes of the provider block and of
//!   `inventory` blocks, `credentials`, the selection attributes), which may use `state`;
//! * [`resources`], [`data_sources`], [`ephemeral`]: the types Terraform sees, built on `state` and `blocks`;
//! * [`registry`]: the composition root, the one `tfplugin::Provider` that lists those types. Nothing in the
//!   crate imports it; `main.rs` serves it.

pub mod blocks;
pub mod data_sources;
pub mod diag;
pub mod ephemeral;
pub mod registry;
pub mod resources;
pub mod state;
