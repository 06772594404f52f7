//! Why connection settings cannot produce a client: [`ConfigError`], and the attribute each error concerns.

use std::fmt;

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
/// a token or a key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// Both `config_path` and `config_paths` are set.
    #[error(
        "`config_path` and `config_paths` are both set; set only one of them (a single file in `config_path`, or a list in `config_paths`)"
    )]
    ConflictingConfigPaths,

    /// A leading `~` in a kubeconfig path cannot be expanded.
    #[error("cannot expand `~` in {origin} entry {path:?}: {reason}")]
    PathExpansion {
        /// Where the setting came from.
        origin: PathSource,
        /// The path as configured.
        path: String,
        /// Why (never quoting credentials).
        reason: String,
    },

    /// The single kubeconfig file named does not exist.
    #[error(
        "kubeconfig file {path:?} from {origin} does not exist; fix the path or remove the setting"
    )]
    KubeconfigNotFound {
        /// Where the setting came from.
        origin: PathSource,
        /// The path as configured.
        path: String,
    },

    /// None of the listed kubeconfig files exists.
    #[error("none of the kubeconfig files listed in {origin} exist ({}); fix the paths", .paths.join(", "))]
    NoKubeconfigFound {
        /// Where the setting came from.
        origin: PathSource,
        /// The paths tried.
        paths: Vec<String>,
    },

    /// A kubeconfig file cannot be read or parsed (the reason never quotes the file).
    #[error("cannot read kubeconfig file {path:?} from {origin}: {reason}")]
    KubeconfigUnreadable {
        /// Where the setting came from.
        origin: PathSource,
        /// The path as configured.
        path: String,
        /// Why (never quoting credentials).
        reason: String,
    },

    /// The kubeconfig files cannot be merged.
    #[error("cannot merge the kubeconfig files from {origin}: {source}")]
    KubeconfigMerge {
        /// Where the files came from.
        origin: PathSource,
        /// kube's merge error.
        #[source]
        source: kube::config::KubeconfigError,
    },

    /// The kubeconfig has no current context and none is configured.
    #[error(
        "the kubeconfig from {origin} ({}) has no `current-context`; set `config_context` (or KUBE_CTX) to one of its contexts, or set `host`", .files.join(", ")
    )]
    NoCurrentContext {
        /// Where the setting came from.
        origin: PathSource,
        /// The kubeconfig files loaded.
        files: Vec<String>,
    },

    /// The context to use is not in the kubeconfig.
    #[error(
        "context {context:?} ({}) is not defined in the kubeconfig ({}); available contexts: [{}]; set `config_context` (or KUBE_CTX) to one of them",
        if *.explicit { "from `config_context`/KUBE_CTX" } else { "the kubeconfig's current-context" },
        .files.join(", "),
        .available.join(", ")
    )]
    ContextNotFound {
        /// The context name.
        context: String,
        /// Whether the name was configured (else it came from the kubeconfig).
        explicit: bool,
        /// The names the kubeconfig defines.
        available: Vec<String>,
        /// The kubeconfig files loaded.
        files: Vec<String>,
    },

    /// The cluster to use is not in the kubeconfig.
    #[error(
        "cluster {cluster:?} ({}) is not defined in the kubeconfig ({}); available clusters: [{}]; {}",
        if *.explicit { "from `config_context_cluster`/KUBE_CTX_CLUSTER" } else { "referenced by the selected context" },
        .files.join(", "),
        .available.join(", "),
        if *.explicit { "set `config_context_cluster` to one of them" } else { "fix the kubeconfig, or set `config_context_cluster` or `host`" }
    )]
    ClusterNotFound {
        /// The cluster name.
        cluster: String,
        /// Whether the name was configured (else it came from the kubeconfig).
        explicit: bool,
        /// The names the kubeconfig defines.
        available: Vec<String>,
        /// The kubeconfig files loaded.
        files: Vec<String>,
    },

    /// The user named by `config_context_auth_info` is not in the kubeconfig.
    #[error(
        "user {user:?} from `config_context_auth_info` (or KUBE_CTX_AUTH_INFO) is not defined in the kubeconfig ({}); available users: [{}]",
        .files.join(", "),
        .available.join(", ")
    )]
    AuthInfoNotFound {
        /// The user name.
        user: String,
        /// The names the kubeconfig defines.
        available: Vec<String>,
        /// The kubeconfig files loaded.
        files: Vec<String>,
    },

    /// The selected configuration names no API server.
    #[error("{origin} does not name an API server; set `host` (or KUBE_HOST)")]
    MissingServer {
        /// Where the setting came from.
        origin: String,
    },

    /// Credentials are configured but no API server (`host`) and no kubeconfig to take it from.
    #[error(
        "`host` (or KUBE_HOST) is not set, and there is no kubeconfig (`config_path`/`config_paths`, KUBE_CONFIG_PATH(S), KUBECONFIG) nor an in-cluster service account to take it from; set `host` to the API server URL"
    )]
    MissingHost,

    /// No connection is configured at all (there is never a localhost default).
    #[error(
        "no Kubernetes connection is configured. Set one of: `config_path` (or KUBE_CONFIG_PATH) / `config_paths` (or KUBE_CONFIG_PATHS) to kubeconfig files; `host` (or KUBE_HOST) with `cluster_ca_certificate` and credentials (`token`, `client_certificate` + `client_key`, or an `exec` block); the KUBECONFIG environment variable; or run inside a Kubernetes pod with a service account. ~/.kube/config is not read implicitly, and there is no localhost default"
    )]
    NothingConfigured,

    /// `host` is not an http(s) URL.
    #[error(
        "invalid `host` (or KUBE_HOST) {value:?}: {reason}; expected a URL such as https://api.example.com:6443"
    )]
    InvalidHost {
        /// The value (userinfo redacted).
        value: String,
        /// Why (never quoting credentials).
        reason: String,
    },

    /// `proxy_url` is not an http(s) URL.
    #[error("invalid `proxy_url` (or KUBE_PROXY_URL) {value:?}: {reason}")]
    InvalidProxyUrl {
        /// The value (userinfo redacted).
        value: String,
        /// Why (never quoting credentials).
        reason: String,
    },

    /// A boolean environment variable (`KUBE_INSECURE`) does not parse.
    #[error("invalid boolean {value:?} in {env_var} (for `{attribute}`); use true or false")]
    InvalidBool {
        /// The attribute concerned.
        attribute: &'static str,
        /// Its environment variable.
        env_var: &'static str,
        /// The value (userinfo redacted).
        value: String,
    },

    /// A PEM attribute does not hold what it must (the reason never quotes it).
    #[error("invalid `{attribute}` (or {env_var}): {reason}")]
    InvalidPem {
        /// The attribute concerned.
        attribute: &'static str,
        /// Its environment variable.
        env_var: &'static str,
        /// Why (never quoting credentials).
        reason: String,
    },

    /// `token` is not a bare single-line bearer token (the reason never quotes it).
    #[error("invalid `token` (or KUBE_TOKEN): {reason}")]
    InvalidToken {
        /// Why (never quoting credentials).
        reason: String,
    },

    /// `insecure = true` and `cluster_ca_certificate` are both set.
    #[error(
        "`insecure` = true cannot be combined with `cluster_ca_certificate`; remove one of them (or KUBE_INSECURE / KUBE_CLUSTER_CA_CERT_DATA)"
    )]
    InsecureWithCa,

    /// A client certificate without a client key.
    #[error(
        "a client certificate is configured ({origin}) but no client key; set `client_key` (or KUBE_CLIENT_KEY_DATA) too"
    )]
    ClientKeyMissing {
        /// Where the setting came from.
        origin: String,
    },

    /// A client key without a client certificate.
    #[error(
        "a client key is configured ({origin}) but no client certificate; set `client_certificate` (or KUBE_CLIENT_CERT_DATA) too"
    )]
    ClientCertificateMissing {
        /// Where the setting came from.
        origin: String,
    },

    /// A required attribute of the `exec` block is empty.
    #[error("`{field}` is required in the `exec` block and must not be empty")]
    ExecMissingField {
        /// The `exec` attribute (dotted).
        field: &'static str,
    },

    /// The in-cluster service account configuration cannot be loaded.
    #[error("in-cluster configuration (service account) could not be loaded: {reason}")]
    InCluster {
        /// Why (never quoting credentials).
        reason: String,
    },

    /// kube rejected the resolved configuration.
    #[error("invalid Kubernetes configuration from {origin}: {source}")]
    Kube {
        /// Where the configuration came from (kubeconfig files and context, attributes, in-cluster).
        origin: String,
        /// kube's error.
        #[source]
        source: kube::config::KubeconfigError,
    },

    /// The client cannot be built from the resolved configuration (certificates or keys kube cannot load, ...).
    #[error("cannot create the Kubernetes client: {0}")]
    Client(#[source] kube::Error),
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
        | ConfigError::Kube { .. }
        | ConfigError::Client(_) => None,
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
