//! Where a ClusterProfile's kubeconfig comes from, and whether it can be used: the one credential path of the
//! provider. The bridge resource, both ClusterProfile data sources and the ephemeral credentials resource all go
//! through it:
//!
//! 1. [`options`]: the `credentials` block, validated once ([`CredentialsConfig::validate`]);
//! 2. [`locate`]: per profile, the single source its credentials come from ([`locate::locate`]), with the trust
//!    rules on namespaces (a profile never makes the bridge read a Secret outside the namespaces the operator
//!    allowed);
//! 3. [`resolve`](mod@resolve): whether that source holds usable, inert credentials ([`resolve()`]); for a
//!    `kubeconfig-secretreader` Secret, `connect` sends the user of its kubeconfig where the ClusterProfile's access
//!    provider points (`secret_reader_mode = "credential"`, the default).
//!
//! Nothing here reads from the cluster: `crate::k8s::credentials` reads the Secrets and namespaces these
//! functions ask for.

mod connect;
pub mod locate;
pub mod options;
pub mod resolve;

use std::fmt;

pub use locate::{CredentialSource, Lookup, SecretIndex, access_providers, exec_extension, locate};
pub use options::{
    CredentialOptions, CredentialsConfig, SecretReaderMode, default_kubeconfig_keys,
};
#[cfg(test)]
pub(crate) use resolve::{CHECK_BUILD, source_sha256_under};
pub use resolve::{CheckedKubeconfigs, CredentialSecrets, Resolved, resolve, source_sha256};

/// The annotation `crate::k8s` puts on its own copy of a credential Secret that exists but does not decode (its
/// value: why). Never read from the cluster: the copies a lookup indexes carry no annotation of the Secret's own.
pub const UNREADABLE_MARK: &str = "sveltos.clusterinventory.io/provider-internal-unreadable";

/// Why a profile's credentials cannot be used. Displays name objects (namespace/name, keys, fields), never
/// credential content.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialProblem {
    /// No source was found; the text says what was looked at.
    #[error("no usable credential source: {looked_at}")]
    NotFound {
        /// What was looked at, and why each candidate was not used.
        looked_at: String,
    },
    /// Two or more candidate Secrets.
    #[error("two or more kubeconfig Secrets: {}", secrets.join(", "))]
    Ambiguous {
        /// `namespace/name` of every candidate, sorted.
        secrets: Vec<String>,
    },
    /// A `kubeconfig-secretreader` provider names a Secret in a namespace the operator did not allow.
    #[error(
        "access provider kubeconfig-secretreader names a Secret in namespace {namespace:?}, which is neither the \
         ClusterProfile's namespace nor listed in credentials.secret_reader_namespaces; it was not read"
    )]
    ForeignSecretReaderNamespace {
        /// The namespace the profile asked for.
        namespace: String,
    },
    /// A `kubeconfig-secretreader` provider names its Secret with a value that is not a valid name, key or
    /// context: nothing was requested for it.
    #[error(
        "access provider kubeconfig-secretreader: {member} {value} is not valid ({reason}); nothing was read"
    )]
    BadSecretReaderReference {
        /// The member of the exec extension (`name`, `key`, `namespace`, `context`).
        member: &'static str,
        /// Its value, quoted, escaped and at most 64 characters.
        value: String,
        /// Why.
        reason: String,
    },
    /// A `kubeconfig-secretreader` credential cannot be sent where the access provider's `cluster` entry points
    /// (`secret_reader_mode = "credential"`).
    #[error("access provider kubeconfig-secretreader: {reason}")]
    SecretReaderConnection {
        /// Why (names the Secret, fields and hosts; never credential content).
        reason: String,
    },
    /// The Secret a source names does not exist (or vanished between reads).
    #[error("Secret {secret} does not exist")]
    SecretMissing {
        /// `namespace/name`.
        secret: String,
    },
    /// The Secret exists but does not decode (someone stored a value the bridge cannot read in it).
    #[error("Secret {secret} cannot be read: {reason}")]
    Unreadable {
        /// `namespace/name`.
        secret: String,
        /// The decoder's message, escaped and bounded.
        reason: String,
    },
    /// The Secret has none of the keys tried.
    #[error(
        "Secret {secret} has none of the keys {keys:?} (it has {present:?}); set credentials.kubeconfig_keys"
    )]
    NoKey {
        /// `namespace/name`.
        secret: String,
        /// Keys tried.
        keys: Vec<String>,
        /// Keys present.
        present: Vec<String>,
    },
    /// The kubeconfig is not valid, not inert, or too large.
    #[error("Secret {secret}: {reason}")]
    Kubeconfig {
        /// `namespace/name`.
        secret: String,
        /// Why (names fields, never quotes content).
        reason: String,
    },
    /// The exec provider cannot be used for this profile.
    #[error("exec provider {provider}: {reason}")]
    Exec {
        /// Provider name.
        provider: String,
        /// Why.
        reason: String,
    },
}

impl CredentialProblem {
    /// A short, stable name of the cause, used to group problems of many clusters into one diagnostic.
    pub fn cause(&self) -> &'static str {
        match self {
            Self::NotFound { .. } | Self::SecretMissing { .. } | Self::NoKey { .. } => {
                "no usable credentials"
            }
            Self::Ambiguous { .. } => "two or more candidate kubeconfig Secrets",
            Self::ForeignSecretReaderNamespace { .. } => {
                "kubeconfig-secretreader names a Secret in a namespace that is not allowed"
            }
            Self::BadSecretReaderReference { .. } => {
                "kubeconfig-secretreader names its Secret with an invalid value"
            }
            Self::Kubeconfig { .. } => "kubeconfig refused",
            Self::SecretReaderConnection { .. } => {
                "kubeconfig-secretreader credential refused for the access provider's cluster entry"
            }
            Self::Unreadable { .. } => "a credential Secret cannot be read",
            Self::Exec { .. } => "exec provider refused",
        }
    }
}

/// `namespace/name` of an object's metadata.
pub(crate) fn object_id(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

impl fmt::Display for Lookup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}
