//! The one context of an accepted kubeconfig that a reader would use, reduced to the fields the bridge understands
//! ([`Connection`]). Field names are matched exactly, as client-go decodes them; everything else in the document
//! (other contexts, impersonation, extensions, unknown fields) is dropped, so what is written from a `Connection`
//! (`super::canonical`) holds nothing the bridge did not check.

use std::fmt;

use super::{KubeconfigError, KubeconfigPolicy, Node, check, parse};

/// An `exec` user that the policy allowed (`credentials.allow_exec_kubeconfigs`), with the fields of client-go's
/// `ExecConfig` that a kubeconfig may set. `Debug` shows the command only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ExecUser {
    /// `apiVersion`.
    pub api_version: Option<String>,
    /// `command`.
    pub command: String,
    /// `args`.
    pub args: Vec<String>,
    /// `env`, as (name, value).
    pub env: Vec<(String, String)>,
    /// `installHint`.
    pub install_hint: Option<String>,
    /// `provideClusterInfo`.
    pub provide_cluster_info: Option<bool>,
    /// `interactiveMode`.
    pub interactive_mode: Option<String>,
}

impl fmt::Debug for ExecUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecUser")
            .field("args", &self.args.len())
            .field("env", &self.env.len())
            .finish_non_exhaustive()
    }
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
    /// `username` (basic authentication).
    pub username: Option<String>,
    /// `password` (basic authentication).
    pub password: Option<String>,
    /// `exec`, when the policy allows it.
    pub exec: Option<ExecUser>,
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
            .field("username", &self.username.is_some())
            .field("password", &self.password.is_some())
            .field("exec", &self.exec)
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
    /// The context asked for (the access provider's `context`) is not in `contexts`.
    #[error("the kubeconfig has no context of the name the access provider's `context` gives")]
    NoSuchContext,
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
        /// `string`, `boolean` or `list of strings`.
        expected: &'static str,
    },
    /// A value holds a control character, a line separator, a byte-order mark or a non-character: no reader
    /// agrees on those, and no server address, token or certificate needs one.
    #[error("`{path}` holds a control character or a Unicode line separator")]
    ControlCharacter {
        /// Where it is.
        path: String,
    },
}

/// The connection settings of an accepted kubeconfig's context (see [`Connection`]): `current-context`; without
/// one, the only context; without contexts, the only cluster (and the only user, if any). The document is parsed
/// under the budget and checked for inertness under `policy` first, as `super::inspect` does. Pure.
pub fn connection(bytes: &[u8], policy: &KubeconfigPolicy) -> Result<Connection, ConnectionError> {
    select(bytes, policy, None)
}

/// [`connection`] of the context named `context` instead of the current one (the `context` member of a
/// `kubeconfig-secretreader` access provider).
pub fn select(
    bytes: &[u8],
    policy: &KubeconfigPolicy,
    context: Option<&str>,
) -> Result<Connection, ConnectionError> {
    let root = parse(bytes)?;
    check(&root, policy)?;
    let entries = |key: &'static str| -> Vec<&Node> {
        root.field(key)
            .map(|l| l.items().iter().map(|n| &**n).collect())
            .unwrap_or_default()
    };
    let clusters = entries("clusters");
    let users = entries("users");
    let contexts = entries("contexts");
    // (cluster index, user index)
    let (ci, ui): (usize, Option<usize>) = if let Some(wanted) = context {
        let index = named(&contexts, wanted).ok_or(ConnectionError::NoSuchContext)?;
        pick(&contexts, index, &clusters, &users)?
    } else {
        let current =
            text(&root, "current-context", &|| "current-context".into())?.filter(|c| !c.is_empty());
        match (current, contexts.len()) {
            (Some(name), _) => {
                let index = named(&contexts, &name).ok_or(ConnectionError::MissingContext)?;
                pick(&contexts, index, &clusters, &users)?
            }
            (None, 1) => pick(&contexts, 0, &clusters, &users)?,
            (None, 0) if clusters.len() == 1 && users.len() <= 1 => {
                (0, (users.len() == 1).then_some(0))
            }
            (None, _) => return Err(ConnectionError::NoCurrentContext),
        }
    };
    let mut c = Connection::default();
    if let Some(cl) = clusters[ci].field("cluster") {
        read_cluster(cl, ci, &mut c)?;
    }
    if c.host.is_empty() {
        return Err(ConnectionError::NoServer {
            path: format!("clusters[{ci}].cluster.server"),
        });
    }
    if let Some(i) = ui
        && let Some(u) = users[i].field("user")
    {
        read_user(u, i, policy, &mut c)?;
    }
    Ok(c)
}

fn read_cluster(cl: &Node, ci: usize, c: &mut Connection) -> Result<(), ConnectionError> {
    let cpath = |f: &str| format!("clusters[{ci}].cluster.{f}");
    c.host = text(cl, "server", &|| cpath("server"))?.unwrap_or_default();
    c.cluster_ca_certificate = pem(
        scalar(cl, "certificate-authority-data", &|| {
            cpath("certificate-authority-data")
        })?,
        &|| cpath("certificate-authority-data"),
    )?;
    c.tls_server_name = text(cl, "tls-server-name", &|| cpath("tls-server-name"))?;
    c.proxy_url = text(cl, "proxy-url", &|| cpath("proxy-url"))?;
    c.insecure = boolean(cl, "insecure-skip-tls-verify", &|| {
        cpath("insecure-skip-tls-verify")
    })?
    .unwrap_or(false);
    Ok(())
}

fn read_user(
    u: &Node,
    i: usize,
    policy: &KubeconfigPolicy,
    c: &mut Connection,
) -> Result<(), ConnectionError> {
    let upath = |f: &str| format!("users[{i}].user.{f}");
    c.token = text(u, "token", &|| upath("token"))?.filter(|t| !t.is_empty());
    c.client_certificate = pem(
        scalar(u, "client-certificate-data", &|| {
            upath("client-certificate-data")
        })?,
        &|| upath("client-certificate-data"),
    )?;
    c.client_key = pem(
        scalar(u, "client-key-data", &|| upath("client-key-data"))?,
        &|| upath("client-key-data"),
    )?;
    c.username = text(u, "username", &|| upath("username"))?.filter(|t| !t.is_empty());
    c.password = text(u, "password", &|| upath("password"))?.filter(|t| !t.is_empty());
    if policy.allow_exec
        && let Some(e) = u.field("exec")
    {
        c.exec = Some(read_exec(e, &|f: &str| upath(&format!("exec.{f}")))?);
    }
    Ok(())
}

fn read_exec(e: &Node, path: &dyn Fn(&str) -> String) -> Result<ExecUser, ConnectionError> {
    let strings = |key: &str| -> Result<Vec<String>, ConnectionError> {
        let Some(list) = e.field(key) else {
            return Ok(Vec::new());
        };
        let Node::Seq(items) = list else {
            return Err(ConnectionError::WrongType {
                path: path(key),
                expected: "list of strings",
            });
        };
        items
            .iter()
            .enumerate()
            .map(|(n, item)| {
                let p = || path(&format!("{key}[{n}]"));
                item.as_str()
                    .map(str::to_string)
                    .ok_or(ConnectionError::WrongType {
                        path: p(),
                        expected: "string",
                    })
            })
            .collect()
    };
    let mut env = Vec::new();
    if let Some(list) = e.field("env") {
        for (n, item) in list.items().iter().enumerate() {
            let p = |f: &str| path(&format!("env[{n}].{f}"));
            let name = text(item, "name", &|| p("name"))?.unwrap_or_default();
            let value = text(item, "value", &|| p("value"))?.unwrap_or_default();
            env.push((name, value));
        }
    }
    Ok(ExecUser {
        api_version: text(e, "apiVersion", &|| path("apiVersion"))?,
        command: text(e, "command", &|| path("command"))?.unwrap_or_default(),
        args: strings("args")?,
        env,
        install_hint: text(e, "installHint", &|| path("installHint"))?,
        provide_cluster_info: boolean(e, "provideClusterInfo", &|| path("provideClusterInfo"))?,
        interactive_mode: text(e, "interactiveMode", &|| path("interactiveMode"))?,
    })
}

/// A scalar field's text (`None` when absent or null); refused when it holds a character no reader agrees on.
fn text(n: &Node, key: &str, path: &dyn Fn() -> String) -> Result<Option<String>, ConnectionError> {
    let value = scalar(n, key, path)?;
    if value.as_deref().is_some_and(|t| t.chars().any(unwritable)) {
        return Err(ConnectionError::ControlCharacter { path: path() });
    }
    Ok(value)
}

/// A scalar field's text as written (`None` when absent or null).
fn scalar(
    n: &Node,
    key: &str,
    path: &dyn Fn() -> String,
) -> Result<Option<String>, ConnectionError> {
    match n.field(key) {
        None => Ok(None),
        Some(Node::Scalar { text, .. }) => Ok(Some(text.clone())),
        Some(_) => Err(ConnectionError::WrongType {
            path: path(),
            expected: "string",
        }),
    }
}

/// A boolean field (`None` when absent or null).
fn boolean(
    n: &Node,
    key: &str,
    path: &dyn Fn() -> String,
) -> Result<Option<bool>, ConnectionError> {
    match n.field(key) {
        None => Ok(None),
        Some(Node::Scalar { text, .. }) => match text.as_str() {
            "true" | "True" | "TRUE" => Ok(Some(true)),
            "false" | "False" | "FALSE" => Ok(Some(false)),
            _ => Err(ConnectionError::WrongType {
                path: path(),
                expected: "boolean",
            }),
        },
        Some(_) => Err(ConnectionError::WrongType {
            path: path(),
            expected: "boolean",
        }),
    }
}

/// Characters refused in any value: C0 and C1 controls (tab included), DEL, line separators, the byte-order mark
/// and non-characters.
pub(crate) fn unwritable(c: char) -> bool {
    let u = c as u32;
    u < 0x20
        || (0x7f..=0x9f).contains(&u)
        || matches!(u, 0x2028 | 0x2029 | 0xfeff)
        || (0xfdd0..=0xfdef).contains(&u)
        || (u & 0xfffe) == 0xfffe
}

/// The index of the entry named `wanted`.
fn named(list: &[&Node], wanted: &str) -> Option<usize> {
    list.iter().position(|e| {
        e.field("name")
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
    let Some(ctx) = contexts[index].field("context") else {
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
    let text = String::from_utf8(bytes).map_err(|_| ConnectionError::NotText { path: path() })?;
    if text
        .chars()
        .any(|c| c != '\n' && c != '\r' && unwritable(c))
    {
        return Err(ConnectionError::ControlCharacter { path: path() });
    }
    Ok(Some(text))
}
