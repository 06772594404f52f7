//! The plugin's answer (a KEP-541 ExecCredential) and the static kubeconfig written from it.

use serde::Deserialize;

use super::{ExecError, shown};
use crate::api::KubeconfigCluster;

/// The `status` of an ExecCredential.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecCredentialStatus {
    /// Bearer token.
    #[serde(default)]
    pub token: Option<String>,
    /// PEM client certificate.
    #[serde(default)]
    pub client_certificate_data: Option<String>,
    /// PEM client key.
    #[serde(default)]
    pub client_key_data: Option<String>,
    /// RFC 3339 expiry.
    #[serde(default)]
    pub expiration_timestamp: Option<String>,
}

impl std::fmt::Debug for ExecCredentialStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecCredentialStatus")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field(
                "client_certificate_data",
                &self.client_certificate_data.is_some(),
            )
            .field(
                "client_key_data",
                &self.client_key_data.as_ref().map(|_| "<redacted>"),
            )
            .field("expiration_timestamp", &self.expiration_timestamp)
            .finish()
    }
}

/// Parses a plugin's stdout. Errors never quote the output.
pub fn parse_exec_credential(
    stdout: &[u8],
    expected_api_version: &str,
) -> Result<ExecCredentialStatus, ExecError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cred {
        api_version: Option<String>,
        kind: Option<String>,
        status: Option<ExecCredentialStatus>,
    }
    let cred: Cred = serde_json::from_slice(stdout).map_err(|_| ExecError::NotExecCredential)?;
    if cred.kind.as_deref() != Some("ExecCredential") {
        return Err(ExecError::WrongKind);
    }
    if cred.api_version.as_deref() != Some(expected_api_version) {
        return Err(ExecError::WrongApiVersion {
            got: shown(&cred.api_version.unwrap_or_default()),
            expected: expected_api_version.into(),
        });
    }
    let status = cred.status.ok_or(ExecError::NoStatus)?;
    let has_token = status.token.as_deref().is_some_and(|t| !t.is_empty());
    let has_cert = status.client_certificate_data.is_some() && status.client_key_data.is_some();
    if !has_token && !has_cert {
        return Err(ExecError::NoCredential);
    }
    if let Some(ts) = &status.expiration_timestamp
        && ts.parse::<jiff::Timestamp>().is_err()
    {
        return Err(ExecError::BadExpiry);
    }
    Ok(status)
}

/// A static kubeconfig for `cluster` (the profile's access provider entry) authenticated with the plugin's
/// credential, written like every kubeconfig the bridge writes (`crate::domain::kubeconfig::canonical`) and read
/// back through the same checks, so a value no reader agrees on (a control character in the server address, a CA
/// that is not base64 PEM) is that cluster's error.
pub fn static_kubeconfig(
    cluster: &KubeconfigCluster,
    cred: &ExecCredentialStatus,
) -> Result<Vec<u8>, crate::domain::kubeconfig::ConnectionError> {
    use crate::domain::kubeconfig::{Connection, KubeconfigPolicy, for_cluster};
    let mut user = Connection::default();
    if let Some(t) = cred.token.as_deref().filter(|t| !t.is_empty()) {
        user.token = Some(t.to_string());
    } else if let (Some(cert), Some(key)) = (&cred.client_certificate_data, &cred.client_key_data) {
        user.client_certificate = Some(cert.clone());
        user.client_key = Some(key.clone());
    }
    for_cluster(cluster, &user, &KubeconfigPolicy::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::exec::fixtures::*;

    #[test]
    fn exec_credential_to_kubeconfig() {
        let out = br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"canary-tok","expirationTimestamp":"2030-01-01T00:00:00Z"}}"#;
        let st = parse_exec_credential(out, "client.authentication.k8s.io/v1").unwrap();
        assert!(!format!("{st:?}").contains("canary"));
        let kc = static_kubeconfig(provider().cluster.as_ref().unwrap(), &st).unwrap();
        let doc: serde_json::Value = serde_saphyr::from_slice(&kc).unwrap();
        assert_eq!(
            doc["users"][0]["user"]["token"].as_str(),
            Some("canary-tok")
        );
        assert_eq!(
            doc["clusters"][0]["cluster"]["server"].as_str(),
            Some("https://10.0.0.1:6443")
        );
        assert_eq!(
            doc["current-context"].as_str(),
            Some(crate::domain::kubeconfig::NAME)
        );
        let facts = crate::domain::kubeconfig::inspect(&kc, &Default::default()).unwrap();
        assert_eq!(facts.servers, ["https://10.0.0.1:6443"]);
    }

    #[test]
    fn static_kubeconfig_is_one_line_of_json() {
        let token = format!(
            "eyJ{}.{}.{}",
            "a".repeat(200),
            "b".repeat(300),
            "c".repeat(100)
        );
        let st = ExecCredentialStatus {
            token: Some(token.clone()),
            ..Default::default()
        };
        let kc = static_kubeconfig(provider().cluster.as_ref().unwrap(), &st).unwrap();
        let text = String::from_utf8(kc.clone()).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        let doc: serde_json::Value = serde_saphyr::from_slice(&kc).unwrap();
        assert_eq!(
            doc["users"][0]["user"]["token"].as_str(),
            Some(token.as_str())
        );
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        let st = ExecCredentialStatus {
            client_certificate_data: Some(pem.into()),
            client_key_data: Some(pem.into()),
            ..Default::default()
        };
        let kc = static_kubeconfig(provider().cluster.as_ref().unwrap(), &st).unwrap();
        crate::domain::kubeconfig::inspect(&kc, &Default::default()).unwrap();
        let doc: serde_json::Value = serde_saphyr::from_slice(&kc).unwrap();
        let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, pem);
        assert_eq!(
            doc["users"][0]["user"]["client-key-data"].as_str(),
            Some(b64.as_str())
        );
    }

    #[test]
    fn bad_exec_output_is_rejected_without_quoting_it() {
        for out in [
            &b"not json canary"[..],
            br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}}"#,
            br#"{"apiVersion":"v1beta1","kind":"ExecCredential","status":{"token":"canary"}}"#,
            br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"canary","expirationTimestamp":"tomorrow"}}"#,
        ] {
            let e = parse_exec_credential(out, "client.authentication.k8s.io/v1").unwrap_err();
            assert!(!e.to_string().contains("canary"), "{e}");
            assert!(!format!("{e:?}").contains("canary"), "{e:?}");
        }
    }
}
