//! The credential path of `sveltos_cluster_credentials`: the ClusterProfile read, its credential sources located
//! and judged as the bridge does, an exec plugin run when the source is one; when to renew; and the failures, as
//! errors that name objects and sources, never credential content.

use std::time::{Duration, SystemTime};

use crate::{
    api::ClusterProfile,
    domain::{
        credentials::{
            CredentialOptions, CredentialProblem, CredentialSecrets, CredentialSource, Lookup,
            Resolved, SecretIndex, access_providers, locate, resolve, resolve::secrets_to_read,
        },
        exec::{ProvidersFile, static_kubeconfig},
        kubeconfig::ConnectionError,
        plan::invocation_sha256,
    },
    k8s::{
        credentials::{read_named_secrets, read_sources},
        exec::{ExecRunError, run as run_exec},
        io::{self, IoError},
    },
    tfplugin::{AttributePath, Diagnostic},
};

/// Why a cluster's credentials could not be produced. Displays name objects, sources and fields, never
/// credential content.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    /// The ClusterProfile does not exist.
    #[error(
        "there is no ClusterProfile (multicluster.x-k8s.io/v1alpha1) named {name} in namespace {namespace}"
    )]
    ProfileNotFound {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// Reading the ClusterProfile failed.
    #[error("{source}")]
    ReadProfile {
        /// The API error.
        #[source]
        source: IoError,
    },
    /// Reading the credential Secrets or namespaces failed.
    #[error("{source}")]
    ReadSources {
        /// The API error.
        #[source]
        source: IoError,
    },
    /// The credential path found no usable source, or refused it.
    #[error("{source}")]
    Refused {
        /// What the credential path decided.
        #[source]
        source: CredentialProblem,
    },
    /// The exec access provider disappeared from the profile between two reads.
    #[error("access provider {provider} vanished from the ClusterProfile")]
    AccessProviderVanished {
        /// Its name.
        provider: String,
    },
    /// The exec plugin gave no credential.
    #[error("{source}")]
    Mint {
        /// Why.
        #[source]
        source: ExecRunError,
    },
    /// The access provider's cluster entry cannot be written as a kubeconfig with the minted credential.
    #[error("the access provider's cluster entry cannot be written as a kubeconfig: {source}")]
    Unwritable {
        /// Why.
        #[source]
        source: ConnectionError,
    },
    /// The kubeconfig holds no usable connection settings.
    #[error("{source} (source {credential_source})")]
    Kubeconfig {
        /// Where the kubeconfig came from.
        credential_source: String,
        /// Why.
        #[source]
        source: ConnectionError,
    },
    /// At renew, the profile names another source or plugin run than when the resource was opened.
    #[error(
        "the credentials now come from {now} instead of {was} (or the plugin run changed); they are not renewed \
         within this run"
    )]
    Changed {
        /// Source when opened.
        was: String,
        /// Source now.
        now: String,
    },
}

/// A kubeconfig obtained through the credential path.
pub(super) struct Minted {
    pub kubeconfig: Vec<u8>,
    pub expires_at: Option<String>,
    pub source: CredentialSource,
    pub invocation_sha256: Option<String>,
}

/// Resolves the credentials of ClusterProfile `namespace/name` as the bridge does, running an exec plugin when
/// the profile's source is one.
pub(super) async fn mint(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
) -> Result<Minted, CredentialsError> {
    let profile = io::get_opt::<ClusterProfile>(client, namespace, name)
        .await
        .map_err(|source| CredentialsError::ReadProfile { source })?
        .ok_or_else(|| CredentialsError::ProfileNotFound {
            namespace: namespace.into(),
            name: name.into(),
        })?;
    let budget = io::ReadBudget::default();
    let reads = read_sources(client, options, &[profile.key()], &budget)
        .await
        .map_err(|source| CredentialsError::ReadSources { source })?;
    let index = SecretIndex::new(&reads.labelled, options, &reads.namespace_labels);
    let lookup = locate(&profile, options, providers, &index);
    let source = match &lookup {
        Lookup::Found(s) => s.clone(),
        Lookup::Unusable(p) => return Err(CredentialsError::Refused { source: p.clone() }),
    };
    let fetched = read_named_secrets(client, &secrets_to_read([&lookup]), &budget)
        .await
        .map_err(|source| CredentialsError::ReadSources { source })?;
    let secrets = CredentialSecrets::new(&reads.labelled, &fetched);
    let resolved = resolve(&profile, &source, options, providers, &secrets)
        .map_err(|source| CredentialsError::Refused { source })?;
    tracing::debug!(%namespace, %name, source = %source, "resolved ClusterProfile credentials");
    match resolved {
        Resolved::Kubeconfig { bytes, .. } => Ok(Minted {
            kubeconfig: bytes,
            expires_at: None,
            source,
            invocation_sha256: None,
        }),
        Resolved::Exec(inv) => {
            let cluster = access_providers(&profile)
                .into_iter()
                .find(|a| a.name == inv.provider)
                .and_then(|a| a.cluster.clone())
                .ok_or_else(|| CredentialsError::AccessProviderVanished {
                    provider: inv.provider.clone(),
                })?;
            let cred = run_exec(&inv)
                .await
                .map_err(|source| CredentialsError::Mint { source })?;
            Ok(Minted {
                kubeconfig: static_kubeconfig(&cluster, &cred)
                    .map_err(|source| CredentialsError::Unwritable { source })?,
                expires_at: cred.expiration_timestamp.clone(),
                source,
                invocation_sha256: Some(invocation_sha256(&inv)),
            })
        }
    }
}

/// When to renew a credential expiring at `expires_at`: `refresh_before` ahead of it, or halfway to it when that
/// moment has passed already. `None`: no expiry, or already expired (nothing to renew).
pub fn renew_at(
    expires_at: Option<&str>,
    refresh_before: Duration,
    now: SystemTime,
) -> Option<SystemTime> {
    let expiry = SystemTime::from(expires_at?.parse::<jiff::Timestamp>().ok()?);
    let left = expiry.duration_since(now).ok().filter(|d| !d.is_zero())?;
    Some(match left.checked_sub(refresh_before) {
        Some(wait) if !wait.is_zero() => now + wait,
        _ => now + left / 2,
    })
}

/// The error diagnostic for a failure on ClusterProfile `namespace/name`.
pub(super) fn failure(namespace: &str, name: &str, e: &CredentialsError) -> Diagnostic {
    let d = Diagnostic::error(
        format!("Cannot get the credentials of ClusterProfile {namespace}/{name}"),
        format!(
            "{e}. The sveltos_cluster_credentials ephemeral resource resolves credentials as \
             sveltos_cluster_inventory_bridge does; the sveltos_clusterprofile data source reports where they would \
             come from."
        ),
    );
    match e {
        CredentialsError::ProfileNotFound { .. } => d.with_attribute(AttributePath::attr("name")),
        _ => d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renew_at_is_refresh_before_ahead_of_expiry_or_halfway() {
        let now = SystemTime::from("2030-01-01T00:00:00Z".parse::<jiff::Timestamp>().unwrap());
        let min = |m: u64| Duration::from_secs(60 * m);
        assert_eq!(
            renew_at(Some("2030-01-01T01:00:00Z"), min(10), now),
            Some(now + min(50))
        );
        // Already inside refresh_before: halfway to expiry, never in the past.
        assert_eq!(
            renew_at(Some("2030-01-01T00:04:00Z"), min(10), now),
            Some(now + min(2))
        );
        assert_eq!(renew_at(Some("2029-12-31T23:00:00Z"), min(10), now), None);
        assert_eq!(renew_at(None, min(10), now), None);
        assert_eq!(renew_at(Some("soon"), min(10), now), None);
    }
}
