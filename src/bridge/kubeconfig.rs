//! Candidate kubeconfigs from the inventory, judged before anything else reads them.
//!
//! A kubeconfig found in a labelled Secret or named by an access provider is written by whoever can write the
//! inventory, and the bridge copies it byte for byte into a Secret that Sveltos loads with client-go. So it is
//! checked twice here, without IO:
//!
//! 1. **Parsed under a budget.** At most [`MAX_BYTES`] of UTF-8 text, nesting at most [`MAX_DEPTH`] levels,
//!    and at most [`MAX_NODES`] nodes *after alias expansion*. The tree is built from the parser's event
//!    stream: an alias shares the anchored subtree (no copy) and is charged its full expanded size, so a
//!    "billion laughs" document is refused after a few aliases, in milliseconds, with bounded memory.
//!    Duplicate keys, YAML merge keys (`<<`) and multi-document streams are refused too: readers disagree on
//!    them, and a check that reads a document differently from client-go proves nothing.
//! 2. **Inert.** Nothing in it may make the reader run a command or read a file: `users[].user.exec`
//!    (unless [`KubeconfigPolicy::allow_exec`]), `users[].user.auth-provider`, `users[].user.tokenFile`,
//!    `users[].user.client-certificate`, `users[].user.client-key` and `clusters[].cluster.certificate-authority`
//!    are refused (keys compared without regard to ASCII case, as older decoders did). Inline `*-data`
//!    fields, `token`, `username`/`password` and the server address are data and stay allowed.
//!
//! Errors locate the problem by field path with entry indices (`users[0].user.exec`) or by line and column,
//! and never quote the document.

use std::{collections::HashMap, fmt, rc::Rc};

use serde_saphyr::granit_parser::{self, Event, Options, Parser, ScalarStyle};

/// Largest kubeconfig accepted, in bytes (1 MiB).
pub const MAX_BYTES: usize = 1 << 20;
/// Deepest nesting of sequences and mappings accepted.
pub const MAX_DEPTH: usize = 64;
/// Most nodes accepted, counting every node an alias stands for. A kubeconfig for one cluster has a few dozen;
/// this also bounds the parsing work (a document is refused after at most this many nodes).
pub const MAX_NODES: usize = 20_000;

/// What the operator allows in a kubeconfig beyond inline data. Everything [`inspect`]'s verdict depends on besides
/// the bytes is here: `crate::bridge::credentials::CheckedKubeconfigs` reuses a verdict only under an equal policy.
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
                "it runs a command wherever the kubeconfig is used (set credentials.allow_exec_kubeconfigs = true to accept exec users)"
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
    /// A YAML merge key (`<<`), which readers of kubeconfigs resolve differently.
    #[error("the kubeconfig uses a YAML merge key (`<<`) at line {line}; write the entries out")]
    MergeKey {
        /// 1-based line of the key.
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

/// A node of the parsed document; aliased subtrees are shared, not copied.
pub(crate) enum Node {
    /// A scalar: its text, and whether it was written plain (unquoted).
    Scalar { text: String, plain: bool },
    /// A sequence.
    Seq(Vec<Rc<Node>>),
    /// A mapping, in document order.
    Map(Vec<(Rc<Node>, Rc<Node>)>),
}

impl fmt::Debug for Node {
    /// The shape only: scalars are document content.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Scalar { .. } => f.write_str("<scalar>"),
            Node::Seq(items) => f.debug_list().entries(items).finish(),
            Node::Map(entries) => f
                .debug_map()
                .entries(entries.iter().map(|(k, v)| (k, v)))
                .finish(),
        }
    }
}

impl Node {
    fn is_null(&self) -> bool {
        match self {
            Node::Scalar { text, plain: true } => {
                matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL")
            }
            Node::Scalar { text, plain: false } => text.is_empty(),
            _ => false,
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Node::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The non-null values under keys equal to `key` without regard to ASCII case.
    fn fields<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        let entries: &[(Rc<Node>, Rc<Node>)] = match self {
            Node::Map(entries) => entries,
            _ => &[],
        };
        entries.iter().filter_map(move |(k, v)| {
            (k.as_str().is_some_and(|k| k.eq_ignore_ascii_case(key)) && !v.is_null())
                .then_some(&**v)
        })
    }

    fn items(&self) -> &[Rc<Node>] {
        match self {
            Node::Seq(items) => items,
            _ => &[],
        }
    }
}

/// An open collection while the tree is built.
enum Frame {
    Seq {
        anchor: usize,
        items: Vec<Rc<Node>>,
        size: usize,
    },
    Map {
        anchor: usize,
        entries: Vec<(Rc<Node>, Rc<Node>)>,
        key: Option<Rc<Node>>,
        size: usize,
        line: usize,
        column: usize,
    },
}

impl Frame {
    /// Adds a finished child of `size` expanded nodes. Returns whether it was a `<<` key.
    fn push(&mut self, node: Rc<Node>, size: usize) -> bool {
        match self {
            Frame::Seq { items, size: s, .. } => {
                items.push(node);
                *s = s.saturating_add(size);
                false
            }
            Frame::Map {
                entries,
                key,
                size: s,
                ..
            } => {
                *s = s.saturating_add(size);
                match key.take() {
                    Some(k) => {
                        entries.push((k, node));
                        false
                    }
                    None => {
                        let merge =
                            matches!(&*node, Node::Scalar { text, plain: true } if text == "<<");
                        *key = Some(node);
                        merge
                    }
                }
            }
        }
    }
}

/// Builds the document tree under the budget.
pub(crate) fn parse(bytes: &[u8]) -> Result<Rc<Node>, KubeconfigError> {
    if bytes.len() > MAX_BYTES {
        return Err(KubeconfigError::TooLarge {
            size: bytes.len(),
            limit: MAX_BYTES,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|_| KubeconfigError::NotUtf8)?;
    let mut options = Options::default();
    options.set_emit_comments(false);
    // One more than ours, so that our own limit (with its own error) is reached first.
    options.flow_nesting_limit = MAX_DEPTH + 1;
    options.block_nesting_limit = MAX_DEPTH + 1;
    let mut parser = Parser::new_from_str_with_options(text, options);
    let mut tree = TreeBuilder::default();
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| scan_error(&e))?;
        tree.event(event, span.start.line(), span.start.col() + 1)?;
    }
    tree.root.ok_or(KubeconfigError::NotAMapping)
}

/// The error for a document the parser rejects.
fn scan_error(e: &granit_parser::ScanError) -> KubeconfigError {
    match e.kind() {
        granit_parser::ErrorKind::RecursionLimitExceeded => {
            KubeconfigError::TooDeep { limit: MAX_DEPTH }
        }
        _ => KubeconfigError::Syntax {
            line: e.marker().line(),
            column: e.marker().col() + 1,
        },
    }
}

/// The tree under construction from the parser's events, and the budget spent on it.
#[derive(Default)]
struct TreeBuilder {
    /// Anchored nodes by anchor id, with their expanded size.
    anchors: HashMap<usize, (Rc<Node>, usize)>,
    /// The collections opened and not yet closed, innermost last.
    stack: Vec<Frame>,
    /// The document's top node, once finished.
    root: Option<Rc<Node>>,
    /// Documents started.
    documents: usize,
    /// Expanded nodes so far.
    total: usize,
}

impl TreeBuilder {
    /// Counts `n` more expanded nodes against [`MAX_NODES`].
    fn charge(&mut self, n: usize) -> Result<(), KubeconfigError> {
        self.total = self.total.saturating_add(n);
        if self.total > MAX_NODES {
            Err(KubeconfigError::TooManyNodes { limit: MAX_NODES })
        } else {
            Ok(())
        }
    }

    /// Takes one event found at `line`/`column`.
    fn event(
        &mut self,
        event: Event<'_>,
        line: usize,
        column: usize,
    ) -> Result<(), KubeconfigError> {
        // A finished node: its anchor id (0 for none), the node and its expanded size.
        let (anchor, node, size) = match event {
            Event::DocumentStart(..) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(KubeconfigError::MultipleDocuments);
                }
                return Ok(());
            }
            Event::Scalar(text, style, anchor, _) => {
                self.charge(1)?;
                let plain = matches!(style, ScalarStyle::Plain);
                let text = text.into_owned();
                (anchor, Rc::new(Node::Scalar { text, plain }), 1)
            }
            Event::Alias(id) => {
                let (node, size) = self
                    .anchors
                    .get(&id)
                    .cloned()
                    .ok_or(KubeconfigError::BadAlias { line })?;
                self.charge(size)?;
                (0, node, size)
            }
            Event::SequenceStart(_, anchor, _) => {
                return self.open(Frame::Seq {
                    anchor,
                    items: Vec::new(),
                    size: 1,
                });
            }
            Event::MappingStart(_, anchor, _) => {
                return self.open(Frame::Map {
                    anchor,
                    entries: Vec::new(),
                    key: None,
                    size: 1,
                    line,
                    column,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(line, column)?,
            // Stream and document ends, and presentation-only events, carry no node.
            _ => return Ok(()),
        };
        if anchor != 0 {
            self.anchors.insert(anchor, (node.clone(), size));
        }
        match self.stack.last_mut() {
            Some(frame) => {
                if frame.push(node, size) {
                    return Err(KubeconfigError::MergeKey { line });
                }
            }
            None => self.root = Some(node),
        }
        Ok(())
    }

    /// Opens a sequence or mapping.
    fn open(&mut self, frame: Frame) -> Result<(), KubeconfigError> {
        self.charge(1)?;
        if self.stack.len() >= MAX_DEPTH {
            return Err(KubeconfigError::TooDeep { limit: MAX_DEPTH });
        }
        self.stack.push(frame);
        Ok(())
    }

    /// Closes the innermost collection: its anchor id, node and expanded size.
    fn close(
        &mut self,
        line: usize,
        column: usize,
    ) -> Result<(usize, Rc<Node>, usize), KubeconfigError> {
        match self.stack.pop() {
            Some(Frame::Seq {
                anchor,
                items,
                size,
            }) => Ok((anchor, Rc::new(Node::Seq(items)), size)),
            Some(Frame::Map {
                anchor,
                entries,
                size,
                line,
                column,
                ..
            }) => {
                let mut seen = std::collections::HashSet::with_capacity(entries.len());
                if entries
                    .iter()
                    .filter_map(|(k, _)| k.as_str())
                    .any(|k| !seen.insert(k))
                {
                    return Err(KubeconfigError::DuplicateKey { line, column });
                }
                Ok((anchor, Rc::new(Node::Map(entries)), size))
            }
            None => Err(KubeconfigError::Syntax { line, column }),
        }
    }
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

/// The connection settings of a kubeconfig's context, in the form a `provider` block takes them (certificates
/// and keys as PEM text, not base64). Holds credentials: `Debug` shows which fields are set, never a value.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Connection {
    /// `clusters[].cluster.server`.
    pub host: String,
    /// `certificate-authority-data`, decoded.
    pub cluster_ca_certificate: Option<String>,
    /// `users[].user.token`.
    pub token: Option<String>,
    /// `client-certificate-data`, decoded.
    pub client_certificate: Option<String>,
    /// `client-key-data`, decoded.
    pub client_key: Option<String>,
    /// `tls-server-name`.
    pub tls_server_name: Option<String>,
    /// `proxy-url`.
    pub proxy_url: Option<String>,
    /// `insecure-skip-tls-verify` (false when absent).
    pub insecure: bool,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("host", &"<redacted>")
            .field(
                "cluster_ca_certificate",
                &self.cluster_ca_certificate.is_some(),
            )
            .field("token", &self.token.is_some())
            .field("client_certificate", &self.client_certificate.is_some())
            .field("client_key", &self.client_key.is_some())
            .field("tls_server_name", &self.tls_server_name.is_some())
            .field("proxy_url", &self.proxy_url.is_some())
            .field("insecure", &self.insecure)
            .finish()
    }
}

/// Why the connection settings cannot be taken from an accepted kubeconfig. No variant holds any of the
/// document's content (context, cluster and user names included): places are named by entry index.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    /// The document is not an accepted kubeconfig.
    #[error(transparent)]
    Kubeconfig(#[from] KubeconfigError),
    /// No `current-context`, and not exactly one context (nor, without contexts, exactly one cluster).
    #[error(
        "the kubeconfig has no current-context and more than one context or cluster to choose from"
    )]
    NoCurrentContext,
    /// `current-context` names no entry of `contexts`.
    #[error("the kubeconfig's current-context names no entry of `contexts`")]
    MissingContext,
    /// The chosen context names no entry of `clusters`.
    #[error("`contexts[{index}].context.cluster` names no entry of `clusters`")]
    MissingCluster {
        /// Index of the context.
        index: usize,
    },
    /// The chosen context names no entry of `users`.
    #[error("`contexts[{index}].context.user` names no entry of `users`")]
    MissingUser {
        /// Index of the context.
        index: usize,
    },
    /// The chosen cluster has no server address.
    #[error("`{path}` is missing or empty")]
    NoServer {
        /// Where the server should be (`clusters[0].cluster.server`).
        path: String,
    },
    /// A `*-data` field is not valid base64.
    #[error("`{path}` is not valid base64")]
    BadBase64 {
        /// Where it is.
        path: String,
    },
    /// A `*-data` field does not decode to UTF-8 (PEM) text.
    #[error("`{path}` does not decode to UTF-8 (PEM) text")]
    NotText {
        /// Where it is.
        path: String,
    },
    /// A field that must be a scalar string or boolean is not.
    #[error("`{path}` is not a {expected}")]
    WrongType {
        /// Where it is.
        path: String,
        /// `string` or `boolean`.
        expected: &'static str,
    },
}

/// The connection settings of an accepted kubeconfig's context (see [`Connection`]): `current-context`; without
/// one, the only context; without contexts, the only cluster (and the only user, if any). The document is parsed
/// under the budget and checked for inertness under `policy` first, as [`inspect`] does. Pure; an `exec` user
/// that the policy allows yields no token or certificate (the caller still has the raw kubeconfig).
pub fn connection(bytes: &[u8], policy: &KubeconfigPolicy) -> Result<Connection, ConnectionError> {
    let root = parse(bytes)?;
    check(&root, policy)?;
    let entries = |key: &'static str| -> Vec<&Node> {
        root.fields(key)
            .flat_map(|l| l.items().iter().map(|n| &**n))
            .collect()
    };
    let clusters = entries("clusters");
    let users = entries("users");
    let contexts = entries("contexts");
    let current =
        text(&root, "current-context", &|| "current-context".into())?.filter(|c| !c.is_empty());
    // (cluster index, user index)
    let (ci, ui): (usize, Option<usize>) = match (current, contexts.len()) {
        (Some(name), _) => {
            let index = named(&contexts, &name).ok_or(ConnectionError::MissingContext)?;
            pick(&contexts, index, &clusters, &users)?
        }
        (None, 1) => pick(&contexts, 0, &clusters, &users)?,
        (None, 0) if clusters.len() == 1 && users.len() <= 1 => {
            (0, (users.len() == 1).then_some(0))
        }
        (None, _) => return Err(ConnectionError::NoCurrentContext),
    };
    let cluster = clusters[ci].fields("cluster").next();
    let user = ui.and_then(|i| users[i].fields("user").next().map(|u| (i, u)));
    let cpath = |f: &str| format!("clusters[{ci}].cluster.{f}");
    let mut c = Connection::default();
    if let Some(cl) = cluster {
        c.host = text(cl, "server", &|| cpath("server"))?.unwrap_or_default();
        c.cluster_ca_certificate = pem(
            text(cl, "certificate-authority-data", &|| {
                cpath("certificate-authority-data")
            })?,
            &|| cpath("certificate-authority-data"),
        )?;
        c.tls_server_name = text(cl, "tls-server-name", &|| cpath("tls-server-name"))?;
        c.proxy_url = text(cl, "proxy-url", &|| cpath("proxy-url"))?;
        c.insecure = match cl.fields("insecure-skip-tls-verify").next() {
            None => false,
            Some(Node::Scalar { text, .. }) => match text.as_str() {
                "true" | "True" | "TRUE" => true,
                "false" | "False" | "FALSE" => false,
                _ => {
                    return Err(ConnectionError::WrongType {
                        path: cpath("insecure-skip-tls-verify"),
                        expected: "boolean",
                    });
                }
            },
            Some(_) => {
                return Err(ConnectionError::WrongType {
                    path: cpath("insecure-skip-tls-verify"),
                    expected: "boolean",
                });
            }
        };
    }
    if c.host.is_empty() {
        return Err(ConnectionError::NoServer {
            path: cpath("server"),
        });
    }
    if let Some((i, u)) = user {
        let upath = |f: &str| format!("users[{i}].user.{f}");
        c.token = text(u, "token", &|| upath("token"))?.filter(|t| !t.is_empty());
        c.client_certificate = pem(
            text(u, "client-certificate-data", &|| {
                upath("client-certificate-data")
            })?,
            &|| upath("client-certificate-data"),
        )?;
        c.client_key = pem(
            text(u, "client-key-data", &|| upath("client-key-data"))?,
            &|| upath("client-key-data"),
        )?;
    }
    Ok(c)
}

/// A scalar field's text (`None` when absent or null).
fn text(n: &Node, key: &str, path: &dyn Fn() -> String) -> Result<Option<String>, ConnectionError> {
    match n.fields(key).next() {
        None => Ok(None),
        Some(Node::Scalar { text, .. }) => Ok(Some(text.clone())),
        Some(_) => Err(ConnectionError::WrongType {
            path: path(),
            expected: "string",
        }),
    }
}

/// The index of the entry named `wanted`.
fn named(list: &[&Node], wanted: &str) -> Option<usize> {
    list.iter().position(|e| {
        e.fields("name")
            .next()
            .and_then(Node::as_str)
            .is_some_and(|n| n == wanted)
    })
}

/// The cluster and user entries context `index` names.
fn pick(
    contexts: &[&Node],
    index: usize,
    clusters: &[&Node],
    users: &[&Node],
) -> Result<(usize, Option<usize>), ConnectionError> {
    let path = |f: &str| format!("contexts[{index}].context.{f}");
    let Some(ctx) = contexts[index].fields("context").next() else {
        return Err(ConnectionError::MissingCluster { index });
    };
    let cluster = text(ctx, "cluster", &|| path("cluster"))?.unwrap_or_default();
    let ci = named(clusters, &cluster).ok_or(ConnectionError::MissingCluster { index })?;
    let ui = match text(ctx, "user", &|| path("user"))?.filter(|u| !u.is_empty()) {
        None => None,
        Some(user) => Some(named(users, &user).ok_or(ConnectionError::MissingUser { index })?),
    };
    Ok((ci, ui))
}

/// Decodes a base64 `*-data` value into PEM text.
fn pem(
    value: Option<String>,
    path: &dyn Fn() -> String,
) -> Result<Option<String>, ConnectionError> {
    use base64::Engine;
    let Some(v) = value.filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let compact: String = v.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|_| ConnectionError::BadBase64 { path: path() })?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| ConnectionError::NotText { path: path() })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    const CANARY: &str = "canary-7f3a";

    fn yaml_with_user(user: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://10.0.0.1:6443\n    certificate-authority-data: Q0E=\nusers:\n- name: ok\n  user:\n    token: {CANARY}\n- name: u\n  user:\n{user}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n"
        )
    }

    fn refused(doc: &str, policy: KubeconfigPolicy) -> (String, RefusedField) {
        match inspect(doc.as_bytes(), &policy) {
            Err(KubeconfigError::Refused { path, field }) => {
                let msg = KubeconfigError::Refused {
                    path: path.clone(),
                    field,
                }
                .to_string();
                assert!(!msg.contains(CANARY), "{msg}");
                (path, field)
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn alias_bomb_is_rejected_in_milliseconds() {
        // 100,000-item list, then 150,000 aliases to it: about 800 KB, 15 billion nodes once expanded.
        let mut doc = String::from("a: &ab [");
        doc.push_str(&"0,".repeat(99_999));
        doc.push_str("0]\nb: [");
        doc.push_str(&"*ab,".repeat(149_999));
        doc.push_str("*ab]\n");
        assert!(
            doc.len() > 750_000 && doc.len() <= MAX_BYTES,
            "{}",
            doc.len()
        );
        let start = Instant::now();
        let err = inspect(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap_err();
        let took = start.elapsed();
        println!("alias bomb of {} bytes rejected in {took:?}", doc.len());
        assert_eq!(err, KubeconfigError::TooManyNodes { limit: MAX_NODES });
        // The parser is built without optimisation in test builds and runs ~30 times slower there; in release
        // builds this takes tens of milliseconds (serde_yaml 0.9 expanded 15 billion nodes and died).
        let bound = if cfg!(debug_assertions) {
            Duration::from_secs(5)
        } else {
            Duration::from_millis(250)
        };
        assert!(took < bound, "took {took:?}");
    }

    #[test]
    fn nested_aliases_are_charged_their_expansion() {
        // Each level doubles: 2^30 nodes from a few hundred bytes.
        let mut doc = String::from("l0: &l0 [x, x]\n");
        for i in 1..30 {
            doc.push_str(&format!("l{i}: &l{i} [*l{p}, *l{p}]\n", p = i - 1));
        }
        let err = inspect(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap_err();
        assert_eq!(err, KubeconfigError::TooManyNodes { limit: MAX_NODES });
    }

    #[test]
    fn deep_nesting_is_rejected() {
        for doc in [
            format!("clusters: {}{}", "[".repeat(10_000), "]".repeat(10_000)),
            format!("clusters: {}1{}", "{a: ".repeat(100), "}".repeat(100)),
            (0..100).fold(String::from("clusters:\n"), |mut s, i| {
                s.push_str(&" ".repeat(i + 1));
                s.push_str("- \n");
                s
            }),
        ] {
            let start = Instant::now();
            let err = inspect(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap_err();
            assert!(
                matches!(
                    err,
                    KubeconfigError::TooDeep { limit: MAX_DEPTH } | KubeconfigError::Syntax { .. }
                ),
                "{err:?}"
            );
            assert!(start.elapsed() < Duration::from_secs(1));
        }
        let flow = format!("clusters: {}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(
            inspect(flow.as_bytes(), &KubeconfigPolicy::default()).unwrap_err(),
            KubeconfigError::TooDeep { limit: MAX_DEPTH }
        );
        // Nesting just under the limit is fine as far as depth goes.
        let ok = format!(
            "clusters: [{{cluster: {}1{}}}]",
            "[".repeat(50),
            "]".repeat(50)
        );
        inspect(ok.as_bytes(), &KubeconfigPolicy::default()).unwrap();
    }

    #[test]
    fn more_than_a_mebibyte_is_rejected_before_parsing() {
        let mut doc = yaml_with_user("    token: x");
        doc.push('#');
        doc.push_str(&"x".repeat(MAX_BYTES));
        assert_eq!(
            inspect(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap_err(),
            KubeconfigError::TooLarge {
                size: doc.len(),
                limit: MAX_BYTES
            }
        );
    }

    #[test]
    fn each_refused_field_is_named_by_path() {
        let cases = [
            (
                "    exec:\n      command: /bin/sh\n      apiVersion: client.authentication.k8s.io/v1",
                "users[1].user.exec",
                RefusedField::Exec,
            ),
            (
                "    auth-provider:\n      name: gcp\n      config: {cmd-path: /bin/sh}",
                "users[1].user.auth-provider",
                RefusedField::AuthProvider,
            ),
            (
                "    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token",
                "users[1].user.tokenFile",
                RefusedField::TokenFile,
            ),
            (
                "    client-certificate: /etc/cert.pem\n    client-key-data: Q0E=",
                "users[1].user.client-certificate",
                RefusedField::ClientCertificate,
            ),
            (
                "    client-key: /etc/key.pem",
                "users[1].user.client-key",
                RefusedField::ClientKey,
            ),
            (
                "    TokenFile: /etc/token",
                "users[1].user.tokenFile",
                RefusedField::TokenFile,
            ),
            (
                "    EXEC: {command: sh}",
                "users[1].user.exec",
                RefusedField::Exec,
            ),
        ];
        for (user, path, field) in cases {
            assert_eq!(
                refused(&yaml_with_user(user), KubeconfigPolicy::default()),
                (path.to_string(), field),
                "{user}"
            );
        }
        let ca = "clusters:\n- name: c\n  cluster: {server: 'https://h', certificate-authority: /etc/ca.pem}\n";
        assert_eq!(
            refused(ca, KubeconfigPolicy::default()),
            (
                "clusters[0].cluster.certificate-authority".to_string(),
                RefusedField::CertificateAuthority
            )
        );
        // A refused field reached through an alias is still refused.
        let via_alias = "x: &u {exec: {command: sh}}\nclusters: [{cluster: {server: s}}]\nusers: [{name: a, user: *u}]\n";
        assert_eq!(
            refused(via_alias, KubeconfigPolicy::default()).1,
            RefusedField::Exec
        );
        // Empty or null values name no file and run nothing.
        inspect(
            yaml_with_user("    tokenFile: \"\"\n    exec: null").as_bytes(),
            &KubeconfigPolicy::default(),
        )
        .unwrap();
    }

    #[test]
    fn exec_users_are_accepted_when_the_policy_allows_them() {
        let doc = yaml_with_user(
            "    exec:\n      command: kubectl-oidc\n      apiVersion: client.authentication.k8s.io/v1",
        );
        let allow = KubeconfigPolicy { allow_exec: true };
        let facts = inspect(doc.as_bytes(), &allow).unwrap();
        assert_eq!(facts.exec_users, ["users[1].user.exec"]);
        // The policy allows exec only: a file path next to it is still refused.
        let doc = yaml_with_user("    exec: {command: x}\n    client-key: /k");
        assert_eq!(refused(&doc, allow).1, RefusedField::ClientKey);
    }

    #[test]
    fn valid_yaml_and_json_kubeconfigs_are_accepted() {
        let facts = inspect(
            yaml_with_user("    token: abc").as_bytes(),
            &KubeconfigPolicy::default(),
        )
        .unwrap();
        assert_eq!(facts.servers, ["https://10.0.0.1:6443"]);
        assert_eq!((facts.clusters, facts.users), (1, 2));
        let json = br#"{"apiVersion":"v1","kind":"Config","clusters":[{"name":"a","cluster":{"server":"https://a:443"}},{"name":"b","cluster":{"server":"https://b"}}],
            "users":[{"name":"u","user":{"client-certificate-data":"Q0E=","client-key-data":"Q0E="}}],"contexts":[],"current-context":"a"}"#;
        let facts = inspect(json, &KubeconfigPolicy::default()).unwrap();
        assert_eq!(facts.servers, ["https://a:443", "https://b"]);
        // Anchors and aliases within the budget are fine.
        let aliases = "clusters:\n- &c {name: a, cluster: {server: 'https://a'}}\n- *c\n";
        assert_eq!(
            inspect(aliases.as_bytes(), &KubeconfigPolicy::default())
                .unwrap()
                .clusters,
            2
        );
    }

    #[test]
    fn malformed_documents_are_refused_without_quoting_them() {
        type Expect = fn(&KubeconfigError) -> bool;
        let cases: [(&[u8], Expect); 9] = [
            (b"{{{ canary-7f3a", |e| matches!(e, KubeconfigError::Syntax { .. })),
            (b"token: canary-7f3a", |e| *e == KubeconfigError::NoClusters),
            (b"clusters: []", |e| *e == KubeconfigError::NoClusters),
            (b"- canary-7f3a", |e| *e == KubeconfigError::NotAMapping),
            (b"", |e| *e == KubeconfigError::NotAMapping),
            (b"\xff\xfecanary-7f3a", |e| *e == KubeconfigError::NotUtf8),
            (b"clusters: [{cluster: {server: a}}]\nusers: []\nusers: [{user: {exec: {command: canary-7f3a}}}]", |e| {
                matches!(e, KubeconfigError::DuplicateKey { line: 1, .. })
            }),
            (b"x: &x {exec: {command: canary-7f3a}}\nclusters: [{cluster: {server: a}}]\nusers: [{user: {<<: *x}}]", |e| {
                matches!(e, KubeconfigError::MergeKey { .. })
            }),
            (b"clusters: [{cluster: {server: a}}]\n---\nclusters: [{cluster: {server: canary-7f3a}}]\n", |e| {
                *e == KubeconfigError::MultipleDocuments
            }),
        ];
        for (doc, expected) in cases {
            let e = inspect(doc, &KubeconfigPolicy::default()).unwrap_err();
            assert!(expected(&e), "{:?}: {e:?}", String::from_utf8_lossy(doc));
            assert!(!e.to_string().contains(CANARY), "{e}");
            assert!(!format!("{e:?}").contains(CANARY), "{e:?}");
        }
    }

    #[test]
    fn debug_output_holds_no_content() {
        let doc = format!(
            "clusters: [{{cluster: {{server: 'https://user:{CANARY}@h'}}}}]\nusers: [{{user: {{token: {CANARY}}}}}]\n"
        );
        let facts = inspect(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap();
        assert!(!format!("{facts:?}").contains(CANARY));
        assert!(facts.servers[0].contains(CANARY));
        let tree = parse(doc.as_bytes()).unwrap();
        assert!(!format!("{tree:?}").contains(CANARY));
    }

    fn b64(s: &str) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn connection_follows_the_current_context() {
        let ca = "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n";
        let doc = format!(
            "clusters:\n- name: a\n  cluster: {{server: 'https://a:6443'}}\n- name: b\n  cluster:\n    server: https://b:6443\n    certificate-authority-data: {}\n    tls-server-name: b.internal\n    proxy-url: http://proxy:3128\n    insecure-skip-tls-verify: false\n\
             users:\n- name: ua\n  user: {{token: other}}\n- name: ub\n  user: {{token: {CANARY}}}\n\
             contexts:\n- name: ca\n  context: {{cluster: a, user: ua}}\n- name: cb\n  context: {{cluster: b, user: ub}}\ncurrent-context: cb\n",
            b64(ca)
        );
        let c = connection(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap();
        assert_eq!(c.host, "https://b:6443");
        assert_eq!(c.cluster_ca_certificate.as_deref(), Some(ca));
        assert_eq!(c.token.as_deref(), Some(CANARY));
        assert_eq!(c.tls_server_name.as_deref(), Some("b.internal"));
        assert_eq!(c.proxy_url.as_deref(), Some("http://proxy:3128"));
        assert!(!c.insecure);
        assert_eq!((c.client_certificate, c.client_key), (None, None));
        assert!(
            !format!(
                "{:?}",
                connection(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap()
            )
            .contains(CANARY)
        );
    }

    #[test]
    fn connection_decodes_client_certificates_and_falls_back_to_the_only_entries() {
        let doc = format!(
            "clusters:\n- name: only\n  cluster: {{server: 'https://x', insecure-skip-tls-verify: true}}\n\
             users:\n- name: u\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n",
            b64("CERT"),
            b64("KEY")
        );
        let c = connection(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap();
        assert_eq!(c.host, "https://x");
        assert!(c.insecure);
        assert_eq!(c.client_certificate.as_deref(), Some("CERT"));
        assert_eq!(c.client_key.as_deref(), Some("KEY"));
        assert_eq!(c.token, None);
        // One context and no current-context: that context.
        let one = "clusters: [{name: a, cluster: {server: 'https://a'}}]\ncontexts: [{name: x, context: {cluster: a}}]\n";
        let c = connection(one.as_bytes(), &KubeconfigPolicy::default()).unwrap();
        assert_eq!((c.host.as_str(), c.token), ("https://a", None));
    }

    #[test]
    fn connection_errors_name_places_never_content() {
        let two = format!(
            "clusters: [{{name: a, cluster: {{server: 'https://a'}}}}, {{name: b, cluster: {{server: 'https://b'}}}}]\n\
             contexts: [{{name: {CANARY}, context: {{cluster: a}}}}, {{name: y, context: {{cluster: b}}}}]\n"
        );
        let cases: Vec<(String, ConnectionError)> = vec![
            (two.clone(), ConnectionError::NoCurrentContext),
            (
                format!("{two}current-context: missing-{CANARY}\n"),
                ConnectionError::MissingContext,
            ),
            (
                format!(
                    "clusters: [{{name: a, cluster: {{server: 'https://a'}}}}]\ncontexts: [{{name: c, context: {{cluster: {CANARY}}}}}]\ncurrent-context: c\n"
                ),
                ConnectionError::MissingCluster { index: 0 },
            ),
            (
                format!(
                    "clusters: [{{name: a, cluster: {{server: 'https://a'}}}}]\ncontexts: [{{name: c, context: {{cluster: a, user: {CANARY}}}}}]\ncurrent-context: c\n"
                ),
                ConnectionError::MissingUser { index: 0 },
            ),
            (
                format!(
                    "clusters: [{{name: a, cluster: {{server: 'https://a', certificate-authority-data: '{CANARY}!'}}}}]\n"
                ),
                ConnectionError::BadBase64 {
                    path: "clusters[0].cluster.certificate-authority-data".into(),
                },
            ),
            (
                "clusters: [{name: a, cluster: {certificate-authority-data: Q0E=}}]\n".into(),
                ConnectionError::NoServer {
                    path: "clusters[0].cluster.server".into(),
                },
            ),
            (
                format!(
                    "clusters: [{{name: a, cluster: {{server: 'https://a', insecure-skip-tls-verify: {CANARY}}}}}]\n"
                ),
                ConnectionError::WrongType {
                    path: "clusters[0].cluster.insecure-skip-tls-verify".into(),
                    expected: "boolean",
                },
            ),
        ];
        for (doc, want) in cases {
            let e = connection(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap_err();
            assert_eq!(e, want, "{doc}");
            assert!(!e.to_string().contains(CANARY), "{e}");
        }
        // The inertness check comes first.
        let e = connection(
            yaml_with_user("    tokenFile: /etc/t").as_bytes(),
            &KubeconfigPolicy::default(),
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                ConnectionError::Kubeconfig(KubeconfigError::Refused { .. })
            ),
            "{e:?}"
        );
    }
}
