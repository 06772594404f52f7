//! Kubeconfig files: finding and loading them (merged as client-go merges them), and selecting a context.

use std::path::Path;

use kube::config::{AuthInfo, Cluster, Context, Kubeconfig, KubeconfigError};

use super::super::errors::{ConfigError, PathSource};
use super::super::settings::KubeSettings;
use super::selected::Selected;

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
    let (context_name, context) = select_context(&kubeconfig, &files, s)?;
    let cluster_name = s.config_context_cluster.clone().or_else(|| {
        context
            .as_ref()
            .map(|c| c.cluster.clone())
            .filter(|c| !c.is_empty())
    });
    if cluster_name.is_none() && context_name.is_none() && !has_host {
        return Err(ConfigError::NoCurrentContext { origin, files });
    }
    let cluster = select_cluster(&kubeconfig, cluster_name.as_deref(), &files, s, has_host)?;
    let user_name = s.config_context_auth_info.clone().or_else(|| {
        context
            .as_ref()
            .and_then(|c| c.user.clone())
            .filter(|u| !u.is_empty())
    });
    let user = select_user(&kubeconfig, user_name.as_deref(), &files, s)?;

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

/// The context to use, `config_context` or the current context, with its name; `(None, None)` when there is
/// neither.
fn select_context(
    kubeconfig: &Kubeconfig,
    files: &[String],
    s: &KubeSettings,
) -> Result<(Option<String>, Option<Context>), ConfigError> {
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
                    files: files.to_vec(),
                })?,
        ),
    };
    Ok((context_name, context))
}

/// The cluster named `name` (by `config_context_cluster` or the context); none named: an empty one.
fn select_cluster(
    kubeconfig: &Kubeconfig,
    name: Option<&str>,
    files: &[String],
    s: &KubeSettings,
    has_host: bool,
) -> Result<Cluster, ConfigError> {
    let Some(name) = name else {
        return Ok(Cluster::default());
    };
    match kubeconfig.clusters.iter().find(|c| c.name == name) {
        Some(found) => Ok(found.cluster.clone().unwrap_or_default()),
        // client-go tolerates a dangling reference if `host` supplies the server.
        None if s.config_context_cluster.is_none() && has_host => Ok(Cluster::default()),
        None => Err(ConfigError::ClusterNotFound {
            cluster: name.to_string(),
            explicit: s.config_context_cluster.is_some(),
            available: kubeconfig.clusters.iter().map(|c| c.name.clone()).collect(),
            files: files.to_vec(),
        }),
    }
}

/// The user named `name` (by `config_context_auth_info` or the context); none named: no credentials.
fn select_user(
    kubeconfig: &Kubeconfig,
    name: Option<&str>,
    files: &[String],
    s: &KubeSettings,
) -> Result<AuthInfo, ConfigError> {
    let Some(name) = name else {
        return Ok(AuthInfo::default());
    };
    match kubeconfig.auth_infos.iter().find(|u| u.name == name) {
        Some(found) => Ok(found.auth_info.clone().unwrap_or_default()),
        // Like client-go and kube, a dangling user of a context means "no credentials".
        None if s.config_context_auth_info.is_none() => Ok(AuthInfo::default()),
        None => Err(ConfigError::AuthInfoNotFound {
            user: name.to_string(),
            available: kubeconfig
                .auth_infos
                .iter()
                .map(|u| u.name.clone())
                .collect(),
            files: files.to_vec(),
        }),
    }
}
