//! From [`KubeSettings`] to a [`kube::Config`]: kubeconfig loading and selection, the in-cluster service
//! account, and the explicit attributes applied on top (client-go's override rules).

use std::collections::HashMap;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use kube::config::{
    AuthInfo, Cluster, Config, Context, ExecConfig, ExecInteractiveMode, Kubeconfig,
    KubeconfigError, NamedAuthInfo, NamedCluster, NamedContext,
};

use super::errors::{ConfigError, PathSource};
use super::pem::{check_certificates, check_private_key};
use super::settings::*;

pub(crate) const ENV_SERVICE_HOST: &str = "KUBERNETES_SERVICE_HOST";
pub(crate) const ENV_SERVICE_PORT: &str = "KUBERNETES_SERVICE_PORT";
pub(crate) const IN_CLUSTER_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// Name of the single cluster/user/context of the kubeconfig handed to kube.
pub(crate) const MERGED_NAME: &str = "terraform-provider-sveltos";

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
pub(crate) struct Selected {
    cluster: Cluster,
    user: AuthInfo,
    namespace: Option<String>,
    /// Human description of where `cluster`/`user` came from, for errors.
    origin: String,
}

pub(crate) fn resolve_with(
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
            source: other,
        },
    })
}

/// The explicit (attribute or `KUBE_*`) settings, validated, ready to be
/// applied on top of the kubeconfig / in-cluster base.
pub(crate) struct Overrides {
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

pub(crate) fn exec_config(exec: &ExecSettings) -> Result<ExecConfig, ConfigError> {
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
pub(crate) fn redact_userinfo(url: &str) -> String {
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
pub(crate) fn host_part(after_scheme: &str) -> &str {
    let authority = after_scheme.split(['/', '?', '#']).next().unwrap_or("");
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
}

pub(crate) fn normalize_host(host: &str, default_tls: bool) -> Result<String, ConfigError> {
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

pub(crate) fn check_proxy_url(proxy: &str) -> Result<String, ConfigError> {
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

pub(crate) fn check_token(token: &str) -> Result<String, ConfigError> {
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

/// Expands a leading `~` like go-homedir's `Expand` (`~user` is an error).
pub(crate) fn expand_home(
    path: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
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

pub(crate) fn kubeconfig_read_reason(err: &KubeconfigError) -> String {
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
pub(crate) fn load_kubeconfigs(
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
                .map_err(|source| ConfigError::KubeconfigMerge { origin, source })?,
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
pub(crate) fn select_in_kubeconfig(
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
pub(crate) fn in_cluster(
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

pub(crate) fn select_base(
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
