//! Candidate kubeconfigs from the inventory: judged, then rewritten.
//!
//! A kubeconfig found in a labelled Secret or named by an access provider is written by whoever can write the
//! inventory, and Sveltos loads what the bridge writes with client-go. So it goes through three steps, without IO:
//!
//! 1. **Parsed under a budget** ([`tree`]): at most [`MAX_BYTES`] of UTF-8 text, nesting at most [`MAX_DEPTH`]
//!    levels, at most [`MAX_NODES`] nodes *after alias expansion* (a "billion laughs" document is refused after a
//!    few aliases, in milliseconds). Every construct that YAML 1.1 (client-go's reader) and YAML 1.2 (ours) read
//!    differently is refused: explicit tags, merge keys in any style, U+0085/U+2028/U+2029, non-scalar keys,
//!    duplicate keys, several documents.
//! 2. **Inert** ([`inspect`]): nothing in any entry may make a reader run a command or read a file:
//!    `users[].user.exec` (unless [`KubeconfigPolicy::allow_exec`]), `users[].user.auth-provider`,
//!    `users[].user.tokenFile`, `users[].user.client-certificate`, `users[].user.client-key` and
//!    `clusters[].cluster.certificate-authority` are refused (keys compared without regard to ASCII case).
//! 3. **Rewritten** ([`canonical`]): the context a reader would use is reduced to the fields the bridge
//!    understands ([`Connection`]: server, CA, TLS server name, proxy, token, client certificate and key,
//!    username/password, and an allowed `exec`) and written as a new document. The source bytes are never
//!    written anywhere: whatever a reader might find in them that the check did not, it is not in the output.
//!
//! Errors locate the problem by field path with entry indices (`users[0].user.exec`) or by line and column,
//! and never quote the document.

use std::fmt;

mod canonical;
mod connection;
mod tree;

pub use canonical::{NAME, canonical, for_cluster};
pub use connection::{Connection, ConnectionError, ExecUser, connection, select};
pub(crate) use tree::{Node, parse};

/// Largest kubeconfig accepted, in bytes (1 MiB).
pub const MAX_BYTES: usize = 1 << 20;
/// Deepest nesting of sequences and mappings accepted.
pub const MAX_DEPTH: usize = 64;
/// Most nodes accepted, counting every node an alias stands for. A kubeconfig for one cluster has a few dozen;
/// this also bounds the parsing work (a document is refused after at most this many nodes).
pub const MAX_NODES: usize = 20_000;

/// What the operator allows in a kubeconfig beyond inline data. Everything [`inspect`]'s verdict depends on besides
/// the bytes is here (and the code of this module, with the crates it uses): `crate::domain::credentials` reuses a
/// verdict (`CheckedKubeconfigs`, and the ledger's record of an apply's check, `source_sha256`) only under an equal
/// policy and a build with the same checking code (`build.rs`, `KUBECONFIG_CHECK_BUILD`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KubeconfigPolicy {
    /// Accept `users[].user.exec` (`credentials.allow_exec_kubeconfigs = true`): for Sveltos images that ship
    /// the plugin the kubeconfig names.
    pub allow_exec: bool,
}

/// What an accepted kubeconfig contains (no credentials).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct KubeconfigFacts {
    /// `clusters[].cluster.server`, in order, for the entries that have one.
    pub servers: Vec<String>,
    /// Number of `clusters` entries (at least one).
    pub clusters: usize,
    /// Number of `users` entries.
    pub users: usize,
    /// Paths of the `exec` users that the policy allowed (`users[1].user.exec`).
    pub exec_users: Vec<String>,
}

impl fmt::Debug for KubeconfigFacts {
    /// Server addresses are inventory data (and may carry user info): only their count is shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeconfigFacts")
            .field("servers", &self.servers.len())
            .field("clusters", &self.clusters)
            .field("users", &self.users)
            .field("exec_users", &self.exec_users)
            .finish()
    }
}

/// A field that would make a kubeconfig's reader run a command or read a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusedField {
    /// `users[].user.exec`: runs a credential plugin.
    Exec,
    /// `users[].user.auth-provider`: runs a provider's command or refreshes tokens through it.
    AuthProvider,
    /// `users[].user.tokenFile`: reads a token from a file.
    TokenFile,
    /// `users[].user.client-certificate`: reads a certificate from a file.
    ClientCertificate,
    /// `users[].user.client-key`: reads a private key from a file.
    ClientKey,
    /// `clusters[].cluster.certificate-authority`: reads CA certificates from a file.
    CertificateAuthority,
}

impl RefusedField {
    const USER_FIELDS: [Self; 5] = [
        Self::Exec,
        Self::AuthProvider,
        Self::TokenFile,
        Self::ClientCertificate,
        Self::ClientKey,
    ];

    /// The field's key in the kubeconfig format.
    pub fn key(self) -> &'static str {
        match self {
            Self::Exec => "exec",
            Self::AuthProvider => "auth-provider",
            Self::TokenFile => "tokenFile",
            Self::ClientCertificate => "client-certificate",
            Self::ClientKey => "client-key",
            Self::CertificateAuthority => "certificate-authority",
        }
    }

    /// Why the field is refused.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Exec => {
                "it runs a command wherever the kubeconfig is used (credentials.allow_exec_kubeconfigs = true accepts exec users in what the bridge writes for Sveltos)"
            }
            Self::AuthProvider => "it runs an auth provider wherever the kubeconfig is used",
            Self::TokenFile
            | Self::ClientCertificate
            | Self::ClientKey
            | Self::CertificateAuthority => {
                "it reads a file wherever the kubeconfig is used; use the inline *-data or token fields"
            }
        }
    }
}

/// Why a candidate kubeconfig is not accepted. No variant holds any of the document's content.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KubeconfigError {
    /// The document is larger than [`MAX_BYTES`].
    #[error("the kubeconfig is {size} bytes, more than the limit of {limit}")]
    TooLarge {
        /// Its size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The document is not UTF-8 text.
    #[error("the kubeconfig is not UTF-8 text")]
    NotUtf8,
    /// The YAML/JSON parser rejected the document.
    #[error("the value is not valid YAML/JSON (line {line}, column {column})")]
    Syntax {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
    },
    /// Sequences and mappings nest deeper than [`MAX_DEPTH`].
    #[error("the kubeconfig nests deeper than {limit} levels")]
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// More than [`MAX_NODES`] nodes once aliases are expanded.
    #[error("the kubeconfig has more than {limit} nodes once its aliases are expanded")]
    TooManyNodes {
        /// The limit.
        limit: usize,
    },
    /// An alias refers to a node that encloses it, or to no anchor.
    #[error("the kubeconfig has an alias to an enclosing or undefined anchor (line {line})")]
    BadAlias {
        /// 1-based line of the alias.
        line: usize,
    },
    /// A mapping has the same key twice.
    #[error("the kubeconfig has a duplicate key in the mapping at line {line}, column {column}")]
    DuplicateKey {
        /// 1-based line of the mapping.
        line: usize,
        /// 1-based column of the mapping.
        column: usize,
    },
    /// A YAML merge key (`<<`, in any style), which readers of kubeconfigs resolve differently, or a sequence or
    /// mapping used as a key.
    #[error(
        "the kubeconfig has a merge key (`<<`) or a non-scalar key at line {line}; write the entries out"
    )]
    RefusedKey {
        /// 1-based line of the key.
        line: usize,
    },
    /// An explicit tag (`!!binary`, `!!str`, `!!merge`, `!local`, ...): YAML 1.1 and 1.2 readers resolve tags
    /// differently (a `!!binary` key is its decoded text to client-go).
    #[error("the kubeconfig has an explicit YAML tag at line {line}; write plain values")]
    Tag {
        /// 1-based line of the tagged node.
        line: usize,
    },
    /// U+0085, U+2028 or U+2029, which YAML 1.1 readers (client-go) take for a line break and YAML 1.2 readers
    /// for text.
    #[error("the kubeconfig has a U+0085, U+2028 or U+2029 line separator at line {line}")]
    LineSeparator {
        /// 1-based line (counting `\n` breaks) where it is.
        line: usize,
    },
    /// More than one YAML document in the stream.
    #[error("the kubeconfig holds more than one YAML document")]
    MultipleDocuments,
    /// The document is empty or not a mapping.
    #[error("the value is not a kubeconfig (not a mapping)")]
    NotAMapping,
    /// No non-empty `clusters` list.
    #[error("the value is not a kubeconfig (no `clusters` entries)")]
    NoClusters,
    /// A field that would run a command or read a file.
    #[error("`{path}` is not allowed: {}", field.reason())]
    Refused {
        /// Where it is, by entry index (`users[0].user.exec`).
        path: String,
        /// Which field it is.
        field: RefusedField,
    },
}

/// Parses `bytes` as a kubeconfig under the budget and checks that it is inert under `policy`.
pub fn inspect(
    bytes: &[u8],
    policy: &KubeconfigPolicy,
) -> Result<KubeconfigFacts, KubeconfigError> {
    let root = parse(bytes)?;
    check(&root, policy)
}

/// The inertness check over a parsed document.
fn check(root: &Node, policy: &KubeconfigPolicy) -> Result<KubeconfigFacts, KubeconfigError> {
    if !matches!(root, Node::Map(_)) {
        return Err(KubeconfigError::NotAMapping);
    }
    let mut facts = KubeconfigFacts::default();
    for clusters in root.fields("clusters") {
        for (i, entry) in clusters.items().iter().enumerate() {
            facts.clusters += 1;
            for cluster in entry.fields("cluster") {
                if cluster
                    .fields(RefusedField::CertificateAuthority.key())
                    .next()
                    .is_some()
                {
                    return Err(KubeconfigError::Refused {
                        path: format!(
                            "clusters[{i}].cluster.{}",
                            RefusedField::CertificateAuthority.key()
                        ),
                        field: RefusedField::CertificateAuthority,
                    });
                }
                facts.servers.extend(
                    cluster
                        .fields("server")
                        .filter_map(Node::as_str)
                        .map(str::to_string),
                );
            }
        }
    }
    for users in root.fields("users") {
        for (i, entry) in users.items().iter().enumerate() {
            facts.users += 1;
            for user in entry.fields("user") {
                for field in RefusedField::USER_FIELDS {
                    if user.fields(field.key()).next().is_none() {
                        continue;
                    }
                    let path = format!("users[{i}].user.{}", field.key());
                    if field == RefusedField::Exec && policy.allow_exec {
                        facts.exec_users.push(path);
                    } else {
                        return Err(KubeconfigError::Refused { path, field });
                    }
                }
            }
        }
    }
    if facts.clusters == 0 {
        return Err(KubeconfigError::NoClusters);
    }
    Ok(facts)
}

#[cfg(test)]
mod tests;
