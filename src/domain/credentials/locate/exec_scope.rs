//! Whether the operator's scope (`credentials.exec_providers`) lets a profile use an exec provider of the
//! providers file.

use crate::{
    api::AccessProvider,
    domain::{
        credentials::{CredentialOptions, CredentialProblem},
        exec::ProviderEntry,
    },
};

/// Why an exec provider of the providers file is passed over for a profile.
pub(super) enum Passed {
    /// Try the next source; the text says why this one was not used.
    Over(String),
    /// The profile may use the provider, but not with this cluster entry: the profile is not bridged.
    Refused(CredentialProblem),
}

/// Whether a profile in `namespace` may use exec provider `entry` with its access provider `provider`: the
/// operator's scope (`credentials.exec_providers`) must allow the namespace and, when it lists servers, the
/// server (https, verified TLS).
pub(super) fn exec_usable(
    namespace: &str,
    provider: &AccessProvider,
    entry: &ProviderEntry,
    options: &CredentialOptions,
) -> Result<(), Passed> {
    let name = &provider.name;
    if !options.use_access_providers {
        return Err(Passed::Over(format!(
            "access provider {name} ignored (credentials.use_access_providers = false)"
        )));
    }
    let Some(scope) = entry.scope.as_ref() else {
        return Err(Passed::Over(format!(
            "exec provider {name} is in the providers file but not in credentials.exec_providers, so no \
             ClusterProfile may use it; set credentials.exec_providers[\"{name}\"] to allow it"
        )));
    };
    if !scope.allows_namespace(namespace) {
        return Err(Passed::Over(format!(
            "exec provider {name} is not allowed for namespace {namespace} \
             (credentials.exec_providers[\"{name}\"].namespaces)"
        )));
    }
    let Some(cluster) = provider.cluster.as_ref() else {
        return Err(Passed::Over(format!(
            "access provider {name} has no cluster entry"
        )));
    };
    if !scope.servers.is_empty() {
        let attribute = format!("credentials.exec_providers[\"{name}\"].servers");
        let refused = |reason: String| {
            Passed::Refused(CredentialProblem::Exec {
                provider: name.clone(),
                reason,
            })
        };
        if cluster.insecure_skip_tls_verify == Some(true) || !cluster.server.starts_with("https://")
        {
            return Err(refused(format!(
                "with {attribute}, the access provider's server must be https:// without insecure-skip-tls-verify"
            )));
        }
        scope
            .servers
            .check_for(&cluster.server, &attribute)
            .map_err(|e| refused(e.to_string()))?;
    }
    Ok(())
}
