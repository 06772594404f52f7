//! Kubernetes connection settings of the provider block.
//!
//! The attribute names, their environment-variable fallbacks and the way they
//! combine follow the `hashicorp/kubernetes` provider (v2.x,
//! `kubernetes/provider.go`, `initializeConfiguration`, and its `docs/index.md`),
//! so a user can copy their `provider "kubernetes"` block:
//!
//! * Every attribute falls back to its `KUBE_*` environment variable when it is
//!   unset or empty; an explicitly set attribute always wins over the variable.
//! * Kubeconfig files: `config_path` (or `KUBE_CONFIG_PATH`), else
//!   `config_paths` (or `KUBE_CONFIG_PATHS`, split with the OS path-list
//!   separator). Setting both attributes is an error. A leading `~` is expanded.
//!   A single file must exist; in a list, missing files are skipped (as kubectl
//!   does) but at least one must exist. Files are merged first-wins.
//! * `config_context`, `config_context_cluster` and `config_context_auth_info`
//!   pick the context, cluster and user in the loaded kubeconfig (a name that is
//!   set but absent is an error). Without kubeconfig files they are ignored.
//! * The explicit attributes are applied on top of the selected kubeconfig
//!   entries (client-go override rules): `host` replaces the server, `token`
//!   replaces the user's credentials, `client_certificate`/`client_key` replace
//!   the user's certificate, `insecure = true` or `cluster_ca_certificate` replace
//!   the cluster's CA/verification settings, `exec` replaces the user's
//!   credentials with the plugin. `proxy_url` is only a default: a `proxy-url` in
//!   the kubeconfig cluster wins (hashicorp puts it in client-go's
//!   `ClusterDefaults`).
//! * `host` without a scheme gets `https://` when a CA or client certificate is
//!   given (and `insecure` is not true), else `http://` (client-go's
//!   `DefaultServerURL`, which the hashicorp provider calls).
//! * With neither kubeconfig files nor `host`: the `KUBECONFIG` environment
//!   variable is used if set (NOTE: an addition requested for this provider; the
//!   hashicorp provider ignores `KUBECONFIG`), then the in-cluster service
//!   account (`KUBERNETES_SERVICE_HOST`/`KUBERNETES_SERVICE_PORT` and
//!   `/var/run/secrets/kubernetes.io/serviceaccount/token`). `~/.kube/config` is
//!   never read implicitly (the hashicorp provider does not read it either), and
//!   there is never a fallback to localhost: [`ConfigError::NothingConfigured`].
//!
//! Deliberate small deviations, all in the direction of "explicit wins":
//! `config_paths` set in the block beats `KUBE_CONFIG_PATH` (hashicorp lets the
//! variable win); an explicit `insecure = false` forces verification even when
//! the kubeconfig cluster says `insecure-skip-tls-verify: true` (hashicorp treats
//! `false` as unset); explicit `token`/`exec` also drop a kubeconfig user's
//! `auth-provider`/basic credentials so they cannot shadow them; exec plugins
//! run non-interactively (Terraform owns the terminal); without kubeconfig
//! files, the in-cluster config also honours the TLS/credential attributes.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use kube::config::{
    AuthInfo, Cluster, Config, Context, ExecConfig, ExecInteractiveMode, Kubeconfig,
    KubeconfigError, NamedAuthInfo, NamedCluster, NamedContext,
};

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

const ENV_SERVICE_HOST: &str = "KUBERNETES_SERVICE_HOST";
const ENV_SERVICE_PORT: &str = "KUBERNETES_SERVICE_PORT";
const IN_CLUSTER_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// Name of the single cluster/user/context of the kubeconfig handed to kube.
const MERGED_NAME: &str = "terraform-provider-sveltos";

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
    pub config_path: Option<String>,
    pub config_paths: Vec<String>,
    pub config_context: Option<String>,
    pub config_context_auth_info: Option<String>,
    pub config_context_cluster: Option<String>,
    pub host: Option<String>,
    /// Sensitive: redacted by `Debug`.
    pub token: Option<String>,
    /// PEM.
    pub cluster_ca_certificate: Option<String>,
    /// PEM.
    pub client_certificate: Option<String>,
    /// PEM. Sensitive: redacted by `Debug`.
    pub client_key: Option<String>,
    pub insecure: Option<bool>,
    pub tls_server_name: Option<String>,
    pub proxy_url: Option<String>,
    pub exec: Option<ExecSettings>,
}

const REDACTED: &str = "<redacted>";

fn redacted(value: &Option<String>) -> Option<&'static str> {
    value.as_ref().map(|_| REDACTED)
}

/// `Debug` for an exec block inside [`KubeSettings`]: env values hidden, as
/// plugins are commonly given credentials through their environment.
struct RedactedExec<'a>(&'a ExecSettings);

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

fn is_unset(value: &Option<String>) -> bool {
    value.as_deref().is_none_or(str::is_empty)
}

fn fill(slot: &mut Option<String>, value: Option<String>) {
    if is_unset(slot)
        && let Some(value) = value
    {
        *slot = Some(value);
    }
}

/// `strconv.ParseBool`, which Terraform's SDK applies to `KUBE_INSECURE`.
fn parse_go_bool(raw: &str) -> Option<bool> {
    match raw.trim() {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// Splits an OS path list (`:` on Unix, `;` on Windows), dropping empty entries.
fn split_path_list(list: &str) -> Vec<String> {
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
    fn normalized(mut self) -> KubeSettings {
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

/// Where a list of kubeconfig files came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathSource {
    /// `config_path` / `KUBE_CONFIG_PATH`.
    ConfigPath,
    /// `config_paths` / `KUBE_CONFIG_PATHS`.
    ConfigPaths,
    /// The `KUBECONFIG` environment variable.
    KubeconfigEnv,
}

impl PathSource {
    fn attribute(self) -> Option<&'static str> {
        match self {
            PathSource::ConfigPath => Some("config_path"),
            PathSource::ConfigPaths => Some("config_paths"),
            PathSource::KubeconfigEnv => None,
        }
    }
}

impl fmt::Display for PathSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PathSource::ConfigPath => "`config_path` (or KUBE_CONFIG_PATH)",
            PathSource::ConfigPaths => "`config_paths` (or KUBE_CONFIG_PATHS)",
            PathSource::KubeconfigEnv => "the KUBECONFIG environment variable",
        })
    }
}

/// Why the connection settings cannot produce a [`kube::Config`]. Messages
/// name the attribute (and environment variable) concerned and never contain
/// token or key material.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error(
        "`config_path` and `config_paths` are both set; set only one of them (a single file in `config_path`, or a list in `config_paths`)"
    )]
    ConflictingConfigPaths,

    #[error("cannot expand `~` in {origin} entry {path:?}: {reason}")]
    PathExpansion {
        origin: PathSource,
        path: String,
        reason: String,
    },

    #[error(
        "kubeconfig file {path:?} from {origin} does not exist; fix the path or remove the setting"
    )]
    KubeconfigNotFound { origin: PathSource, path: String },

    #[error("none of the kubeconfig files listed in {origin} exist ({}); fix the paths", .paths.join(", "))]
    NoKubeconfigFound {
        origin: PathSource,
        paths: Vec<String>,
    },

    #[error("cannot read kubeconfig file {path:?} from {origin}: {reason}")]
    KubeconfigUnreadable {
        origin: PathSource,
        path: String,
        reason: String,
    },

    #[error("cannot merge the kubeconfig files from {origin}: {reason}")]
    KubeconfigMerge { origin: PathSource, reason: String },

    #[error(
        "the kubeconfig from {origin} ({}) has no `current-context`; set `config_context` (or KUBE_CTX) to one of its contexts, or set `host`", .files.join(", ")
    )]
    NoCurrentContext {
        origin: PathSource,
        files: Vec<String>,
    },

    #[error(
        "context {context:?} ({}) is not defined in the kubeconfig ({}); available contexts: [{}]; set `config_context` (or KUBE_CTX) to one of them",
        if *.explicit { "from `config_context`/KUBE_CTX" } else { "the kubeconfig's current-context" },
        .files.join(", "),
        .available.join(", ")
    )]
    ContextNotFound {
        context: String,
        explicit: bool,
        available: Vec<String>,
        files: Vec<String>,
    },

    #[error(
        "cluster {cluster:?} ({}) is not defined in the kubeconfig ({}); available clusters: [{}]; {}",
        if *.explicit { "from `config_context_cluster`/KUBE_CTX_CLUSTER" } else { "referenced by the selected context" },
        .files.join(", "),
        .available.join(", "),
        if *.explicit { "set `config_context_cluster` to one of them" } else { "fix the kubeconfig, or set `config_context_cluster` or `host`" }
    )]
    ClusterNotFound {
        cluster: String,
        explicit: bool,
        available: Vec<String>,
        files: Vec<String>,
    },

    #[error(
        "user {user:?} from `config_context_auth_info` (or KUBE_CTX_AUTH_INFO) is not defined in the kubeconfig ({}); available users: [{}]",
        .files.join(", "),
        .available.join(", ")
    )]
    AuthInfoNotFound {
        user: String,
        available: Vec<String>,
        files: Vec<String>,
    },

    #[error("{origin} does not name an API server; set `host` (or KUBE_HOST)")]
    MissingServer { origin: String },

    #[error(
        "`host` (or KUBE_HOST) is not set, and there is no kubeconfig (`config_path`/`config_paths`, KUBE_CONFIG_PATH(S), KUBECONFIG) nor an in-cluster service account to take it from; set `host` to the API server URL"
    )]
    MissingHost,

    #[error(
        "no Kubernetes connection is configured. Set one of: `config_path` (or KUBE_CONFIG_PATH) / `config_paths` (or KUBE_CONFIG_PATHS) to kubeconfig files; `host` (or KUBE_HOST) with `cluster_ca_certificate` and credentials (`token`, `client_certificate` + `client_key`, or an `exec` block); the KUBECONFIG environment variable; or run inside a Kubernetes pod with a service account. ~/.kube/config is not read implicitly, and there is no localhost default"
    )]
    NothingConfigured,

    #[error(
        "invalid `host` (or KUBE_HOST) {value:?}: {reason}; expected a URL such as https://api.example.com:6443"
    )]
    InvalidHost { value: String, reason: String },

    #[error("invalid `proxy_url` (or KUBE_PROXY_URL) {value:?}: {reason}")]
    InvalidProxyUrl { value: String, reason: String },

    #[error("invalid boolean {value:?} in {env_var} (for `{attribute}`); use true or false")]
    InvalidBool {
        attribute: &'static str,
        env_var: &'static str,
        value: String,
    },

    #[error("invalid `{attribute}` (or {env_var}): {reason}")]
    InvalidPem {
        attribute: &'static str,
        env_var: &'static str,
        reason: String,
    },

    #[error("invalid `token` (or KUBE_TOKEN): {reason}")]
    InvalidToken { reason: String },

    #[error(
        "`insecure` = true cannot be combined with `cluster_ca_certificate`; remove one of them (or KUBE_INSECURE / KUBE_CLUSTER_CA_CERT_DATA)"
    )]
    InsecureWithCa,

    #[error(
        "a client certificate is configured ({origin}) but no client key; set `client_key` (or KUBE_CLIENT_KEY_DATA) too"
    )]
    ClientKeyMissing { origin: String },

    #[error(
        "a client key is configured ({origin}) but no client certificate; set `client_certificate` (or KUBE_CLIENT_CERT_DATA) too"
    )]
    ClientCertificateMissing { origin: String },

    #[error("`{field}` is required in the `exec` block and must not be empty")]
    ExecMissingField { field: &'static str },

    #[error("in-cluster configuration (service account) could not be loaded: {reason}")]
    InCluster { reason: String },

    #[error("invalid Kubernetes configuration from {origin}: {reason}")]
    Kube { origin: String, reason: String },
}

/// The attribute an error concerns, for a diagnostic's attribute path.
/// Attributes of the exec block are dotted (`exec.command`); `None` when the
/// error is about the environment or the configuration as a whole.
pub fn attribute_of(err: &ConfigError) -> Option<&'static str> {
    match err {
        ConfigError::ConflictingConfigPaths => Some("config_paths"),
        ConfigError::PathExpansion { origin, .. }
        | ConfigError::KubeconfigNotFound { origin, .. }
        | ConfigError::NoKubeconfigFound { origin, .. }
        | ConfigError::KubeconfigUnreadable { origin, .. }
        | ConfigError::KubeconfigMerge { origin, .. } => origin.attribute(),
        ConfigError::NoCurrentContext { .. } | ConfigError::ContextNotFound { .. } => {
            Some("config_context")
        }
        ConfigError::ClusterNotFound { explicit, .. } => {
            explicit.then_some("config_context_cluster")
        }
        ConfigError::AuthInfoNotFound { .. } => Some("config_context_auth_info"),
        ConfigError::MissingServer { .. }
        | ConfigError::MissingHost
        | ConfigError::InvalidHost { .. } => Some("host"),
        ConfigError::NothingConfigured
        | ConfigError::InCluster { .. }
        | ConfigError::Kube { .. } => None,
        ConfigError::InvalidProxyUrl { .. } => Some("proxy_url"),
        ConfigError::InvalidBool { attribute, .. } | ConfigError::InvalidPem { attribute, .. } => {
            Some(attribute)
        }
        ConfigError::InvalidToken { .. } => Some("token"),
        ConfigError::InsecureWithCa => Some("insecure"),
        ConfigError::ClientKeyMissing { .. } => Some("client_key"),
        ConfigError::ClientCertificateMissing { .. } => Some("client_certificate"),
        ConfigError::ExecMissingField { field } => Some(field),
    }
}

/// Turns the provider's connection settings into a [`kube::Config`].
///
/// Applies [`KubeSettings::with_env`] itself (idempotent), so callers may pass
/// either the raw attributes or already env-filled settings. Reads kubeconfig
/// and service-account files synchronously (they are small local files).
pub fn resolve(
    settings: &KubeSettings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    resolve_with(settings, env, Path::new(IN_CLUSTER_DIR))
}

/// The selected cluster and user, before the explicit attributes are applied.
#[derive(Default)]
struct Selected {
    cluster: Cluster,
    user: AuthInfo,
    namespace: Option<String>,
    /// Human description of where `cluster`/`user` came from, for errors.
    origin: String,
}

fn resolve_with(
    settings: &KubeSettings,
    env: &dyn Fn(&str) -> Option<String>,
    in_cluster_dir: &Path,
) -> Result<Config, ConfigError> {
    let explicit = settings.clone().normalized();
    if explicit.config_path.is_some() && !explicit.config_paths.is_empty() {
        return Err(ConfigError::ConflictingConfigPaths);
    }
    if explicit.insecure.is_none()
        && let Some(raw) = env(ENV_INSECURE).filter(|v| !v.is_empty())
        && parse_go_bool(&raw).is_none()
    {
        return Err(ConfigError::InvalidBool {
            attribute: "insecure",
            env_var: ENV_INSECURE,
            value: raw,
        });
    }
    let settings = explicit.with_env(env).normalized();
    let overrides = Overrides::parse(&settings)?;

    let mut selected = select_base(&settings, &overrides, env, in_cluster_dir)?;
    overrides.apply(&mut selected);

    if selected.cluster.server.as_deref().is_none_or(str::is_empty) {
        return Err(ConfigError::MissingServer {
            origin: selected.origin,
        });
    }
    let user = &selected.user;
    let has_cert = user.client_certificate.is_some() || user.client_certificate_data.is_some();
    let has_key = user.client_key.is_some() || user.client_key_data.is_some();
    match (has_cert, has_key) {
        (true, false) => {
            return Err(ConfigError::ClientKeyMissing {
                origin: selected.origin,
            });
        }
        (false, true) => {
            return Err(ConfigError::ClientCertificateMissing {
                origin: selected.origin,
            });
        }
        _ => {}
    }

    tracing::debug!(
        origin = %selected.origin,
        server = selected.cluster.server.as_deref().unwrap_or_default(),
        "resolved the Kubernetes connection settings"
    );
    let kubeconfig = Kubeconfig {
        clusters: vec![NamedCluster {
            name: MERGED_NAME.to_owned(),
            cluster: Some(selected.cluster),
            ..NamedCluster::default()
        }],
        auth_infos: vec![NamedAuthInfo {
            name: MERGED_NAME.to_owned(),
            auth_info: Some(selected.user),
            ..NamedAuthInfo::default()
        }],
        contexts: vec![NamedContext {
            name: MERGED_NAME.to_owned(),
            context: Some(Context {
                cluster: MERGED_NAME.to_owned(),
                user: Some(MERGED_NAME.to_owned()),
                namespace: selected.namespace,
                ..Context::default()
            }),
            ..NamedContext::default()
        }],
        current_context: Some(MERGED_NAME.to_owned()),
        ..Kubeconfig::default()
    };

    Config::try_from(kubeconfig).map_err(|err| match err {
        KubeconfigError::ParseClusterUrl(e) if overrides.host.is_some() => {
            ConfigError::InvalidHost {
                value: overrides.host.clone().unwrap_or_default(),
                reason: e.to_string(),
            }
        }
        other => ConfigError::Kube {
            origin: selected.origin.clone(),
            reason: other.to_string(),
        },
    })
}

/// The explicit (attribute or `KUBE_*`) settings, validated, ready to be
/// applied on top of the kubeconfig / in-cluster base.
struct Overrides {
    host: Option<String>,
    ca_pem: Option<String>,
    client_cert_pem: Option<String>,
    client_key_pem: Option<String>,
    token: Option<String>,
    insecure: Option<bool>,
    tls_server_name: Option<String>,
    proxy_url: Option<String>,
    exec: Option<ExecConfig>,
}

impl Overrides {
    fn parse(s: &KubeSettings) -> Result<Overrides, ConfigError> {
        let exec = s.exec.as_ref().map(exec_config).transpose()?;
        let ca_pem = s
            .cluster_ca_certificate
            .as_deref()
            .map(|pem| check_certificates("cluster_ca_certificate", ENV_CLUSTER_CA_CERT_DATA, pem))
            .transpose()?;
        let client_cert_pem = s
            .client_certificate
            .as_deref()
            .map(|pem| check_certificates("client_certificate", ENV_CLIENT_CERT_DATA, pem))
            .transpose()?;
        let client_key_pem = s.client_key.as_deref().map(check_private_key).transpose()?;
        if s.insecure == Some(true) && ca_pem.is_some() {
            return Err(ConfigError::InsecureWithCa);
        }
        let token = s.token.as_deref().map(check_token).transpose()?;
        let proxy_url = s.proxy_url.as_deref().map(check_proxy_url).transpose()?;
        // client-go's DefaultServerURL: https when TLS material is given.
        let default_tls =
            (ca_pem.is_some() || client_cert_pem.is_some()) && s.insecure != Some(true);
        let host = s
            .host
            .as_deref()
            .map(|h| normalize_host(h, default_tls))
            .transpose()?;
        Ok(Overrides {
            host,
            ca_pem,
            client_cert_pem,
            client_key_pem,
            token,
            insecure: s.insecure,
            tls_server_name: s.tls_server_name.as_ref().map(|v| v.trim().to_owned()),
            proxy_url,
            exec,
        })
    }

    /// Whether anything but kubeconfig selection was configured.
    fn has_connection_setting(&self) -> bool {
        self.ca_pem.is_some()
            || self.client_cert_pem.is_some()
            || self.client_key_pem.is_some()
            || self.token.is_some()
            || self.insecure == Some(true)
            || self.tls_server_name.is_some()
            || self.proxy_url.is_some()
            || self.exec.is_some()
    }

    /// Applies the explicit settings on top of the base, following client-go's
    /// `DirectClientConfig` override rules.
    fn apply(&self, selected: &mut Selected) {
        let cluster = &mut selected.cluster;
        if let Some(host) = &self.host {
            cluster.server = Some(host.clone());
        }
        // An explicit CA or `insecure = true` replaces the CA and verification
        // settings of the kubeconfig as a unit (so a kubeconfig CA cannot clash
        // with `insecure`, and an explicit CA re-enables verification).
        if self.insecure == Some(true) || self.ca_pem.is_some() {
            cluster.insecure_skip_tls_verify = Some(self.insecure.unwrap_or(false));
            cluster.certificate_authority = None;
            cluster.certificate_authority_data = self.ca_pem.as_ref().map(|pem| BASE64.encode(pem));
        } else if self.insecure == Some(false) {
            cluster.insecure_skip_tls_verify = Some(false);
        }
        if let Some(name) = &self.tls_server_name {
            cluster.tls_server_name = Some(name.clone());
        }
        if let Some(proxy) = &self.proxy_url
            && cluster.proxy_url.as_deref().is_none_or(str::is_empty)
        {
            cluster.proxy_url = Some(proxy.clone());
        }

        let user = &mut selected.user;
        if let Some(pem) = &self.client_cert_pem {
            user.client_certificate = None;
            user.client_certificate_data = Some(BASE64.encode(pem));
        }
        if let Some(pem) = &self.client_key_pem {
            user.client_key = None;
            user.client_key_data = Some(BASE64.encode(pem).into());
        }
        if self.token.is_some() || self.exec.is_some() {
            // kube tries auth-provider, basic, token, token file, then exec:
            // drop the kubeconfig's so the explicit credential is the one used.
            user.auth_provider = None;
            user.username = None;
            user.password = None;
            user.token = None;
            user.token_file = None;
        }
        if let Some(token) = &self.token {
            user.token = Some(token.clone().into());
        }
        if let Some(exec) = &self.exec {
            user.exec = Some(exec.clone());
        }
    }
}

fn exec_config(exec: &ExecSettings) -> Result<ExecConfig, ConfigError> {
    let api_version = exec.api_version.trim();
    if api_version.is_empty() {
        return Err(ConfigError::ExecMissingField {
            field: "exec.api_version",
        });
    }
    if exec.command.trim().is_empty() {
        return Err(ConfigError::ExecMissingField {
            field: "exec.command",
        });
    }
    let env = exec
        .env
        .iter()
        .map(|(name, value)| {
            HashMap::from([
                ("name".to_owned(), name.clone()),
                ("value".to_owned(), value.clone()),
            ])
        })
        .collect();
    Ok(ExecConfig {
        api_version: Some(api_version.to_owned()),
        command: Some(exec.command.clone()),
        args: (!exec.args.is_empty()).then(|| exec.args.clone()),
        env: (!exec.env.is_empty()).then_some(env),
        // The plugin runs under Terraform, which owns the terminal.
        interactive_mode: Some(ExecInteractiveMode::Never),
        ..ExecConfig::default()
    })
}

/// Replaces `user:password@` in a URL with a marker, for error messages.
fn redact_userinfo(url: &str) -> String {
    let (prefix, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), url),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{prefix}{REDACTED}@{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

/// The `host[:port]` of what follows `scheme://`, without any `userinfo@`.
fn host_part(after_scheme: &str) -> &str {
    let authority = after_scheme.split(['/', '?', '#']).next().unwrap_or("");
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
}

fn normalize_host(host: &str, default_tls: bool) -> Result<String, ConfigError> {
    let host = host.trim();
    let invalid = |reason: &str| ConfigError::InvalidHost {
        value: redact_userinfo(host),
        reason: reason.to_owned(),
    };
    let url = if host.contains("://") {
        host.to_owned()
    } else {
        let scheme = if default_tls { "https" } else { "http" };
        format!("{scheme}://{host}")
    };
    let (scheme, rest) = url.split_once("://").unwrap_or(("", ""));
    if !scheme.eq_ignore_ascii_case("https") && !scheme.eq_ignore_ascii_case("http") {
        return Err(invalid("the scheme must be https:// (or http://)"));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid("it contains whitespace"));
    }
    if host_part(rest).is_empty() {
        return Err(invalid("the host name is missing"));
    }
    Ok(url)
}

fn check_proxy_url(proxy: &str) -> Result<String, ConfigError> {
    let proxy = proxy.trim();
    let invalid = |reason: &str| ConfigError::InvalidProxyUrl {
        value: redact_userinfo(proxy),
        reason: reason.to_owned(),
    };
    let Some((scheme, rest)) = proxy.split_once("://") else {
        return Err(invalid(
            "it must be a URL with a scheme, e.g. http://proxy.example.com:3128",
        ));
    };
    match scheme.to_ascii_lowercase().as_str() {
        "http" | "https" => {}
        "socks5" | "socks5h" => {
            return Err(invalid(
                "SOCKS5 proxies are not supported by this provider; use an http:// or https:// proxy",
            ));
        }
        _ => return Err(invalid("the scheme must be http:// or https://")),
    }
    if proxy.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid("it contains whitespace"));
    }
    if host_part(rest).is_empty() {
        return Err(invalid("the proxy host name is missing"));
    }
    Ok(proxy.to_owned())
}

fn check_token(token: &str) -> Result<String, ConfigError> {
    let token = token.trim();
    let invalid = |reason: &str| ConfigError::InvalidToken {
        reason: reason.to_owned(),
    };
    if token
        .get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("bearer "))
    {
        return Err(invalid(
            "give the bare token, without the \"Bearer \" prefix",
        ));
    }
    if token.chars().any(|c| c.is_control() || !c.is_ascii()) {
        return Err(invalid(
            "it contains line breaks, control or non-ASCII characters; it must be a single-line bearer token",
        ));
    }
    Ok(token.to_owned())
}

struct PemBlock {
    label: String,
    der: Vec<u8>,
    encrypted: bool,
}

/// Explains why text holds no PEM block, without quoting it.
fn no_pem_reason(text: &str) -> String {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if let Ok(decoded) = BASE64.decode(compact.as_bytes())
        && String::from_utf8_lossy(&decoded).contains("-----BEGIN ")
    {
        return "the value is base64-encoded PEM; decode it first (e.g. with base64decode())"
            .to_owned();
    }
    let trimmed = text.trim();
    if !trimmed.contains('\n')
        && (trimmed.starts_with('/') || trimmed.starts_with('~') || trimmed.starts_with("./"))
    {
        return "the value looks like a file path; pass the file's contents (e.g. with file())"
            .to_owned();
    }
    "no PEM block found; expected PEM text starting with \"-----BEGIN ...-----\"".to_owned()
}

/// A small RFC 7468 PEM reader: text outside blocks is ignored, RFC 1421
/// headers inside blocks are skipped (and mark the block encrypted if they say
/// so). Error texts never quote the data.
fn parse_pem(text: &str) -> Result<Vec<PemBlock>, String> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, String, bool)> = None;
    for raw in text.lines() {
        let line = raw.trim();
        match &mut current {
            None => {
                if let Some(label) = line
                    .strip_prefix("-----BEGIN ")
                    .and_then(|rest| rest.strip_suffix("-----"))
                {
                    current = Some((label.to_owned(), String::new(), false));
                }
            }
            Some((label, body, encrypted)) => {
                if let Some(end) = line
                    .strip_prefix("-----END ")
                    .and_then(|rest| rest.strip_suffix("-----"))
                {
                    if end != label.as_str() {
                        return Err(format!(
                            "the PEM block \"{label}\" is closed by an END line for \"{end}\""
                        ));
                    }
                    let der = BASE64.decode(body.as_bytes()).map_err(|_| {
                        format!("the body of the PEM block \"{label}\" is not valid base64")
                    })?;
                    if der.is_empty() {
                        return Err(format!("the PEM block \"{label}\" is empty"));
                    }
                    blocks.push(PemBlock {
                        label: std::mem::take(label),
                        der,
                        encrypted: *encrypted,
                    });
                    current = None;
                } else if line.contains(':') {
                    if line.starts_with("Proc-Type:") && line.contains("ENCRYPTED") {
                        *encrypted = true;
                    }
                } else {
                    body.push_str(line);
                }
            }
        }
    }
    if let Some((label, _, _)) = current {
        return Err(format!("the PEM block \"{label}\" has no END line"));
    }
    if blocks.is_empty() {
        return Err(no_pem_reason(text));
    }
    Ok(blocks)
}

fn labels(blocks: &[PemBlock]) -> String {
    blocks
        .iter()
        .map(|b| b.label.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks a PEM bundle holds at least one parsable X.509 certificate.
fn check_certificates(
    attribute: &'static str,
    env_var: &'static str,
    pem: &str,
) -> Result<String, ConfigError> {
    let invalid = |reason: String| ConfigError::InvalidPem {
        attribute,
        env_var,
        reason,
    };
    let blocks = parse_pem(pem).map_err(invalid)?;
    let certificates: Vec<&PemBlock> = blocks.iter().filter(|b| b.label == "CERTIFICATE").collect();
    if certificates.is_empty() {
        return Err(invalid(format!(
            "no CERTIFICATE block found (found: {})",
            labels(&blocks)
        )));
    }
    for (index, block) in certificates.iter().enumerate() {
        if let Err(err) = x509_parser::parse_x509_certificate(&block.der) {
            return Err(invalid(format!(
                "certificate #{} is not a valid X.509 certificate ({err})",
                index + 1
            )));
        }
    }
    Ok(ensure_trailing_newline(pem.trim()))
}

/// Checks a PEM text holds exactly one unencrypted private key.
fn check_private_key(pem: &str) -> Result<String, ConfigError> {
    let invalid = |reason: String| ConfigError::InvalidPem {
        attribute: "client_key",
        env_var: ENV_CLIENT_KEY_DATA,
        reason,
    };
    let blocks = parse_pem(pem).map_err(invalid)?;
    let keys: Vec<&PemBlock> = blocks
        .iter()
        .filter(|b| b.label.ends_with("PRIVATE KEY"))
        .collect();
    let key = match keys.as_slice() {
        [key] => *key,
        [] => {
            return Err(invalid(format!(
                "no PRIVATE KEY block found (found: {})",
                labels(&blocks)
            )));
        }
        more => {
            return Err(invalid(format!(
                "{} private keys found; exactly one is expected",
                more.len()
            )));
        }
    };
    if key.encrypted || key.label == "ENCRYPTED PRIVATE KEY" {
        return Err(invalid(
            "encrypted private keys are not supported; decrypt the key first".to_owned(),
        ));
    }
    if !matches!(
        key.label.as_str(),
        "PRIVATE KEY" | "RSA PRIVATE KEY" | "EC PRIVATE KEY"
    ) {
        return Err(invalid(format!(
            "unsupported key type \"{}\"; use a PKCS#8, RSA or EC private key",
            key.label
        )));
    }
    Ok(ensure_trailing_newline(pem.trim()))
}

fn ensure_trailing_newline(text: &str) -> String {
    let mut text = text.to_owned();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Expands a leading `~` like go-homedir's `Expand` (`~user` is an error).
fn expand_home(path: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let Some(rest) = path.strip_prefix('~') else {
        return Ok(path.to_owned());
    };
    if !(rest.is_empty() || rest.starts_with('/') || rest.starts_with('\\')) {
        return Err("only `~` or `~/...` can be expanded, not `~user`".to_owned());
    }
    let home = env("HOME")
        .filter(|h| !h.is_empty())
        .or_else(|| env("USERPROFILE").filter(|h| !h.is_empty()))
        .ok_or_else(|| "the home directory is unknown (HOME is not set)".to_owned())?;
    let rest = rest.trim_start_matches(['/', '\\']);
    if rest.is_empty() {
        return Ok(home);
    }
    Ok(Path::new(&home).join(rest).to_string_lossy().into_owned())
}

fn kubeconfig_read_reason(err: &KubeconfigError) -> String {
    match err {
        KubeconfigError::ReadConfig(io, _) => io.to_string(),
        // The parser's message can quote the file, which may hold credentials.
        KubeconfigError::Parse(parse) => match parse.location() {
            Some(at) => format!(
                "it is not a valid kubeconfig (YAML error at line {}, column {}; details omitted as the file may contain credentials)",
                at.line(),
                at.column()
            ),
            None => "it is not a valid kubeconfig (YAML error; details omitted as the file may contain credentials)".to_owned(),
        },
        other => other.to_string(),
    }
}

/// Reads and merges kubeconfig files (first file wins, as in kubectl).
fn load_kubeconfigs(
    origin: PathSource,
    paths: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Kubeconfig, Vec<String>), ConfigError> {
    let mut expanded = Vec::with_capacity(paths.len());
    for path in paths {
        let full = expand_home(path, env).map_err(|reason| ConfigError::PathExpansion {
            origin,
            path: path.clone(),
            reason,
        })?;
        expanded.push(full);
    }
    // hashicorp: one path is client-go's ExplicitPath, which must exist.
    let must_exist = expanded.len() == 1 && origin != PathSource::KubeconfigEnv;
    let mut merged: Option<Kubeconfig> = None;
    let mut loaded = Vec::new();
    for path in &expanded {
        if matches!(std::fs::metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
            if must_exist {
                return Err(ConfigError::KubeconfigNotFound {
                    origin,
                    path: path.clone(),
                });
            }
            tracing::warn!(path = %path, "kubeconfig file listed in {origin} does not exist, skipping it");
            continue;
        }
        let config =
            Kubeconfig::read_from(path).map_err(|err| ConfigError::KubeconfigUnreadable {
                origin,
                path: path.clone(),
                reason: kubeconfig_read_reason(&err),
            })?;
        merged = Some(match merged {
            None => config,
            Some(base) => base
                .merge(config)
                .map_err(|err| ConfigError::KubeconfigMerge {
                    origin,
                    reason: err.to_string(),
                })?,
        });
        loaded.push(path.clone());
    }
    match merged {
        Some(config) => Ok((config, loaded)),
        None => Err(ConfigError::NoKubeconfigFound {
            origin,
            paths: expanded,
        }),
    }
}

/// Picks context, cluster and user in a loaded kubeconfig, honouring
/// `config_context`, `config_context_cluster` and `config_context_auth_info`.
fn select_in_kubeconfig(
    kubeconfig: Kubeconfig,
    files: Vec<String>,
    origin: PathSource,
    s: &KubeSettings,
    has_host: bool,
) -> Result<Selected, ConfigError> {
    let context_name = s
        .config_context
        .clone()
        .or_else(|| kubeconfig.current_context.clone().filter(|c| !c.is_empty()));
    let context = match &context_name {
        None => None,
        Some(name) => Some(
            kubeconfig
                .contexts
                .iter()
                .find(|c| &c.name == name)
                .map(|c| c.context.clone().unwrap_or_default())
                .ok_or_else(|| ConfigError::ContextNotFound {
                    context: name.clone(),
                    explicit: s.config_context.is_some(),
                    available: kubeconfig.contexts.iter().map(|c| c.name.clone()).collect(),
                    files: files.clone(),
                })?,
        ),
    };

    let cluster_name = s.config_context_cluster.clone().or_else(|| {
        context
            .as_ref()
            .map(|c| c.cluster.clone())
            .filter(|c| !c.is_empty())
    });
    let cluster = match &cluster_name {
        None if context_name.is_none() && !has_host => {
            return Err(ConfigError::NoCurrentContext { origin, files });
        }
        None => Cluster::default(),
        Some(name) => match kubeconfig.clusters.iter().find(|c| &c.name == name) {
            Some(found) => found.cluster.clone().unwrap_or_default(),
            // client-go tolerates a dangling reference if `host` supplies the server.
            None if s.config_context_cluster.is_none() && has_host => Cluster::default(),
            None => {
                return Err(ConfigError::ClusterNotFound {
                    cluster: name.clone(),
                    explicit: s.config_context_cluster.is_some(),
                    available: kubeconfig.clusters.iter().map(|c| c.name.clone()).collect(),
                    files,
                });
            }
        },
    };

    let user_name = s.config_context_auth_info.clone().or_else(|| {
        context
            .as_ref()
            .and_then(|c| c.user.clone())
            .filter(|u| !u.is_empty())
    });
    let user = match &user_name {
        None => AuthInfo::default(),
        Some(name) => match kubeconfig.auth_infos.iter().find(|u| &u.name == name) {
            Some(found) => found.auth_info.clone().unwrap_or_default(),
            // Like client-go and kube, a dangling user of a context means "no credentials".
            None if s.config_context_auth_info.is_none() => AuthInfo::default(),
            None => {
                return Err(ConfigError::AuthInfoNotFound {
                    user: name.clone(),
                    available: kubeconfig
                        .auth_infos
                        .iter()
                        .map(|u| u.name.clone())
                        .collect(),
                    files,
                });
            }
        },
    };

    let described = match (&context_name, &cluster_name) {
        (Some(ctx), _) => format!("kubeconfig {} (context {ctx:?})", files.join(", ")),
        (None, Some(cluster)) => format!("kubeconfig {} (cluster {cluster:?})", files.join(", ")),
        (None, None) => format!("kubeconfig {}", files.join(", ")),
    };
    Ok(Selected {
        cluster,
        user,
        namespace: context.and_then(|c| c.namespace),
        origin: described,
    })
}

/// client-go's `inClusterClientConfig`: possible when both service variables
/// are set and the service-account token file exists.
fn in_cluster(
    env: &dyn Fn(&str) -> Option<String>,
    dir: &Path,
) -> Result<Option<Selected>, ConfigError> {
    let host = env(ENV_SERVICE_HOST).filter(|v| !v.is_empty());
    let port = env(ENV_SERVICE_PORT).filter(|v| !v.is_empty());
    let (Some(host), Some(port)) = (host, port) else {
        return Ok(None);
    };
    let token = dir.join("token");
    if !token.is_file() {
        return Ok(None);
    }
    let port: u16 = port.trim().parse().map_err(|_| ConfigError::InCluster {
        reason: format!("{ENV_SERVICE_PORT} {port:?} is not a port number"),
    })?;
    let host = host.trim();
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_owned()
    };
    let server = if port == 443 {
        format!("https://{host}")
    } else {
        format!("https://{host}:{port}")
    };
    let mut cluster = Cluster {
        server: Some(server),
        ..Cluster::default()
    };
    let ca = dir.join("ca.crt");
    if ca.is_file() {
        cluster.certificate_authority = Some(ca.to_string_lossy().into_owned());
    } else {
        tracing::warn!(path = %ca.display(), "in-cluster CA bundle not found; using the system trust store");
    }
    let user = AuthInfo {
        token_file: Some(token.to_string_lossy().into_owned()),
        ..AuthInfo::default()
    };
    let namespace = std::fs::read_to_string(dir.join("namespace"))
        .ok()
        .map(|ns| ns.trim().to_owned())
        .filter(|ns| !ns.is_empty());
    Ok(Some(Selected {
        cluster,
        user,
        namespace,
        origin: format!(
            "the in-cluster service account ({ENV_SERVICE_HOST}/{ENV_SERVICE_PORT}, {})",
            dir.display()
        ),
    }))
}

fn select_base(
    s: &KubeSettings,
    overrides: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    in_cluster_dir: &Path,
) -> Result<Selected, ConfigError> {
    let has_host = overrides.host.is_some();
    let from_files = |origin: PathSource, paths: &[String]| {
        let (kubeconfig, files) = load_kubeconfigs(origin, paths, env)?;
        select_in_kubeconfig(kubeconfig, files, origin, s, has_host)
    };
    if let Some(path) = &s.config_path {
        return from_files(PathSource::ConfigPath, std::slice::from_ref(path));
    }
    if !s.config_paths.is_empty() {
        return from_files(PathSource::ConfigPaths, &s.config_paths);
    }
    if has_host {
        if s.config_context.is_some()
            || s.config_context_cluster.is_some()
            || s.config_context_auth_info.is_some()
        {
            tracing::debug!(
                "config_context* settings are ignored: no kubeconfig file is configured"
            );
        }
        return Ok(Selected {
            origin: "the provider attributes".to_owned(),
            ..Selected::default()
        });
    }
    if let Some(list) = env(ENV_KUBECONFIG) {
        let paths = split_path_list(&list);
        if !paths.is_empty() {
            return from_files(PathSource::KubeconfigEnv, &paths);
        }
    }
    if let Some(selected) = in_cluster(env, in_cluster_dir)? {
        return Ok(selected);
    }
    if overrides.has_connection_setting() {
        Err(ConfigError::MissingHost)
    } else {
        Err(ConfigError::NothingConfigured)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::OnceLock;

    struct Pki {
        ca_pem: String,
        ca_der: Vec<u8>,
        client_cert_pem: String,
        client_key_pem: String,
    }

    /// Throwaway self-signed material generated per test run (no fixtures).
    fn pki() -> &'static Pki {
        static PKI: OnceLock<Pki> = OnceLock::new();
        PKI.get_or_init(|| {
            let ca = rcgen::generate_simple_self_signed(vec!["test-ca.invalid".to_owned()])
                .expect("generate CA");
            let client = rcgen::generate_simple_self_signed(vec!["client.invalid".to_owned()])
                .expect("generate client cert");
            Pki {
                ca_pem: ca.cert.pem(),
                ca_der: ca.cert.der().to_vec(),
                client_cert_pem: client.cert.pem(),
                client_key_pem: client.signing_key.serialize_pem(),
            }
        })
    }

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name: &str| map.get(name).cloned()
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    /// Resolves with an in-cluster directory that does not exist, so the
    /// machine running the tests cannot leak into them.
    fn run(s: &KubeSettings, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        resolve_with(s, env, Path::new("/nonexistent/serviceaccount"))
    }

    fn err(s: &KubeSettings, env: &dyn Fn(&str) -> Option<String>) -> ConfigError {
        match run(s, env) {
            Ok(config) => panic!("expected an error, got {:?}", config.cluster_url),
            Err(e) => e,
        }
    }

    fn token_of(config: &Config) -> Option<String> {
        serde_json::to_value(&config.auth_info).unwrap()["token"]
            .as_str()
            .map(str::to_owned)
    }

    fn b64(text: &str) -> String {
        BASE64.encode(text)
    }

    fn write(dir: &Path, name: &str, content: &str) -> String {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        path.to_string_lossy().into_owned()
    }

    /// ctx1 -> c1 (CA, https://one.example:6443) + u1 (token), namespace ns1;
    /// ctx2 -> c2 (insecure, https://two.example:6443) + u2 (token file).
    fn two_context_kubeconfig(dir: &Path) -> String {
        let yaml = format!(
            r#"apiVersion: v1
kind: Config
current-context: ctx1
clusters:
- name: c1
  cluster:
    server: https://one.example:6443
    certificate-authority-data: {ca}
- name: c2
  cluster:
    server: https://two.example:6443
    insecure-skip-tls-verify: true
users:
- name: u1
  user:
    token: kubeconfig-token-one
- name: u2
  user:
    tokenFile: /var/run/u2-token
contexts:
- name: ctx1
  context:
    cluster: c1
    user: u1
    namespace: ns1
- name: ctx2
  context:
    cluster: c2
    user: u2
"#,
            ca = b64(&pki().ca_pem)
        );
        write(dir, "config", &yaml)
    }

    fn with_path(path: &str) -> KubeSettings {
        KubeSettings {
            config_path: Some(path.to_owned()),
            ..KubeSettings::default()
        }
    }

    // ---------- with_env ----------

    #[test]
    fn with_env_fills_every_variable() {
        let env = env_of(&[
            (ENV_CONFIG_PATH, "/env/config"),
            (ENV_CTX, "env-ctx"),
            (ENV_CTX_AUTH_INFO, "env-user"),
            (ENV_CTX_CLUSTER, "env-cluster"),
            (ENV_HOST, "https://env.example"),
            (ENV_TOKEN, "env-token"),
            (ENV_CLUSTER_CA_CERT_DATA, "env-ca"),
            (ENV_CLIENT_CERT_DATA, "env-cert"),
            (ENV_CLIENT_KEY_DATA, "env-key"),
            (ENV_INSECURE, "true"),
            (ENV_TLS_SERVER_NAME, "env-sni"),
            (ENV_PROXY_URL, "http://env-proxy:3128"),
        ]);
        let s = KubeSettings::default().with_env(&env);
        assert_eq!(s.config_path.as_deref(), Some("/env/config"));
        assert!(s.config_paths.is_empty());
        assert_eq!(s.config_context.as_deref(), Some("env-ctx"));
        assert_eq!(s.config_context_auth_info.as_deref(), Some("env-user"));
        assert_eq!(s.config_context_cluster.as_deref(), Some("env-cluster"));
        assert_eq!(s.host.as_deref(), Some("https://env.example"));
        assert_eq!(s.token.as_deref(), Some("env-token"));
        assert_eq!(s.cluster_ca_certificate.as_deref(), Some("env-ca"));
        assert_eq!(s.client_certificate.as_deref(), Some("env-cert"));
        assert_eq!(s.client_key.as_deref(), Some("env-key"));
        assert_eq!(s.insecure, Some(true));
        assert_eq!(s.tls_server_name.as_deref(), Some("env-sni"));
        assert_eq!(s.proxy_url.as_deref(), Some("http://env-proxy:3128"));
        assert_eq!(s.exec, None);
    }

    #[test]
    fn with_env_never_overrides_attributes() {
        let env = env_of(&[
            (ENV_CONFIG_PATH, "/env/config"),
            (ENV_CTX, "env-ctx"),
            (ENV_HOST, "https://env.example"),
            (ENV_TOKEN, "env-token"),
            (ENV_INSECURE, "true"),
        ]);
        let explicit = KubeSettings {
            config_path: Some("/attr/config".into()),
            config_context: Some("attr-ctx".into()),
            host: Some("https://attr.example".into()),
            token: Some("attr-token".into()),
            insecure: Some(false),
            ..KubeSettings::default()
        };
        let s = explicit.clone().with_env(&env);
        assert_eq!(s, explicit);
    }

    #[test]
    fn with_env_treats_empty_as_unset() {
        let env = env_of(&[(ENV_HOST, "https://env.example"), (ENV_TOKEN, "")]);
        let s = KubeSettings {
            host: Some(String::new()),
            ..KubeSettings::default()
        }
        .with_env(&env);
        assert_eq!(s.host.as_deref(), Some("https://env.example"));
        assert_eq!(s.token, None);
    }

    #[test]
    fn with_env_parses_insecure_like_go() {
        for (raw, want) in [
            ("1", Some(true)),
            ("t", Some(true)),
            ("TRUE", Some(true)),
            ("True", Some(true)),
            ("0", Some(false)),
            ("f", Some(false)),
            ("false", Some(false)),
            ("yes", None),
        ] {
            let s = KubeSettings::default().with_env(&env_of(&[(ENV_INSECURE, raw)]));
            assert_eq!(s.insecure, want, "KUBE_INSECURE={raw}");
        }
    }

    #[test]
    fn with_env_config_path_rules() {
        let list = std::env::join_paths(["/a/one", "/b/two"]).unwrap();
        let list = list.to_str().unwrap();
        // KUBE_CONFIG_PATH wins over KUBE_CONFIG_PATHS.
        let s = KubeSettings::default().with_env(&env_of(&[
            (ENV_CONFIG_PATH, "/single"),
            (ENV_CONFIG_PATHS, list),
        ]));
        assert_eq!(s.config_path.as_deref(), Some("/single"));
        assert!(s.config_paths.is_empty());
        // KUBE_CONFIG_PATHS is split with the OS separator.
        let s = KubeSettings::default().with_env(&env_of(&[(ENV_CONFIG_PATHS, list)]));
        assert_eq!(
            s.config_paths,
            vec!["/a/one".to_owned(), "/b/two".to_owned()]
        );
        assert_eq!(s.config_path, None);
        // An explicit `config_paths` shadows both variables.
        let explicit = KubeSettings {
            config_paths: vec!["/attr".into()],
            ..KubeSettings::default()
        };
        let s = explicit.clone().with_env(&env_of(&[
            (ENV_CONFIG_PATH, "/single"),
            (ENV_CONFIG_PATHS, list),
        ]));
        assert_eq!(s, explicit);
    }

    // ---------- host-based configuration ----------

    #[test]
    fn host_token_and_ca() {
        let s = KubeSettings {
            host: Some("https://api.example:6443".into()),
            token: Some("attr-token".into()),
            cluster_ca_certificate: Some(pki().ca_pem.clone()),
            ..KubeSettings::default()
        };
        let config = run(&s, &no_env).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://api.example:6443/");
        assert_eq!(config.root_cert, Some(vec![pki().ca_der.clone()]));
        assert!(!config.accept_invalid_certs);
        assert_eq!(token_of(&config).as_deref(), Some("attr-token"));
        assert_eq!(config.default_namespace, "default");
    }

    #[test]
    fn every_attribute_can_come_from_env() {
        let env = env_of(&[
            (ENV_HOST, "api.example:6443"),
            (ENV_TOKEN, "env-token"),
            (ENV_CLUSTER_CA_CERT_DATA, &pki().ca_pem),
            (ENV_CLIENT_CERT_DATA, &pki().client_cert_pem),
            (ENV_CLIENT_KEY_DATA, &pki().client_key_pem),
            (ENV_TLS_SERVER_NAME, "sni.example"),
            (ENV_PROXY_URL, "http://proxy.example:3128"),
        ]);
        let config = run(&KubeSettings::default(), &env).unwrap();
        // CA given and not insecure: client-go defaults the scheme to https.
        assert_eq!(config.cluster_url.to_string(), "https://api.example:6443/");
        assert_eq!(token_of(&config).as_deref(), Some("env-token"));
        assert_eq!(config.root_cert, Some(vec![pki().ca_der.clone()]));
        assert_eq!(config.tls_server_name.as_deref(), Some("sni.example"));
        assert_eq!(
            config.proxy_url.map(|u| u.to_string()).as_deref(),
            Some("http://proxy.example:3128/")
        );
        let cert = config.auth_info.client_certificate_data.clone().unwrap();
        assert_eq!(
            BASE64.decode(cert).unwrap(),
            pki().client_cert_pem.as_bytes()
        );
        let key = serde_json::to_value(&config.auth_info).unwrap()["client-key-data"].clone();
        let key = BASE64.decode(key.as_str().unwrap()).unwrap();
        assert_eq!(String::from_utf8(key).unwrap(), pki().client_key_pem);

        let env = env_of(&[(ENV_HOST, "https://api.example"), (ENV_INSECURE, "1")]);
        assert!(
            run(&KubeSettings::default(), &env)
                .unwrap()
                .accept_invalid_certs
        );
    }

    #[test]
    fn host_without_scheme_follows_default_server_url() {
        let base = KubeSettings {
            host: Some("api.example:6443".into()),
            ..KubeSettings::default()
        };
        let plain = run(&base, &no_env).unwrap();
        assert_eq!(plain.cluster_url.to_string(), "http://api.example:6443/");
        let with_ca = KubeSettings {
            cluster_ca_certificate: Some(pki().ca_pem.clone()),
            ..base.clone()
        };
        assert_eq!(
            run(&with_ca, &no_env).unwrap().cluster_url.to_string(),
            "https://api.example:6443/"
        );
        let with_cert = KubeSettings {
            client_certificate: Some(pki().client_cert_pem.clone()),
            client_key: Some(pki().client_key_pem.clone()),
            ..base.clone()
        };
        assert_eq!(
            run(&with_cert, &no_env).unwrap().cluster_url.to_string(),
            "https://api.example:6443/"
        );
        let insecure = KubeSettings {
            client_certificate: Some(pki().client_cert_pem.clone()),
            client_key: Some(pki().client_key_pem.clone()),
            insecure: Some(true),
            ..base
        };
        assert_eq!(
            run(&insecure, &no_env).unwrap().cluster_url.to_string(),
            "http://api.example:6443/"
        );
    }

    #[test]
    fn invalid_host_is_reported() {
        for host in ["ftp://api.example", "https://", "https://api example"] {
            let s = KubeSettings {
                host: Some(host.into()),
                ..KubeSettings::default()
            };
            let e = err(&s, &no_env);
            assert!(matches!(e, ConfigError::InvalidHost { .. }), "{host}: {e}");
            assert_eq!(attribute_of(&e), Some("host"));
            assert!(e.to_string().contains("`host`"));
        }
    }

    #[test]
    fn host_attribute_ignores_kubeconfig_env() {
        let dir = tempfile::tempdir().unwrap();
        let path = two_context_kubeconfig(dir.path());
        let s = KubeSettings {
            host: Some("https://attr.example".into()),
            ..KubeSettings::default()
        };
        let config = run(&s, &env_of(&[(ENV_KUBECONFIG, &path)])).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://attr.example/");
        assert_eq!(token_of(&config), None);
    }

    // ---------- kubeconfig files ----------

    #[test]
    fn config_path_uses_current_context() {
        let dir = tempfile::tempdir().unwrap();
        let path = two_context_kubeconfig(dir.path());
        let config = run(&with_path(&path), &no_env).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://one.example:6443/");
        assert_eq!(config.root_cert, Some(vec![pki().ca_der.clone()]));
        assert_eq!(config.default_namespace, "ns1");
        assert_eq!(token_of(&config).as_deref(), Some("kubeconfig-token-one"));
    }

    #[test]
    fn config_path_from_env_and_context_from_env() {
        let dir = tempfile::tempdir().unwrap();
        let path = two_context_kubeconfig(dir.path());
        let env = env_of(&[(ENV_CONFIG_PATH, &path), (ENV_CTX, "ctx2")]);
        let config = run(&KubeSettings::default(), &env).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://two.example:6443/");
        assert!(config.accept_invalid_certs);
        assert_eq!(
            config.auth_info.token_file.as_deref(),
            Some("/var/run/u2-token")
        );
        // The attribute beats KUBE_CTX.
        let s = KubeSettings {
            config_context: Some("ctx1".into()),
            ..KubeSettings::default()
        };
        let config = run(&s, &env).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://one.example:6443/");
    }

    #[test]
    fn context_cluster_and_auth_info_overrides() {
        let dir = tempfile::tempdir().unwrap();
        let path = two_context_kubeconfig(dir.path());
        let s = KubeSettings {
            config_context_cluster: Some("c2".into()),
            config_context_auth_info: Some("u2".into()),
            ..with_path(&path)
        };
        let config = run(&s, &no_env).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://two.example:6443/");
        assert_eq!(config.default_namespace, "ns1"); // still ctx1's namespace
        assert_eq!(token_of(&config), None);
        assert_eq!(
            config.auth_info.token_file.as_deref(),
            Some("/var/run/u2-token")
        );
        // The same through KUBE_CTX_CLUSTER / KUBE_CTX_AUTH_INFO.
        let env = env_of(&[(ENV_CTX_CLUSTER, "c2"), (ENV_CTX_AUTH_INFO, "u2")]);
        let config = run(&with_path(&path), &env).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://two.example:6443/");
        assert_eq!(
            config.auth_info.token_file.as_deref(),
            Some("/var/run/u2-token")
        );
    }

    #[test]
    fn missing_context_cluster_user_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = two_context_kubeconfig(dir.path());

        let e = err(
            &KubeSettings {
                config_context: Some("nope".into()),
                ..with_path(&path)
            },
            &no_env,
        );
        assert!(matches!(
            e,
            ConfigError::ContextNotFound { explicit: true, .. }
        ));
        assert_eq!(attribute_of(&e), Some("config_context"));
        let msg = e.to_string();
        assert!(
            msg.contains("\"nope\"") && msg.contains("ctx1, ctx2"),
            "{msg}"
        );
        assert!(
            msg.contains("`config_context`") && msg.contains("KUBE_CTX"),
            "{msg}"
        );

        let e = err(
            &KubeSettings {
                config_context_cluster: Some("nope".into()),
                ..with_path(&path)
            },
            &no_env,
        );
        assert!(matches!(
            e,
            ConfigError::ClusterNotFound { explicit: true, .. }
        ));
        assert_eq!(attribute_of(&e), Some("config_context_cluster"));
        assert!(e.to_string().contains("c1, c2"), "{e}");

        let e = err(
            &KubeSettings {
                config_context_auth_info: Some("nope".into()),
                ..with_path(&path)
            },
            &no_env,
        );
        assert!(matches!(e, ConfigError::AuthInfoNotFound { .. }));
        assert_eq!(attribute_of(&e), Some("config_context_auth_info"));
        assert!(e.to_string().contains("KUBE_CTX_AUTH_INFO"), "{e}");
    }

    #[test]
    fn dangling_references_in_the_kubeconfig() {
        let dir = tempfile::tempdir().unwrap();
        let yaml = "current-context: x\ncontexts:\n- name: x\n  context:\n    cluster: gone\n    user: ghost\n";
        let path = write(dir.path(), "dangling", yaml);
        let e = err(&with_path(&path), &no_env);
        assert!(
            matches!(
                e,
                ConfigError::ClusterNotFound {
                    explicit: false,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("\"gone\""));
        // `host` supplies the server; the dangling user means no credentials.
        let s = KubeSettings {
            host: Some("https://h.example".into()),
            ..with_path(&path)
        };
        let config = run(&s, &no_env).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://h.example/");
        assert_eq!(token_of(&config), None);
    }

    #[test]
    fn current_context_missing_or_unset() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "stale",
            "current-context: old\nclusters:\n- name: c\n  cluster:\n    server: https://c.example\ncontexts:\n- name: new\n  context:\n    cluster: c\n",
        );
        let e = err(&with_path(&path), &no_env);
        assert!(
            matches!(
                e,
                ConfigError::ContextNotFound {
                    explicit: false,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("current-context"));

        let path = write(
            dir.path(),
            "nocurrent",
            "clusters:\n- name: c\n  cluster:\n    server: https://c.example\ncontexts:\n- name: new\n  context:\n    cluster: c\n",
        );
        let e = err(&with_path(&path), &no_env);
        assert!(matches!(e, ConfigError::NoCurrentContext { .. }), "{e}");
        assert_eq!(attribute_of(&e), Some("config_context"));
        // Either picking a context or naming the cluster fixes it.
        let s = KubeSettings {
            config_context: Some("new".into()),
            ..with_path(&path)
        };
        assert_eq!(
            run(&s, &no_env).unwrap().cluster_url.to_string(),
            "https://c.example/"
        );
        let s = KubeSettings {
            config_context_cluster: Some("c".into()),
            ..with_path(&path)
        };
        assert_eq!(
            run(&s, &no_env).unwrap().cluster_url.to_string(),
            "https://c.example/"
        );
    }

    #[test]
    fn cluster_without_server_needs_host() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "noserver",
            "current-context: x\nclusters:\n- name: c\n  cluster:\n    insecure-skip-tls-verify: true\ncontexts:\n- name: x\n  context:\n    cluster: c\n",
        );
        let e = err(&with_path(&path), &no_env);
        assert!(matches!(e, ConfigError::MissingServer { .. }), "{e}");
        assert_eq!(attribute_of(&e), Some("host"));
        assert!(e.to_string().contains("context \"x\""), "{e}");
    }

    #[test]
    fn attributes_override_the_kubeconfig() {
        let dir = tempfile::tempdir().unwrap();
        let path = two_context_kubeconfig(dir.path());
        let s = KubeSettings {
            host: Some("https://override.example".into()),
            token: Some("attr-token".into()),
            tls_server_name: Some("sni.example".into()),
            ..with_path(&path)
        };
        let config = run(&s, &no_env).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://override.example/");
        assert_eq!(token_of(&config).as_deref(), Some("attr-token"));
        assert_eq!(config.root_cert, Some(vec![pki().ca_der.clone()])); // kept
        assert_eq!(config.tls_server_name.as_deref(), Some("sni.example"));

        // ctx2 uses a token file; an explicit token replaces it.
        let s = KubeSettings {
            config_context: Some("ctx2".into()),
            ..s
        };
        let config = run(&s, &no_env).unwrap();
        assert_eq!(config.auth_info.token_file, None);
        assert_eq!(token_of(&config).as_deref(), Some("attr-token"));

        // Env values override the kubeconfig too.
        let env = env_of(&[(ENV_HOST, "https://env.example"), (ENV_TOKEN, "env-token")]);
        let config = run(&with_path(&path), &env).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://env.example/");
        assert_eq!(token_of(&config).as_deref(), Some("env-token"));
    }

    #[test]
    fn tls_overrides_follow_client_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = two_context_kubeconfig(dir.path());
        // insecure = true drops the kubeconfig CA instead of clashing with it.
        let s = KubeSettings {
            insecure: Some(true),
            ..with_path(&path)
        };
        let config = run(&s, &no_env).unwrap();
        assert!(config.accept_invalid_certs);
        assert_eq!(config.root_cert, None);
        // An explicit CA re-enables verification of an insecure kubeconfig cluster.
        let s = KubeSettings {
            config_context: Some("ctx2".into()),
            cluster_ca_certificate: Some(pki().ca_pem.clone()),
            ..with_path(&path)
        };
        let config = run(&s, &no_env).unwrap();
        assert!(!config.accept_invalid_certs);
        assert_eq!(config.root_cert, Some(vec![pki().ca_der.clone()]));
        // An explicit insecure = false also does.
        let s = KubeSettings {
            config_context: Some("ctx2".into()),
            insecure: Some(false),
            ..with_path(&path)
        };
        assert!(!run(&s, &no_env).unwrap().accept_invalid_certs);
    }

    #[test]
    fn proxy_url_is_a_default_for_the_kubeconfig() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "proxied",
            "current-context: x\nclusters:\n- name: c\n  cluster:\n    server: https://c.example\n    proxy-url: http://kubeconfig-proxy:3128\n- name: d\n  cluster:\n    server: https://d.example\ncontexts:\n- name: x\n  context:\n    cluster: c\n- name: y\n  context:\n    cluster: d\n",
        );
        let s = KubeSettings {
            proxy_url: Some("http://attr-proxy:3128".into()),
            ..with_path(&path)
        };
        let config = run(&s, &no_env).unwrap();
        assert_eq!(
            config.proxy_url.map(|u| u.to_string()).as_deref(),
            Some("http://kubeconfig-proxy:3128/")
        );
        let s = KubeSettings {
            config_context: Some("y".into()),
            ..s
        };
        let config = run(&s, &no_env).unwrap();
        assert_eq!(
            config.proxy_url.map(|u| u.to_string()).as_deref(),
            Some("http://attr-proxy:3128/")
        );
    }

    #[test]
    fn invalid_proxy_urls() {
        for (proxy, needle) in [
            ("socks5://p.example:1080", "SOCKS5"),
            ("ftp://p.example", "scheme"),
            ("p.example:3128", "scheme"),
            ("http://user:hunter2@", "host name"),
        ] {
            let s = KubeSettings {
                host: Some("https://h.example".into()),
                proxy_url: Some(proxy.into()),
                ..KubeSettings::default()
            };
            let e = err(&s, &no_env);
            assert!(
                matches!(e, ConfigError::InvalidProxyUrl { .. }),
                "{proxy}: {e}"
            );
            assert_eq!(attribute_of(&e), Some("proxy_url"));
            let msg = e.to_string();
            assert!(
                msg.contains(needle) && msg.contains("KUBE_PROXY_URL"),
                "{msg}"
            );
            assert!(!msg.contains("hunter2"), "{msg}");
        }
    }

    #[test]
    fn config_paths_are_merged_first_wins() {
        let dir = tempfile::tempdir().unwrap();
        let first = write(
            dir.path(),
            "a",
            "current-context: a\nclusters:\n- name: shared\n  cluster:\n    server: https://from-a.example\ncontexts:\n- name: a\n  context:\n    cluster: shared\n",
        );
        let second = write(
            dir.path(),
            "b",
            "current-context: b\nclusters:\n- name: shared\n  cluster:\n    server: https://from-b.example\n- name: only-b\n  cluster:\n    server: https://only-b.example\ncontexts:\n- name: b\n  context:\n    cluster: only-b\n",
        );
        let missing = dir.path().join("missing").to_string_lossy().into_owned();
        let s = KubeSettings {
            config_paths: vec![first.clone(), missing.clone(), second.clone()],
            ..KubeSettings::default()
        };
        let config = run(&s, &no_env).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://from-a.example/");
        let s = KubeSettings {
            config_context: Some("b".into()),
            ..s
        };
        assert_eq!(
            run(&s, &no_env).unwrap().cluster_url.to_string(),
            "https://only-b.example/"
        );
        // Order matters.
        let s = KubeSettings {
            config_paths: vec![second.clone(), first.clone()],
            config_context: Some("a".into()),
            ..KubeSettings::default()
        };
        assert_eq!(
            run(&s, &no_env).unwrap().cluster_url.to_string(),
            "https://from-b.example/"
        );
        // The same through KUBE_CONFIG_PATHS.
        let list = std::env::join_paths([&first, &second]).unwrap();
        let env = env_of(&[(ENV_CONFIG_PATHS, list.to_str().unwrap()), (ENV_CTX, "b")]);
        assert_eq!(
            run(&KubeSettings::default(), &env)
                .unwrap()
                .cluster_url
                .to_string(),
            "https://only-b.example/"
        );
    }

    #[test]
    fn missing_kubeconfig_files() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing").to_string_lossy().into_owned();
        let e = err(&with_path(&missing), &no_env);
        assert!(matches!(e, ConfigError::KubeconfigNotFound { .. }), "{e}");
        assert_eq!(attribute_of(&e), Some("config_path"));
        assert!(e.to_string().contains("KUBE_CONFIG_PATH"));
        // A single entry in config_paths must exist too (client-go ExplicitPath).
        let s = KubeSettings {
            config_paths: vec![missing.clone()],
            ..KubeSettings::default()
        };
        let e = err(&s, &no_env);
        assert!(matches!(e, ConfigError::KubeconfigNotFound { .. }), "{e}");
        assert_eq!(attribute_of(&e), Some("config_paths"));
        let s = KubeSettings {
            config_paths: vec![missing.clone(), format!("{missing}-2")],
            ..KubeSettings::default()
        };
        let e = err(&s, &no_env);
        assert!(matches!(e, ConfigError::NoKubeconfigFound { .. }), "{e}");
        assert_eq!(attribute_of(&e), Some("config_paths"));
    }

    #[test]
    fn config_path_and_config_paths_conflict() {
        let s = KubeSettings {
            config_path: Some("/a".into()),
            config_paths: vec!["/b".into()],
            ..KubeSettings::default()
        };
        let e = err(&s, &no_env);
        assert!(matches!(e, ConfigError::ConflictingConfigPaths));
        assert_eq!(attribute_of(&e), Some("config_paths"));
        assert!(e.to_string().contains("`config_path`"));
    }

    #[test]
    fn tilde_is_expanded_with_home() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".kube")).unwrap();
        two_context_kubeconfig(&dir.path().join(".kube"));
        let env = env_of(&[("HOME", dir.path().to_str().unwrap())]);
        let config = run(&with_path("~/.kube/config"), &env).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://one.example:6443/");
        let e = err(&with_path("~someone/.kube/config"), &env);
        assert!(matches!(e, ConfigError::PathExpansion { .. }), "{e}");
        let e = err(&with_path("~/.kube/config"), &no_env);
        assert!(e.to_string().contains("HOME"), "{e}");
    }

    #[test]
    fn unreadable_kubeconfig_does_not_leak_its_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "broken",
            "users:\n- name: u\n  user:\n    token: super-secret-token-value\n  - : [\n",
        );
        let e = err(&with_path(&path), &no_env);
        assert!(matches!(e, ConfigError::KubeconfigUnreadable { .. }), "{e}");
        assert_eq!(attribute_of(&e), Some("config_path"));
        let msg = e.to_string();
        assert!(msg.contains(&path), "{msg}");
        assert!(!msg.contains("super-secret"), "{msg}");
        assert!(!format!("{e:?}").contains("super-secret"));

        let e = err(&with_path(dir.path().to_str().unwrap()), &no_env);
        assert!(matches!(e, ConfigError::KubeconfigUnreadable { .. }), "{e}");
    }

    #[test]
    fn kubeconfig_env_is_the_last_file_fallback() {
        let dir = tempfile::tempdir().unwrap();
        let path = two_context_kubeconfig(dir.path());
        let env = env_of(&[(ENV_KUBECONFIG, &path), (ENV_CTX, "ctx2")]);
        let config = run(&KubeSettings::default(), &env).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://two.example:6443/");
        // KUBE_CONFIG_PATH beats KUBECONFIG.
        let other = write(
            dir.path(),
            "other",
            "current-context: o\nclusters:\n- name: o\n  cluster:\n    server: https://other.example\ncontexts:\n- name: o\n  context:\n    cluster: o\n",
        );
        let env = env_of(&[(ENV_KUBECONFIG, &path), (ENV_CONFIG_PATH, &other)]);
        assert_eq!(
            run(&KubeSettings::default(), &env)
                .unwrap()
                .cluster_url
                .to_string(),
            "https://other.example/"
        );
        let missing = dir.path().join("missing").to_string_lossy().into_owned();
        let e = err(
            &KubeSettings::default(),
            &env_of(&[(ENV_KUBECONFIG, &missing)]),
        );
        assert!(matches!(e, ConfigError::NoKubeconfigFound { .. }), "{e}");
        assert_eq!(attribute_of(&e), None);
        assert!(e.to_string().contains("KUBECONFIG"));
    }

    // ---------- in-cluster ----------

    fn service_account_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("token"), "sa-token").unwrap();
        std::fs::write(dir.path().join("ca.crt"), &pki().ca_pem).unwrap();
        std::fs::write(dir.path().join("namespace"), "sveltos-system\n").unwrap();
        dir
    }

    #[test]
    fn in_cluster_service_account() {
        let sa = service_account_dir();
        let env = env_of(&[(ENV_SERVICE_HOST, "10.96.0.1"), (ENV_SERVICE_PORT, "443")]);
        let config = resolve_with(&KubeSettings::default(), &env, sa.path()).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://10.96.0.1/");
        assert_eq!(config.root_cert, Some(vec![pki().ca_der.clone()]));
        assert_eq!(config.default_namespace, "sveltos-system");
        let token_file = sa.path().join("token").to_string_lossy().into_owned();
        assert_eq!(
            config.auth_info.token_file.as_deref(),
            Some(token_file.as_str())
        );

        let env = env_of(&[(ENV_SERVICE_HOST, "fd00::1"), (ENV_SERVICE_PORT, "6443")]);
        let config = resolve_with(&KubeSettings::default(), &env, sa.path()).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://[fd00::1]:6443/");

        // An explicit token replaces the service-account token.
        let s = KubeSettings {
            token: Some("attr-token".into()),
            ..KubeSettings::default()
        };
        let config = resolve_with(&s, &env, sa.path()).unwrap();
        assert_eq!(token_of(&config).as_deref(), Some("attr-token"));
        assert_eq!(config.auth_info.token_file, None);
    }

    #[test]
    fn in_cluster_needs_env_and_token_and_loses_to_kubeconfig() {
        let sa = service_account_dir();
        let e = resolve_with(
            &KubeSettings::default(),
            &env_of(&[(ENV_SERVICE_HOST, "10.96.0.1")]),
            sa.path(),
        )
        .unwrap_err();
        assert!(matches!(e, ConfigError::NothingConfigured), "{e}");
        let empty = tempfile::tempdir().unwrap();
        let env = env_of(&[(ENV_SERVICE_HOST, "10.96.0.1"), (ENV_SERVICE_PORT, "443")]);
        let e = resolve_with(&KubeSettings::default(), &env, empty.path()).unwrap_err();
        assert!(matches!(e, ConfigError::NothingConfigured), "{e}");

        let dir = tempfile::tempdir().unwrap();
        let path = two_context_kubeconfig(dir.path());
        let env = env_of(&[
            (ENV_SERVICE_HOST, "10.96.0.1"),
            (ENV_SERVICE_PORT, "443"),
            (ENV_KUBECONFIG, &path),
        ]);
        let config = resolve_with(&KubeSettings::default(), &env, sa.path()).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://one.example:6443/");

        let env = env_of(&[(ENV_SERVICE_HOST, "10.96.0.1"), (ENV_SERVICE_PORT, "https")]);
        let e = resolve_with(&KubeSettings::default(), &env, sa.path()).unwrap_err();
        assert!(matches!(e, ConfigError::InCluster { .. }), "{e}");
        assert!(e.to_string().contains("KUBERNETES_SERVICE_PORT"));
    }

    // ---------- nothing / partial configuration ----------

    #[test]
    fn nothing_configured_is_an_explicit_error() {
        let e = err(&KubeSettings::default(), &no_env);
        assert!(matches!(e, ConfigError::NothingConfigured));
        assert_eq!(attribute_of(&e), None);
        let msg = e.to_string();
        for needle in [
            "config_path",
            "KUBE_CONFIG_PATHS",
            "`host`",
            "KUBECONFIG",
            "in",
            "exec",
        ] {
            assert!(msg.contains(needle), "{needle} missing from: {msg}");
        }
        // Context selection alone does not configure a connection.
        let s = KubeSettings {
            config_context: Some("ctx".into()),
            ..KubeSettings::default()
        };
        assert!(matches!(err(&s, &no_env), ConfigError::NothingConfigured));
    }

    #[test]
    fn credentials_without_host() {
        let s = KubeSettings {
            token: Some("lonely-token".into()),
            ..KubeSettings::default()
        };
        let e = err(&s, &no_env);
        assert!(matches!(e, ConfigError::MissingHost), "{e}");
        assert_eq!(attribute_of(&e), Some("host"));
        assert!(e.to_string().contains("KUBE_HOST"));
        assert!(!e.to_string().contains("lonely-token"));
    }

    // ---------- exec ----------

    fn exec_block() -> ExecSettings {
        ExecSettings {
            api_version: "client.authentication.k8s.io/v1beta1".into(),
            command: "aws".into(),
            args: vec![
                "eks".into(),
                "get-token".into(),
                "--cluster-name".into(),
                "c".into(),
            ],
            env: BTreeMap::from([
                ("AWS_PROFILE".to_owned(), "prod".to_owned()),
                ("AWS_REGION".to_owned(), "eu-west-1".to_owned()),
            ]),
        }
    }

    #[test]
    fn exec_block_is_mapped() {
        let s = KubeSettings {
            host: Some("https://eks.example".into()),
            cluster_ca_certificate: Some(pki().ca_pem.clone()),
            exec: Some(exec_block()),
            ..KubeSettings::default()
        };
        let config = run(&s, &no_env).unwrap();
        let exec = config.auth_info.exec.clone().expect("exec config");
        assert_eq!(
            exec.api_version.as_deref(),
            Some("client.authentication.k8s.io/v1beta1")
        );
        assert_eq!(exec.command.as_deref(), Some("aws"));
        assert_eq!(
            exec.args,
            Some(vec![
                "eks".into(),
                "get-token".into(),
                "--cluster-name".into(),
                "c".into()
            ])
        );
        let env: Vec<(String, String)> = exec
            .env
            .unwrap()
            .into_iter()
            .map(|m| (m["name"].clone(), m["value"].clone()))
            .collect();
        assert_eq!(
            env,
            vec![
                ("AWS_PROFILE".to_owned(), "prod".to_owned()),
                ("AWS_REGION".to_owned(), "eu-west-1".to_owned())
            ]
        );
        assert_eq!(exec.interactive_mode, Some(ExecInteractiveMode::Never));
        assert!(!exec.provide_cluster_info);
        assert_eq!(token_of(&config), None);

        let minimal = ExecSettings {
            args: vec![],
            env: BTreeMap::new(),
            ..exec_block()
        };
        let s = KubeSettings {
            exec: Some(minimal),
            ..s
        };
        let exec = run(&s, &no_env).unwrap().auth_info.exec.unwrap();
        assert_eq!(exec.args, None);
        assert_eq!(exec.env, None);
    }

    #[test]
    fn exec_replaces_kubeconfig_credentials() {
        let dir = tempfile::tempdir().unwrap();
        let path = two_context_kubeconfig(dir.path());
        let s = KubeSettings {
            exec: Some(exec_block()),
            ..with_path(&path)
        };
        let config = run(&s, &no_env).unwrap();
        assert_eq!(token_of(&config), None);
        assert_eq!(
            config.auth_info.exec.unwrap().command.as_deref(),
            Some("aws")
        );
    }

    #[test]
    fn exec_requires_api_version_and_command() {
        for (block, field) in [
            (
                ExecSettings {
                    command: " ".into(),
                    ..exec_block()
                },
                "exec.command",
            ),
            (
                ExecSettings {
                    api_version: String::new(),
                    ..exec_block()
                },
                "exec.api_version",
            ),
        ] {
            let s = KubeSettings {
                host: Some("https://h.example".into()),
                exec: Some(block),
                ..KubeSettings::default()
            };
            let e = err(&s, &no_env);
            assert!(matches!(e, ConfigError::ExecMissingField { .. }), "{e}");
            assert_eq!(attribute_of(&e), Some(field));
            assert!(e.to_string().contains(&format!("`{field}`")), "{e}");
        }
    }

    // ---------- validation of PEM, token, booleans ----------

    fn host_with(f: impl FnOnce(&mut KubeSettings)) -> KubeSettings {
        let mut s = KubeSettings {
            host: Some("https://h.example".into()),
            ..KubeSettings::default()
        };
        f(&mut s);
        s
    }

    /// The base64 lines of a PEM text, i.e. the secret material.
    fn pem_body_lines(pem: &str) -> Vec<&str> {
        pem.lines()
            .filter(|l| !l.starts_with("-----") && l.len() > 8)
            .collect()
    }

    fn assert_no_secret(e: &ConfigError, secret_pem: &str) {
        let shown = format!("{e} {e:?}");
        for line in pem_body_lines(secret_pem) {
            assert!(!shown.contains(line), "error leaks key material: {shown}");
        }
    }

    #[test]
    fn malformed_ca_certificates() {
        let ca = &pki().ca_pem;
        let cases: Vec<(String, &str)> = vec![
            ("not a certificate".into(), "no PEM block"),
            (b64(ca), "base64-encoded"),
            ("/home/me/.kube/ca.crt".into(), "file path"),
            (pki().client_key_pem.clone(), "no CERTIFICATE block"),
            (ca.replace("-----END CERTIFICATE-----", ""), "no END line"),
            (
                "-----BEGIN CERTIFICATE-----\n!!!notbase64!!!\n-----END CERTIFICATE-----\n".into(),
                "not valid base64",
            ),
            (
                "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n".into(),
                "not a valid X.509",
            ),
        ];
        for (value, needle) in cases {
            let s = host_with(|s| s.cluster_ca_certificate = Some(value.clone()));
            let e = err(&s, &no_env);
            assert!(matches!(e, ConfigError::InvalidPem { .. }), "{needle}: {e}");
            assert_eq!(attribute_of(&e), Some("cluster_ca_certificate"));
            let msg = e.to_string();
            assert!(msg.contains(needle), "{needle}: {msg}");
            assert!(msg.contains("KUBE_CLUSTER_CA_CERT_DATA"), "{msg}");
            assert_no_secret(&e, &pki().client_key_pem);
        }
    }

    #[test]
    fn malformed_client_certificate_and_key() {
        let s = host_with(|s| {
            s.client_certificate = Some("garbage".into());
            s.client_key = Some(pki().client_key_pem.clone());
        });
        let e = err(&s, &no_env);
        assert_eq!(attribute_of(&e), Some("client_certificate"));
        assert!(e.to_string().contains("KUBE_CLIENT_CERT_DATA"));

        // A key whose body is damaged: the error must not echo any of it.
        let key = &pki().client_key_pem;
        let damaged = key.replacen("\n", "\n%%%", 1);
        let encrypted = key.replace("PRIVATE KEY", "ENCRYPTED PRIVATE KEY");
        let doubled = format!("{key}{key}");
        let unsupported = key.replace("PRIVATE KEY", "DSA PRIVATE KEY");
        for (value, needle) in [
            (damaged, "not valid base64"),
            (encrypted, "encrypted"),
            (doubled, "exactly one"),
            (unsupported, "unsupported key type"),
            (pki().client_cert_pem.clone(), "no PRIVATE KEY block"),
            (b64(key), "base64-encoded"),
        ] {
            let s = host_with(|s| {
                s.client_certificate = Some(pki().client_cert_pem.clone());
                s.client_key = Some(value.clone());
            });
            let e = err(&s, &no_env);
            assert!(matches!(e, ConfigError::InvalidPem { .. }), "{needle}: {e}");
            assert_eq!(attribute_of(&e), Some("client_key"));
            let msg = e.to_string();
            assert!(
                msg.contains(needle) && msg.contains("KUBE_CLIENT_KEY_DATA"),
                "{msg}"
            );
            assert_no_secret(&e, key);
        }
    }

    #[test]
    fn client_certificate_and_key_come_in_pairs() {
        let s = host_with(|s| s.client_certificate = Some(pki().client_cert_pem.clone()));
        let e = err(&s, &no_env);
        assert!(matches!(e, ConfigError::ClientKeyMissing { .. }), "{e}");
        assert_eq!(attribute_of(&e), Some("client_key"));
        let s = host_with(|s| s.client_key = Some(pki().client_key_pem.clone()));
        let e = err(&s, &no_env);
        assert!(
            matches!(e, ConfigError::ClientCertificateMissing { .. }),
            "{e}"
        );
        assert_eq!(attribute_of(&e), Some("client_certificate"));
        assert_no_secret(&e, &pki().client_key_pem);
    }

    #[test]
    fn insecure_with_ca_is_rejected() {
        let s = host_with(|s| {
            s.insecure = Some(true);
            s.cluster_ca_certificate = Some(pki().ca_pem.clone());
        });
        let e = err(&s, &no_env);
        assert!(matches!(e, ConfigError::InsecureWithCa));
        assert_eq!(attribute_of(&e), Some("insecure"));
    }

    #[test]
    fn invalid_kube_insecure() {
        let e = err(&host_with(|_| {}), &env_of(&[(ENV_INSECURE, "maybe")]));
        assert!(matches!(e, ConfigError::InvalidBool { .. }), "{e}");
        assert_eq!(attribute_of(&e), Some("insecure"));
        assert!(e.to_string().contains("KUBE_INSECURE") && e.to_string().contains("maybe"));
        // Irrelevant when the attribute is set.
        let s = host_with(|s| s.insecure = Some(true));
        assert!(
            run(&s, &env_of(&[(ENV_INSECURE, "maybe")]))
                .unwrap()
                .accept_invalid_certs
        );
    }

    #[test]
    fn invalid_tokens_are_not_echoed() {
        for (token, needle) in [
            ("Bearer abc.def-secret", "Bearer"),
            ("abc\ndef-secret", "single-line"),
            ("abcé-secret", "non-ASCII"),
        ] {
            let s = host_with(|s| s.token = Some(token.into()));
            let e = err(&s, &no_env);
            assert!(matches!(e, ConfigError::InvalidToken { .. }), "{e}");
            assert_eq!(attribute_of(&e), Some("token"));
            let shown = format!("{e} {e:?}");
            assert!(
                shown.contains(needle) && shown.contains("KUBE_TOKEN"),
                "{shown}"
            );
            assert!(!shown.contains("secret"), "{shown}");
        }
        // Surrounding whitespace (e.g. from file()) is trimmed.
        let s = host_with(|s| s.token = Some("  tok-123\n".into()));
        assert_eq!(
            token_of(&run(&s, &no_env).unwrap()).as_deref(),
            Some("tok-123")
        );
    }

    #[test]
    fn pem_text_around_blocks_and_crlf_is_accepted() {
        let ca = format!(
            "subject=CN = test\r\n{}",
            pki().ca_pem.replace('\n', "\r\n")
        );
        let bundle = format!("{ca}\n{}", pki().client_cert_pem);
        let s = host_with(|s| s.cluster_ca_certificate = Some(bundle));
        let config = run(&s, &no_env).unwrap();
        assert_eq!(config.root_cert.unwrap().len(), 2);
    }

    // ---------- Debug ----------

    #[test]
    fn debug_redacts_secrets() {
        let s = KubeSettings {
            host: Some("https://visible.example".into()),
            token: Some("token-value-xyz".into()),
            client_key: Some(pki().client_key_pem.clone()),
            client_certificate: Some("cert-is-public".into()),
            exec: Some(ExecSettings {
                env: BTreeMap::from([("AWS_SECRET_ACCESS_KEY".to_owned(), "s3cr3t".to_owned())]),
                ..exec_block()
            }),
            ..KubeSettings::default()
        };
        let shown = format!("{s:?} {s:#?}");
        assert!(shown.contains("https://visible.example"));
        assert!(shown.contains("cert-is-public"));
        assert!(shown.contains("AWS_SECRET_ACCESS_KEY"));
        assert!(shown.contains(REDACTED));
        assert!(!shown.contains("token-value-xyz"));
        assert!(!shown.contains("s3cr3t"));
        for line in pem_body_lines(&pki().client_key_pem) {
            assert!(!shown.contains(line));
        }
        assert!(!format!("{:?}", KubeSettings::default()).contains(REDACTED));
    }

    #[test]
    fn resolve_uses_the_given_env_only() {
        // The public entry point works the same with an injected environment.
        let env = env_of(&[(ENV_HOST, "https://pub.example"), (ENV_TOKEN, "t")]);
        let config = resolve(&KubeSettings::default(), &env).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://pub.example/");
    }
}
