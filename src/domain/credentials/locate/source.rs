//! What a lookup finds: a [`CredentialSource`] (where a kubeconfig can be read from), or why there is none.

use std::fmt;

use crate::{api::keys, domain::credentials::CredentialProblem};

/// A place a kubeconfig can be read from (never the bytes themselves).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum CredentialSource {
    /// A Secret labelled `x-k8s.io/cluster-profile=<name>`.
    LabelledSecret {
        /// Secret namespace.
        namespace: String,
        /// Secret name.
        name: String,
        /// Data key holding the kubeconfig.
        key: String,
    },
    /// The `kubeconfig-secretreader` access provider naming a Secret; `key` is `None` when the provider does
    /// not name one (then the configured `kubeconfig_keys` are tried in order).
    SecretReader {
        /// Secret namespace.
        namespace: String,
        /// Secret name.
        name: String,
        /// Data key, if the provider names one.
        key: Option<String>,
        /// Context of the stored kubeconfig to use (upstream's optional `context` member); `None`: its
        /// current-context.
        context: Option<String>,
    },
    /// An exec plugin provider from the providers file.
    Exec {
        /// Provider name (as in `status.accessProviders[].name` and the providers file).
        provider: String,
    },
}

impl fmt::Display for CredentialSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LabelledSecret {
                namespace,
                name,
                key,
            } => write!(f, "secret:{namespace}/{name}#{key}"),
            Self::SecretReader {
                namespace,
                name,
                key,
                context,
            } => {
                write!(
                    f,
                    "access-provider:{}:{namespace}/{name}",
                    keys::SECRET_READER_PROVIDER
                )?;
                if let Some(key) = key {
                    write!(f, "#{key}")?;
                }
                if let Some(context) = context {
                    write!(f, "@{}", crate::domain::text::shown(context, 253))?;
                }
                Ok(())
            }
            Self::Exec { provider } => write!(f, "exec:{provider}"),
        }
    }
}

/// The outcome of looking for a profile's credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// Found a single source (whether it holds usable credentials is [`resolve`](crate::domain::credentials::resolve)'s question).
    Found(CredentialSource),
    /// No single usable source.
    Unusable(CredentialProblem),
}

impl Lookup {
    /// Human-readable description for `credential_source` attributes.
    pub fn describe(&self) -> String {
        match self {
            Self::Found(s) => s.to_string(),
            Self::Unusable(CredentialProblem::NotFound { looked_at }) => {
                format!("none: {looked_at}")
            }
            Self::Unusable(CredentialProblem::Ambiguous { secrets }) => {
                format!("ambiguous: {}", secrets.join(", "))
            }
            Self::Unusable(p) => format!("none: {p}"),
        }
    }
}
