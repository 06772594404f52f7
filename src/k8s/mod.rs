//! Kubernetes connectivity: every read and write of the provider goes through this module.

pub mod bodies;
pub mod claim;
pub mod cluster_api;
pub mod config;
pub mod credentials;
pub mod exec;
pub mod io;
pub mod profiles;
