//! Kubernetes connectivity.

pub mod config;
