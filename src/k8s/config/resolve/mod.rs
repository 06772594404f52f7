//! From [`KubeSettings`] to a [`kube::Config`]: kubeconfig loading and selection, the in-cluster service
//! account, and the explicit attributes applied on top (client-go's override rules).

use std::path::Path;

use kube::config::{
    Config, Context, Kubeconfig, KubeconfigError, NamedAuthInfo, NamedCluster, NamedContext,
};

use super::errors::{ConfigError, PathSource};
use super::settings::*;

mod in_cluster;
mod kubeconfig;
mod overrides;
mod selected;
mod values;

pub(crate) use in_cluster::*;
pub(crate) use kubeconfig::*;
pub(crate) use overrides::*;
pub(crate) use selected::Selected;

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

/// [`resolve`] with the service-account directory given (tests use their own).
pub(crate) fn resolve_with(
    settings: &KubeSettings,
    env: &dyn Fn(&str) -> Option<String>,
    in_cluster_dir: &Path,
) -> Result<Config, ConfigError> {
    let explicit = settings.clone().normalized();
    check_explicit(&explicit, env)?;
    let settings = explicit.with_env(env).normalized();
    let overrides = Overrides::parse(&settings)?;

    let mut selected = select_base(&settings, &overrides, env, in_cluster_dir)?;
    overrides.apply(&mut selected);
    check_selected(&selected)?;

    tracing::debug!(
        origin = %selected.origin,
        server = selected.cluster.server.as_deref().unwrap_or_default(),
        "resolved the Kubernetes connection settings"
    );
    let origin = selected.origin.clone();
    Config::try_from(merged_kubeconfig(selected)).map_err(|err| match err {
        KubeconfigError::ParseClusterUrl(e) if overrides.host.is_some() => {
            ConfigError::InvalidHost {
                value: overrides.host.clone().unwrap_or_default(),
                reason: e.to_string(),
            }
        }
        other => ConfigError::Kube {
            origin,
            source: other,
        },
    })
}

/// Refuses what the explicit settings (before the environment fills them) get wrong on their own: both
/// `config_path` and `config_paths`, or a `KUBE_INSECURE` that is not a Go boolean.
fn check_explicit(
    explicit: &KubeSettings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), ConfigError> {
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
    Ok(())
}

/// Refuses a selection without a server, or with a client certificate and no key (or a key and no certificate).
fn check_selected(selected: &Selected) -> Result<(), ConfigError> {
    if selected.cluster.server.as_deref().is_none_or(str::is_empty) {
        return Err(ConfigError::MissingServer {
            origin: selected.origin.clone(),
        });
    }
    let user = &selected.user;
    let has_cert = user.client_certificate.is_some() || user.client_certificate_data.is_some();
    let has_key = user.client_key.is_some() || user.client_key_data.is_some();
    match (has_cert, has_key) {
        (true, false) => Err(ConfigError::ClientKeyMissing {
            origin: selected.origin.clone(),
        }),
        (false, true) => Err(ConfigError::ClientCertificateMissing {
            origin: selected.origin.clone(),
        }),
        _ => Ok(()),
    }
}

/// The kubeconfig handed to kube: the selected cluster and user as its one context, [`MERGED_NAME`].
fn merged_kubeconfig(selected: Selected) -> Kubeconfig {
    Kubeconfig {
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
    }
}

/// The base the explicit settings are applied on: a kubeconfig's context, or the in-cluster service account.
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
