//! The in-cluster service account, as client-go's `inClusterClientConfig` reads it.

use std::path::Path;

use kube::config::{AuthInfo, Cluster};

use super::super::errors::ConfigError;
use super::selected::Selected;

pub(crate) const ENV_SERVICE_HOST: &str = "KUBERNETES_SERVICE_HOST";
pub(crate) const ENV_SERVICE_PORT: &str = "KUBERNETES_SERVICE_PORT";

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
