//! The explicit settings (attributes or `KUBE_*` variables), validated, applied on top of the selected base.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use kube::config::ExecConfig;

use super::super::errors::ConfigError;
use super::super::pem::{check_certificates, check_private_key};
use super::super::settings::*;
use super::{
    selected::Selected,
    values::{check_proxy_url, check_token, exec_config, normalize_host},
};

/// The explicit (attribute or `KUBE_*`) settings, validated, ready to be
/// applied on top of the kubeconfig / in-cluster base.
pub(crate) struct Overrides {
    pub(super) host: Option<String>,
    pub(super) ca_pem: Option<String>,
    pub(super) client_cert_pem: Option<String>,
    pub(super) client_key_pem: Option<String>,
    pub(super) token: Option<String>,
    pub(super) insecure: Option<bool>,
    pub(super) tls_server_name: Option<String>,
    pub(super) proxy_url: Option<String>,
    pub(super) exec: Option<ExecConfig>,
}

impl Overrides {
    pub(super) fn parse(s: &KubeSettings) -> Result<Overrides, ConfigError> {
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
        // client-go's DefaultServerURL: https when TLS certificates or keys are given.
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
    pub(super) fn has_connection_setting(&self) -> bool {
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
    pub(super) fn apply(&self, selected: &mut Selected) {
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
