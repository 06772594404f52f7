//! Kubernetes connectivity.

pub mod config;
pub mod exec;
pub mod io;
