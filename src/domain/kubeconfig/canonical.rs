//! What the bridge writes for Sveltos (and `sveltos_cluster_credentials.kubeconfig`): a kubeconfig built from a
//! checked [`Connection`], never the bytes it came from.
//!
//! The document is JSON, which every kubeconfig reader parses (client-go reads kubeconfigs as YAML 1.1, of which
//! this JSON is a subset), with every character of the Basic Multilingual Plane outside printable ASCII as a `\uXXXX`
//! escape, so no reader can take a character of a value for a line break or a quote. One cluster, one user and one context,
//! all named [`NAME`], with only the fields [`Connection`] holds. Why not `serde_saphyr`'s YAML emitter: its
//! output is YAML 1.2, whose plain scalars a YAML 1.1 reader may resolve differently (`on`, `y`, `0x1`); JSON
//! strings have one meaning in both. The escaping pass is written here because `serde_json` leaves non-ASCII
//! characters as they are.

use base64::Engine as _;
use serde_json::{Map, Value as Json, json};

use super::{Connection, ConnectionError, ExecUser, KubeconfigPolicy, select};
use crate::api::KubeconfigCluster;

/// The name of the one cluster, user and context of a written kubeconfig.
pub const NAME: &str = "cluster";

impl Connection {
    /// The kubeconfig holding exactly these settings.
    pub fn to_kubeconfig(&self) -> Vec<u8> {
        let doc = json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": NAME, "cluster": self.cluster_entry()}],
            "users": [{"name": NAME, "user": self.user_entry()}],
            "contexts": [{"name": NAME, "context": {"cluster": NAME, "user": NAME}}],
            "current-context": NAME,
        });
        let mut out = ascii_only(&doc.to_string()).into_bytes();
        out.push(b'\n');
        out
    }

    /// The kubeconfig's `cluster`: the server, and the CA, TLS server name, proxy and `insecure` when set.
    fn cluster_entry(&self) -> Map<String, Json> {
        let mut cluster = Map::new();
        cluster.insert("server".into(), self.host.clone().into());
        if let Some(v) = &self.cluster_ca_certificate {
            cluster.insert("certificate-authority-data".into(), base64_data(v));
        }
        if let Some(v) = &self.tls_server_name {
            cluster.insert("tls-server-name".into(), v.clone().into());
        }
        if let Some(v) = &self.proxy_url {
            cluster.insert("proxy-url".into(), v.clone().into());
        }
        if self.insecure {
            cluster.insert("insecure-skip-tls-verify".into(), true.into());
        }
        cluster
    }

    /// The kubeconfig's `user`: whichever of token, basic auth, client certificate and key, and exec plugin is set.
    fn user_entry(&self) -> Map<String, Json> {
        let mut user = Map::new();
        let strings = [
            ("token", &self.token),
            ("username", &self.username),
            ("password", &self.password),
        ];
        for (k, v) in strings {
            if let Some(v) = v {
                user.insert(k.into(), v.clone().into());
            }
        }
        if let Some(v) = &self.client_certificate {
            user.insert("client-certificate-data".into(), base64_data(v));
        }
        if let Some(v) = &self.client_key {
            user.insert("client-key-data".into(), base64_data(v));
        }
        if let Some(e) = &self.exec {
            user.insert("exec".into(), exec_entry(e).into());
        }
        user
    }
}

/// A user's `exec`: the plugin's API version, command, arguments and environment, and its optional settings.
fn exec_entry(e: &ExecUser) -> Map<String, Json> {
    let mut exec = Map::new();
    if let Some(v) = &e.api_version {
        exec.insert("apiVersion".into(), v.clone().into());
    }
    exec.insert("command".into(), e.command.clone().into());
    if !e.args.is_empty() {
        exec.insert("args".into(), e.args.clone().into());
    }
    if !e.env.is_empty() {
        let env: Vec<Json> = e
            .env
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value}))
            .collect();
        exec.insert("env".into(), env.into());
    }
    if let Some(v) = &e.install_hint {
        exec.insert("installHint".into(), v.clone().into());
    }
    if let Some(v) = e.provide_cluster_info {
        exec.insert("provideClusterInfo".into(), v.into());
    }
    if let Some(v) = &e.interactive_mode {
        exec.insert("interactiveMode".into(), v.clone().into());
    }
    exec
}

/// What the bridge writes to reach an access provider's `cluster` entry (a ClusterProfile's) as `user`: the entry's
/// server, CA, TLS server name, proxy and `insecure-skip-tls-verify`, with the credential fields of `user` (token,
/// client certificate and key, basic auth, an allowed `exec`; its own cluster fields are not used). Written like
/// every kubeconfig the bridge writes and read back through the same checks, so a value no reader agrees on (a
/// control character in the server address, a CA that is not base64 PEM) is that cluster's error.
pub fn for_cluster(
    cluster: &KubeconfigCluster,
    user: &Connection,
    policy: &KubeconfigPolicy,
) -> Result<Vec<u8>, ConnectionError> {
    let c = Connection {
        host: cluster.server.clone(),
        cluster_ca_certificate: None,
        tls_server_name: cluster.tls_server_name.clone(),
        proxy_url: cluster.proxy_url.clone(),
        insecure: cluster.insecure_skip_tls_verify == Some(true),
        ..user.clone()
    };
    // The CA arrives base64-encoded; written through the Connection, it is decoded and checked by the read-back.
    let mut doc = c.to_kubeconfig();
    if let Some(ca) = &cluster.certificate_authority_data {
        let mut v: Json = serde_json::from_slice(&doc).expect("we wrote JSON");
        v["clusters"][0]["cluster"]["certificate-authority-data"] = ca.clone().into();
        doc = serde_json::to_vec(&v).expect("JSON serializes");
    }
    canonical(&doc, policy, None)
}

/// `s` base64-encoded, as a kubeconfig's `*-data` fields hold it.
fn base64_data(s: &str) -> Json {
    Json::from(base64::engine::general_purpose::STANDARD.encode(s))
}

/// The kubeconfig the bridge writes for `bytes` under `policy`: the chosen context's settings ([`select`]),
/// written by [`Connection::to_kubeconfig`].
pub fn canonical(
    bytes: &[u8],
    policy: &KubeconfigPolicy,
    context: Option<&str>,
) -> Result<Vec<u8>, ConnectionError> {
    select(bytes, policy, context).map(|c| c.to_kubeconfig())
}

/// `json` with every character of the Basic Multilingual Plane outside printable ASCII written as `\uXXXX`.
/// Characters above U+FFFF stay UTF-8: the surrogate-pair escape JSON would use for them is an error to YAML 1.1
/// readers, and no reader takes them for a break or a quote. `serde_json` escapes quotes, backslashes and C0
/// controls already, and leaves other characters as they are; outside strings its output is ASCII, so every
/// character replaced here is inside a string.
fn ascii_only(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if (' '..='~').contains(&c) || u32::from(c) > 0xffff {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        }
    }
    out
}
