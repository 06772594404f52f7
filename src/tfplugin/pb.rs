//! Generated protocol types and services (from `proto/`, compiled by `build.rs`).
//!
//! Not part of the provider-facing API: only the server and the protocol tests use these types.

#![allow(missing_docs, clippy::all, clippy::pedantic, rustdoc::all)]

/// tfplugin6 (Terraform plugin protocol 6.11).
pub mod tfplugin6 {
    tonic::include_proto!("tfplugin6");
}

/// go-plugin's `GRPCController` and `GRPCStdio`.
pub mod plugin {
    tonic::include_proto!("plugin");
}
