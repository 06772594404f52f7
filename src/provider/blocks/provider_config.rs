//! The `sveltos` provider's configuration block: the hashicorp/kubernetes provider's connection attributes
//! ([`super::connection`]), with the same names, environment variables and precedence, and what
//! `ConfigureProvider` makes of them.

use crate::{
    k8s::config::{self, KubeSettings},
    provider::{
        blocks::connection,
        state::{Configured, ProviderState},
    },
    tfplugin::{AttributePath, Diagnostic, Diagnostics, Schema, Value},
};

/// The provider configuration schema: the connection attributes ([`connection::with_connection_schema`]).
pub fn config_schema() -> Schema {
    let mut schema = Schema::new(0).markdown_description(
        "Connects to the management cluster that holds the ClusterProfiles and SveltosClusters. Same attributes, \
         environment variables and precedence as the `hashicorp/kubernetes` provider; with nothing set, \
         `KUBECONFIG` and then in-cluster configuration are used.",
    );
    schema.block = connection::with_connection_schema(schema.block);
    schema
}

/// Maps the configuration block (known) to [`KubeSettings`]; an error names the attribute.
pub fn settings_from(config: &Value) -> Result<KubeSettings, Diagnostic> {
    connection::settings_from_value(config)
}

/// Configures `state` from the provider block: a client for the management cluster, the attributes not known
/// yet, or why the configuration failed (also in the diagnostics it returns).
pub fn configure(state: &ProviderState, config: &Value) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let unknown = connection::unknown_attributes(config, &AttributePath::root());
    let result = if !unknown.is_empty() {
        let unknown: Vec<String> = unknown.iter().map(ToString::to_string).collect();
        tracing::debug!(attributes = ?unknown, "provider configuration has unknown values");
        Configured::Unknown(unknown)
    } else {
        let env = |k: &str| std::env::var(k).ok();
        let settings = settings_from(config).map_err(|d| {
            let failed = d.detail.clone();
            diags.push(d);
            failed
        });
        match settings.map(|s| config::connect(&s, &env)) {
            Err(failed) => Configured::Failed(failed),
            Ok(Ok(client)) => Configured::Ready(client),
            Ok(Err(e @ config::ConfigError::Client(_))) => {
                diags.error("Cannot create the Kubernetes client", e.to_string());
                Configured::Failed(e.to_string())
            }
            Ok(Err(e)) => {
                let mut d = Diagnostic::error("Invalid provider configuration", e.to_string());
                if let Some(path) = connection::error_path(&e, &AttributePath::root()) {
                    d = d.with_attribute(path);
                }
                diags.push(d);
                Configured::Failed(e.to_string())
            }
        }
    };
    state.set_configured(result);
    diags
}
