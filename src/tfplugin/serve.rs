//! Serving a provider: handshake, TLS, debug mode (work in progress).

use super::provider::Provider;
use std::sync::Arc;

/// How to serve a provider.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The provider's registry address, e.g. `registry.terraform.io/example/thing` (used in debug mode output).
    pub provider_address: String,
    /// Debug mode: serve without TLS and print a `TF_REATTACH_PROVIDERS` value instead of the handshake.
    pub debug: bool,
}

impl ServeOptions {
    /// Options for the provider at `provider_address`.
    pub fn new(provider_address: impl Into<String>) -> Self {
        Self {
            provider_address: provider_address.into(),
            debug: false,
        }
    }

    /// Sets debug mode.
    pub fn debug(mut self, debug: bool) -> Self {
        self.debug = debug;
        self
    }
}

/// Why serving failed.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Not started by Terraform (no magic cookie).
    #[error("this binary is a plugin for Terraform/OpenTofu and must be started by them")]
    NotStartedByTerraform,
    /// Not implemented yet.
    #[error("not implemented yet")]
    Unimplemented,
}

/// Serves `provider` until Terraform shuts it down.
pub async fn serve(_provider: Arc<dyn Provider>, _opts: ServeOptions) -> Result<(), ServeError> {
    Err(ServeError::Unimplemented)
}
