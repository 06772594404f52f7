//! The connection settings ([`KubeSettings`]) and their `KUBE_*` environment-variable fallbacks.

use std::collections::BTreeMap;
use std::fmt;

/// Environment variable for `config_path`.
pub const ENV_CONFIG_PATH: &str = "KUBE_CONFIG_PATH";
/// Environment variable for `config_paths` (OS path-list separated).
pub const ENV_CONFIG_PATHS: &str = "KUBE_CONFIG_PATHS";
/// Environment variable for `config_context`.
pub const ENV_CTX: &str = "KUBE_CTX";
/// Environment variable for `config_context_auth_info`.
pub const ENV_CTX_AUTH_INFO: &str = "KUBE_CTX_AUTH_INFO";
/// Environment variable for `config_context_cluster`.
pub const ENV_CTX_CLUSTER: &str = "KUBE_CTX_CLUSTER";
/// Environment variable for `host`.
pub const ENV_HOST: &str = "KUBE_HOST";
/// Environment variable for `token`.
pub const ENV_TOKEN: &str = "KUBE_TOKEN";
/// Environment variable for `cluster_ca_certificate`.
pub const ENV_CLUSTER_CA_CERT_DATA: &str = "KUBE_CLUSTER_CA_CERT_DATA";
/// Environment variable for `client_certificate`.
pub const ENV_CLIENT_CERT_DATA: &str = "KUBE_CLIENT_CERT_DATA";
/// Environment variable for `client_key`.
pub const ENV_CLIENT_KEY_DATA: &str = "KUBE_CLIENT_KEY_DATA";
/// Environment variable for `insecure`.
pub const ENV_INSECURE: &str = "KUBE_INSECURE";
/// Environment variable for `tls_server_name`.
pub const ENV_TLS_SERVER_NAME: &str = "KUBE_TLS_SERVER_NAME";
/// Environment variable for `proxy_url`.
pub const ENV_PROXY_URL: &str = "KUBE_PROXY_URL";
/// Standard kubeconfig search list, used only when nothing else selects a cluster.
pub const ENV_KUBECONFIG: &str = "KUBECONFIG";

/// The `exec {}` block: an exec-based credential plugin.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecSettings {
    /// `exec.api_version`, e.g. `client.authentication.k8s.io/v1beta1` (required).
    pub api_version: String,
    /// `exec.command` (required).
    pub command: String,
    /// `exec.args`.
    pub args: Vec<String>,
    /// `exec.env`, added to the plugin's environment.
    pub env: BTreeMap<String, String>,
}

/// The connection attributes of the provider block. `None`/empty means unset.
#[derive(Clone, Default, PartialEq)]
pub struct KubeSettings {
    /// `config_path`: one kubeconfig file.
    pub config_path: Option<String>,
    /// `config_paths`: kubeconfig files merged first-wins.
    pub config_paths: Vec<String>,
    /// `config_context`: the kubeconfig context.
    pub config_context: Option<String>,
    /// `config_context_auth_info`: the kubeconfig user.
    pub config_context_auth_info: Option<String>,
    /// `config_context_cluster`: the kubeconfig cluster.
    pub config_context_cluster: Option<String>,
    /// `host`: the API server URL.
    pub host: Option<String>,
    /// Sensitive: redacted by `Debug`.
    pub token: Option<String>,
    /// PEM.
    pub cluster_ca_certificate: Option<String>,
    /// PEM.
    pub client_certificate: Option<String>,
    /// PEM. Sensitive: redacted by `Debug`.
    pub client_key: Option<String>,
    /// `insecure`: skip TLS verification.
    pub insecure: Option<bool>,
    /// `tls_server_name`: the name to verify the server certificate against.
    pub tls_server_name: Option<String>,
    /// `proxy_url`: an http(s) proxy (a kubeconfig `proxy-url` wins).
    pub proxy_url: Option<String>,
    /// The `exec` block.
    pub exec: Option<ExecSettings>,
}

pub(crate) const REDACTED: &str = "<redacted>";

pub(crate) fn redacted(value: &Option<String>) -> Option<&'static str> {
    value.as_ref().map(|_| REDACTED)
}

/// `Debug` for an exec block inside [`KubeSettings`]: env values hidden, as
/// plugins are commonly given credentials through their environment.
pub(crate) struct RedactedExec<'a>(&'a ExecSettings);

impl fmt::Debug for RedactedExec<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env: BTreeMap<&str, &str> = self.0.env.keys().map(|k| (k.as_str(), REDACTED)).collect();
        f.debug_struct("ExecSettings")
            .field("api_version", &self.0.api_version)
            .field("command", &self.0.command)
            .field("args", &self.0.args)
            .field("env", &env)
            .finish()
    }
}

impl fmt::Debug for KubeSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeSettings")
            .field("config_path", &self.config_path)
            .field("config_paths", &self.config_paths)
            .field("config_context", &self.config_context)
            .field("config_context_auth_info", &self.config_context_auth_info)
            .field("config_context_cluster", &self.config_context_cluster)
            .field("host", &self.host)
            .field("token", &redacted(&self.token))
            .field("cluster_ca_certificate", &self.cluster_ca_certificate)
            .field("client_certificate", &self.client_certificate)
            .field("client_key", &redacted(&self.client_key))
            .field("insecure", &self.insecure)
            .field("tls_server_name", &self.tls_server_name)
            .field("proxy_url", &self.proxy_url)
            .field("exec", &self.exec.as_ref().map(RedactedExec))
            .finish()
    }
}

pub(crate) fn is_unset(value: &Option<String>) -> bool {
    value.as_deref().is_none_or(str::is_empty)
}

pub(crate) fn fill(slot: &mut Option<String>, value: Option<String>) {
    if is_unset(slot)
        && let Some(value) = value
    {
        *slot = Some(value);
    }
}

/// `strconv.ParseBool`, which Terraform's SDK applies to `KUBE_INSECURE`.
pub(crate) fn parse_go_bool(raw: &str) -> Option<bool> {
    match raw.trim() {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// Splits an OS path list (`:` on Unix, `;` on Windows), dropping empty entries.
pub(crate) fn split_path_list(list: &str) -> Vec<String> {
    std::env::split_paths(list)
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| !p.is_empty())
        .collect()
}

impl KubeSettings {
    /// Fills every unset (or empty) attribute from its `KUBE_*` environment
    /// variable; empty variables count as unset. `KUBE_CONFIG_PATH` and
    /// `KUBE_CONFIG_PATHS` are only consulted when neither `config_path` nor
    /// `config_paths` is set, `KUBE_CONFIG_PATH` first. An unparsable
    /// `KUBE_INSECURE` is left out here and reported by [`resolve`].
    pub fn with_env(mut self, env: &dyn Fn(&str) -> Option<String>) -> KubeSettings {
        let get = |name: &str| env(name).filter(|v| !v.is_empty());
        if is_unset(&self.config_path) && self.config_paths.iter().all(String::is_empty) {
            if let Some(path) = get(ENV_CONFIG_PATH) {
                self.config_path = Some(path);
            } else if let Some(list) = get(ENV_CONFIG_PATHS) {
                self.config_paths = split_path_list(&list);
            }
        }
        fill(&mut self.config_context, get(ENV_CTX));
        fill(&mut self.config_context_auth_info, get(ENV_CTX_AUTH_INFO));
        fill(&mut self.config_context_cluster, get(ENV_CTX_CLUSTER));
        fill(&mut self.host, get(ENV_HOST));
        fill(&mut self.token, get(ENV_TOKEN));
        fill(
            &mut self.cluster_ca_certificate,
            get(ENV_CLUSTER_CA_CERT_DATA),
        );
        fill(&mut self.client_certificate, get(ENV_CLIENT_CERT_DATA));
        fill(&mut self.client_key, get(ENV_CLIENT_KEY_DATA));
        fill(&mut self.tls_server_name, get(ENV_TLS_SERVER_NAME));
        fill(&mut self.proxy_url, get(ENV_PROXY_URL));
        if self.insecure.is_none() {
            self.insecure = get(ENV_INSECURE).and_then(|v| parse_go_bool(&v));
        }
        self
    }

    /// Empty strings and empty list entries mean "unset", as in the SDK's `GetOk`.
    pub(crate) fn normalized(mut self) -> KubeSettings {
        for field in [
            &mut self.config_path,
            &mut self.config_context,
            &mut self.config_context_auth_info,
            &mut self.config_context_cluster,
            &mut self.host,
            &mut self.token,
            &mut self.cluster_ca_certificate,
            &mut self.client_certificate,
            &mut self.client_key,
            &mut self.tls_server_name,
            &mut self.proxy_url,
        ] {
            if field.as_deref().is_some_and(|v| v.trim().is_empty()) {
                *field = None;
            }
        }
        self.config_paths.retain(|p| !p.is_empty());
        self
    }
}
