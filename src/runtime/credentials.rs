//! The credential path's IO, one sequence for everything that locates or mints credentials: the sources read
//! (the consumer namespaces' labels and the labelled Secrets, `k8s::credentials::read_sources`), each profile's
//! source located by the core, the Secrets that `kubeconfig-secretreader` providers name read, and (for an exec
//! source) the plugin run and its credential written as a static kubeconfig ([`mint`]).
//!
//! The bridge's plan reads the same sources through [`super::inventory`] (possibly ahead of the plan) and locates
//! with the plan's own rules (`domain::plan::locate_all`); the data sources and the ephemeral resource take the
//! whole sequence from [`locate_credentials`]. Minting, for the bridge's apply and for the ephemeral resource, is
//! [`mint`] only. [`credentials_of`] is the ephemeral resource's whole path for one profile, from its read to a
//! kubeconfig.

use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use std::collections::BTreeMap;

use crate::{
    api::ClusterProfile,
    domain::{
        credentials::{
            CredentialOptions, CredentialProblem, CredentialSecrets, CredentialSource, Lookup,
            Resolved, SecretIndex, access_providers, locate, resolve, resolve::secrets_to_read,
        },
        exec::{ExecInvocation, ProvidersFile, static_kubeconfig},
        kubeconfig::ConnectionError,
        plan::invocation_sha256,
    },
    k8s::{
        credentials::{CredentialReads, read_named_secrets, read_sources},
        exec::{ExecRunError, run as run_exec},
        io::{self, IoError},
    },
};

/// What the credential path found for some profiles: each one's lookup (in the order given) and the Secrets a
/// located source may be resolved from. No `Debug`: it holds Secrets.
pub struct LocatedCredentials {
    /// One lookup per profile, in the order of the profiles given.
    pub lookups: Vec<Lookup>,
    reads: CredentialReads,
    fetched: BTreeMap<(String, String), Option<Secret>>,
}

impl LocatedCredentials {
    /// The Secrets the lookups' sources are resolved from (`domain::credentials::resolve`).
    pub fn secrets(&self) -> CredentialSecrets<'_> {
        CredentialSecrets::new(&self.reads.labelled, &self.fetched)
    }
}

/// Locates the credentials of `profiles` as the bridge does: reads the sources (within `budget`), locates each
/// profile's source, and reads the Secrets the located `kubeconfig-secretreader` sources name. Nothing is read for
/// no profile.
pub async fn locate_credentials(
    client: &Client,
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
    profiles: &[ClusterProfile],
    budget: &io::ReadBudget,
) -> Result<LocatedCredentials, IoError> {
    if profiles.is_empty() {
        return Ok(LocatedCredentials {
            lookups: Vec::new(),
            reads: CredentialReads::default(),
            fetched: BTreeMap::new(),
        });
    }
    let keys: Vec<String> = profiles.iter().map(|p| p.key()).collect();
    let reads = read_sources(client, options, &keys, budget).await?;
    let index = SecretIndex::new(&reads.labelled, options, &reads.namespace_labels);
    let lookups: Vec<Lookup> = profiles
        .iter()
        .map(|p| locate(p, options, providers, &index))
        .collect();
    let fetched = read_named_secrets(client, &secrets_to_read(&lookups), budget).await?;
    tracing::debug!(
        profiles = profiles.len(),
        labelled_secrets = reads.labelled.len(),
        secretreader_secrets = fetched.len(),
        "located ClusterProfile credentials"
    );
    Ok(LocatedCredentials {
        lookups,
        reads,
        fetched,
    })
}

/// A credential minted by an exec plugin, written as a static kubeconfig.
#[derive(Debug)]
pub struct Minted {
    /// The static kubeconfig: the access provider's cluster entry and the plugin's credential.
    pub kubeconfig: Vec<u8>,
    /// When the credential expires, as the plugin said (RFC 3339).
    pub expires_at: Option<String>,
    /// The digest of the plugin run (`domain::plan::invocation_sha256`).
    pub invocation_sha256: String,
}

/// Why the credential of one cluster could not be minted.
#[derive(Debug, thiserror::Error)]
pub enum MintError {
    /// The ClusterProfile the plan minted for is no longer in the snapshot.
    #[error("ClusterProfile {key} vanished during apply")]
    ProfileVanished {
        /// The profile key.
        key: String,
    },
    /// The profile no longer lists the access provider (or its cluster entry) the run was built from.
    #[error("access provider {provider} of ClusterProfile {key} vanished")]
    ProviderVanished {
        /// The profile key.
        key: String,
        /// The access provider's name.
        provider: String,
    },
    /// The exec plugin gave no credential.
    #[error("cannot mint credentials for ClusterProfile {key}")]
    Exec {
        /// The profile key.
        key: String,
        /// Why the plugin run failed.
        #[source]
        source: ExecRunError,
    },
    /// The access provider's cluster entry cannot be written as a static kubeconfig.
    #[error(
        "cannot mint credentials for ClusterProfile {key}: its cluster entry is not a kubeconfig cluster"
    )]
    Kubeconfig {
        /// The profile key.
        key: String,
        /// What is wrong with the cluster entry.
        #[source]
        source: ConnectionError,
    },
}

impl MintError {
    /// The key of the profile whose credential was not minted.
    pub fn key(&self) -> &str {
        match self {
            MintError::ProfileVanished { key }
            | MintError::ProviderVanished { key, .. }
            | MintError::Exec { key, .. }
            | MintError::Kubeconfig { key, .. } => key,
        }
    }
}

/// Runs the exec plugin of `inv` (built from `profile`) and writes its credential with the access provider's
/// cluster entry as a static kubeconfig: the one minting path.
pub async fn mint(profile: &ClusterProfile, inv: &ExecInvocation) -> Result<Minted, MintError> {
    let key = || profile.key();
    let cluster = access_providers(profile)
        .into_iter()
        .find(|a| a.name == inv.provider)
        .and_then(|a| a.cluster.clone())
        .ok_or_else(|| MintError::ProviderVanished {
            key: key(),
            provider: inv.provider.clone(),
        })?;
    let cred = run_exec(inv)
        .await
        .map_err(|source| MintError::Exec { key: key(), source })?;
    let kubeconfig = static_kubeconfig(&cluster, &cred)
        .map_err(|source| MintError::Kubeconfig { key: key(), source })?;
    Ok(Minted {
        kubeconfig,
        expires_at: cred.expiration_timestamp.clone(),
        invocation_sha256: invocation_sha256(inv),
    })
}

/// The credentials of one profile, as the credential path gives them: a kubeconfig (from a Secret, or minted).
pub struct ProfileCredentials {
    /// The kubeconfig.
    pub kubeconfig: Vec<u8>,
    /// When a minted credential expires (RFC 3339); `None` for a kubeconfig from a Secret.
    pub expires_at: Option<String>,
    /// Where it came from.
    pub source: CredentialSource,
    /// The digest of the plugin run, for a minted credential.
    pub invocation_sha256: Option<String>,
    /// What the caller warns about (a `kubeconfig-secretreader` Secret whose kubeconfig points elsewhere than the
    /// ClusterProfile; see `domain::credentials::Resolved`): fields and hosts, never credential content.
    pub notice: Option<String>,
}

/// The credentials of ClusterProfile `namespace/name`, resolved as the bridge does ([`locate_credentials`]), its
/// exec plugin run ([`mint`]) when the profile's source is one.
pub async fn credentials_of(
    client: &Client,
    namespace: &str,
    name: &str,
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
) -> Result<ProfileCredentials, CredentialsError> {
    let profile = crate::k8s::profiles::get_opt(client, namespace, name)
        .await
        .map_err(|source| CredentialsError::ReadProfile { source })?
        .ok_or_else(|| CredentialsError::ProfileNotFound {
            namespace: namespace.into(),
            name: name.into(),
        })?;
    let profiles = [profile];
    let located = locate_credentials(
        client,
        options,
        providers,
        &profiles,
        &io::ReadBudget::default(),
    )
    .await
    .map_err(|source| CredentialsError::ReadSources { source })?;
    let source = match located.lookups.first() {
        Some(Lookup::Found(s)) => s.clone(),
        Some(Lookup::Unusable(p)) => return Err(CredentialsError::Refused { source: p.clone() }),
        None => unreachable!("one lookup per profile"),
    };
    let resolved = resolve(
        &profiles[0],
        &source,
        options,
        providers,
        &located.secrets(),
    )
    .map_err(|source| CredentialsError::Refused { source })?;
    tracing::debug!(%namespace, %name, source = %source, "resolved ClusterProfile credentials");
    Ok(match resolved {
        Resolved::Kubeconfig { bytes, notice } => ProfileCredentials {
            kubeconfig: bytes,
            expires_at: None,
            source,
            invocation_sha256: None,
            notice,
        },
        Resolved::Exec(inv) => {
            let minted = mint(&profiles[0], &inv)
                .await
                .map_err(|source| CredentialsError::Mint { source })?;
            ProfileCredentials {
                kubeconfig: minted.kubeconfig,
                expires_at: minted.expires_at,
                source,
                invocation_sha256: Some(minted.invocation_sha256),
                notice: None,
            }
        }
    })
}

/// Why a cluster's credentials could not be produced. Displays name objects, sources and fields, never
/// credential content.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    /// The ClusterProfile does not exist.
    #[error(
        "there is no ClusterProfile (multicluster.x-k8s.io) named {name} in namespace {namespace}"
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
    /// The exec plugin's credential could not be minted.
    #[error("{source}")]
    Mint {
        /// Why.
        #[source]
        source: MintError,
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
