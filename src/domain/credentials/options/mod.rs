//! The `credentials` options: as the user wrote them ([`CredentialsConfig`], also kept in the bridge's
//! configuration record) and validated ([`CredentialOptions`]). One validator for every resource, data source and
//! ephemeral resource, so that they accept and reject exactly the same values.

mod checks;
mod exec_providers;
#[cfg(test)]
mod tests;
mod validated;
mod written;

use crate::domain::problem::Problem;
use checks::namespace_list;
pub use checks::server_pattern;
pub use validated::{
    CredentialOptions, DEFAULT_CONSUMER, DEFAULT_REFRESH_BEFORE, SecretReaderMode,
    default_kubeconfig_keys,
};
pub use written::{CredentialsConfig, ExecProviderConfig};

impl CredentialsConfig {
    /// Validates the block into [`CredentialOptions`]. Every problem is an error whose path starts at
    /// `credentials`; no file is read here (the providers file is read by `crate::k8s`).
    pub fn validate(&self) -> Result<CredentialOptions, Vec<Problem>> {
        let mut problems = Vec::new();
        let mut opts = CredentialOptions::default();
        if let Some(label) = self.checked_secret_label(&mut problems) {
            opts.secret_label = label;
        }
        if let Some(consumer) = self.checked_consumer(&mut problems) {
            opts.consumer = consumer;
        }
        opts.consumer_only = !self.profile_namespace_secrets.unwrap_or(true);
        if let Some(keys) = self.checked_kubeconfig_keys(&mut problems) {
            opts.kubeconfig_keys = keys;
        }
        if let Some(b) = self.use_access_providers {
            opts.use_access_providers = b;
        }
        opts.exec_providers_file = self.checked_exec_providers_file(&mut problems);
        if let Some(d) = self.checked_refresh_before(&mut problems) {
            opts.refresh_before = d;
        }
        opts.secret_namespaces =
            namespace_list(&mut problems, "secret_namespaces", &self.secret_namespaces);
        opts.secret_reader_namespaces = namespace_list(
            &mut problems,
            "secret_reader_namespaces",
            &self.secret_reader_namespaces,
        );
        if let Some(mode) = self.checked_secret_reader_mode(&mut problems) {
            opts.secret_reader_mode = mode;
        }
        opts.allow_exec_kubeconfigs = self.allow_exec_kubeconfigs.unwrap_or(false);
        opts.exec_allowed_servers = self.checked_exec_allowed_servers(&mut problems);
        opts.exec_providers = self.checked_exec_providers(&mut problems);
        if problems.is_empty() {
            Ok(opts)
        } else {
            Err(problems)
        }
    }
}

/// Validates an optional block (absent: the defaults).
pub fn validate(config: Option<&CredentialsConfig>) -> Result<CredentialOptions, Vec<Problem>> {
    config.cloned().unwrap_or_default().validate()
}
