//! Exec-plugin access providers (KEP-4322 providers file, KEP-541 ExecCredential, KEP-5339 extensions):
//! what to run for a profile, and how to turn the plugin's answer into a static kubeconfig.
//! Running the plugin is IO and lives in `crate::k8s`; everything here is pure.

use std::collections::BTreeMap;

use base64::Engine;
use serde::{Deserialize, Serialize};

use super::credentials::exec_extension;
use crate::api::{AccessProvider, KubeconfigCluster, keys};

/// The providers file: `{"providers": [{"name": ..., "execConfig": {...}}]}`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvidersFile {
    /// Configured providers.
    pub providers: Vec<ProviderEntry>,
}

/// One provider of the providers file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderEntry {
    /// Name matched against `status.accessProviders[].name`.
    pub name: String,
    /// What to run.
    pub exec_config: ExecConfig,
    /// How profile-supplied args are used (`Append` | `Ignore`, default `Ignore`).
    #[serde(default, rename = "profileSourcedCLIArgsPolicy")]
    pub profile_sourced_cli_args_policy: Option<String>,
    /// How profile-supplied env vars are used (`AppendIfNotExists` | `Replace` | `Ignore`, default `Ignore`).
    #[serde(default)]
    pub profile_sourced_env_vars_policy: Option<String>,
}

/// A kubeconfig `exec` stanza.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecConfig {
    /// ExecCredential API version, e.g. `client.authentication.k8s.io/v1`.
    pub api_version: String,
    /// Command to run.
    pub command: String,
    /// Arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: Vec<EnvVar>,
    /// Pass the cluster entry to the plugin in `KUBERNETES_EXEC_INFO`.
    #[serde(default)]
    pub provide_cluster_info: bool,
    /// Shown when the command is missing.
    #[serde(default)]
    pub install_hint: Option<String>,
    /// `Never` | `IfAvailable` | `Always` (the bridge never runs plugins interactively).
    #[serde(default)]
    pub interactive_mode: Option<String>,
}

/// A `name`/`value` environment variable.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EnvVar {
    /// Name.
    pub name: String,
    /// Value.
    pub value: String,
}

impl ProvidersFile {
    /// Parses and validates a providers file (policies must be known values; names unique).
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        let file: Self = serde_json::from_slice(bytes)
            .map_err(|e| format!("not a valid providers file: {e}"))?;
        let mut seen = std::collections::BTreeSet::new();
        for (i, p) in file.providers.iter().enumerate() {
            if !seen.insert(p.name.as_str()) {
                return Err(format!(
                    "providers[{i}]: duplicate provider name {:?}",
                    p.name
                ));
            }
            if p.exec_config.command.is_empty() {
                return Err(format!(
                    "providers[{i}] ({}): execConfig.command is empty",
                    p.name
                ));
            }
            if let Some(v) = &p.profile_sourced_cli_args_policy
                && !matches!(v.as_str(), "Append" | "Ignore")
            {
                return Err(format!(
                    "providers[{i}] ({}): unknown profileSourcedCLIArgsPolicy {v:?} (Append or Ignore)",
                    p.name
                ));
            }
            if let Some(v) = &p.profile_sourced_env_vars_policy
                && !matches!(v.as_str(), "AppendIfNotExists" | "Replace" | "Ignore")
            {
                return Err(format!(
                    "providers[{i}] ({}): unknown profileSourcedEnvVarsPolicy {v:?} (AppendIfNotExists, Replace or Ignore)",
                    p.name
                ));
            }
        }
        Ok(file)
    }

    /// The provider with this name.
    pub fn get(&self, name: &str) -> Option<&ProviderEntry> {
        self.providers.iter().find(|p| p.name == name)
    }
}

/// A fully determined plugin run.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecInvocation {
    /// Provider name.
    pub provider: String,
    /// Command.
    pub command: String,
    /// Arguments (config args, then profile args when allowed).
    pub args: Vec<String>,
    /// Environment additions, in order.
    pub env: Vec<(String, String)>,
    /// The `KUBERNETES_EXEC_INFO` value.
    pub exec_info: String,
    /// Install hint for a missing command.
    pub install_hint: Option<String>,
    /// The ExecCredential API version the plugin must answer with.
    pub api_version: String,
}

/// Builds the plugin run for a profile's access provider.
pub fn invocation(
    entry: &ProviderEntry,
    provider: &AccessProvider,
) -> Result<ExecInvocation, String> {
    let cluster = provider
        .cluster
        .as_ref()
        .ok_or_else(|| format!("access provider {} has no cluster entry", provider.name))?;
    let ext = |name: &str| {
        cluster
            .extensions
            .iter()
            .find(|e| e.name == name)
            .map(|e| &e.extension)
    };
    let mut args = entry.exec_config.args.clone();
    if entry.profile_sourced_cli_args_policy.as_deref() == Some("Append")
        && let Some(extra) = ext(keys::ADDITIONAL_ARGS_EXTENSION)
    {
        let extra: Vec<String> = serde_json::from_value(extra.clone()).map_err(|_| {
            format!(
                "extension {} must be a list of strings",
                keys::ADDITIONAL_ARGS_EXTENSION
            )
        })?;
        args.extend(extra);
    }
    let mut env: Vec<(String, String)> = entry
        .exec_config
        .env
        .iter()
        .map(|e| (e.name.clone(), e.value.clone()))
        .collect();
    let policy = entry
        .profile_sourced_env_vars_policy
        .as_deref()
        .unwrap_or("Ignore");
    if policy != "Ignore"
        && let Some(extra) = ext(keys::ADDITIONAL_ENVS_EXTENSION)
    {
        let extra: BTreeMap<String, String> =
            serde_json::from_value(extra.clone()).map_err(|_| {
                format!(
                    "extension {} must be a map of strings",
                    keys::ADDITIONAL_ENVS_EXTENSION
                )
            })?;
        for (k, v) in extra {
            match env.iter_mut().find(|(n, _)| *n == k) {
                Some(slot) if policy == "Replace" => slot.1 = v,
                Some(_) => {}
                None => env.push((k, v)),
            }
        }
    }
    let mut spec = serde_json::json!({ "interactive": false });
    if entry.exec_config.provide_cluster_info {
        let mut c = serde_json::json!({ "server": cluster.server });
        if let Some(ca) = &cluster.certificate_authority_data {
            c["certificate-authority-data"] = ca.clone().into();
        }
        if let Some(v) = &cluster.tls_server_name {
            c["tls-server-name"] = v.clone().into();
        }
        if let Some(v) = cluster.insecure_skip_tls_verify {
            c["insecure-skip-tls-verify"] = v.into();
        }
        if let Some(v) = &cluster.proxy_url {
            c["proxy-url"] = v.clone().into();
        }
        if let Some(cfg) = exec_extension(provider) {
            c["config"] = cfg.clone();
        }
        spec["cluster"] = c;
    }
    let exec_info = serde_json::json!({
        "apiVersion": entry.exec_config.api_version,
        "kind": "ExecCredential",
        "spec": spec,
    })
    .to_string();
    Ok(ExecInvocation {
        provider: entry.name.clone(),
        command: entry.exec_config.command.clone(),
        args,
        env,
        exec_info,
        install_hint: entry.exec_config.install_hint.clone(),
        api_version: entry.exec_config.api_version.clone(),
    })
}

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
) -> Result<ExecCredentialStatus, String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cred {
        api_version: Option<String>,
        kind: Option<String>,
        status: Option<ExecCredentialStatus>,
    }
    let cred: Cred = serde_json::from_slice(stdout)
        .map_err(|_| "the plugin's output is not an ExecCredential JSON object".to_string())?;
    if cred.kind.as_deref() != Some("ExecCredential") {
        return Err("the plugin's output has kind other than ExecCredential".into());
    }
    if cred.api_version.as_deref() != Some(expected_api_version) {
        return Err(format!(
            "the plugin answered apiVersion {:?}, expected {expected_api_version:?}",
            cred.api_version.unwrap_or_default()
        ));
    }
    let status = cred
        .status
        .ok_or("the plugin's ExecCredential has no status")?;
    let has_token = status.token.as_deref().is_some_and(|t| !t.is_empty());
    let has_cert = status.client_certificate_data.is_some() && status.client_key_data.is_some();
    if !has_token && !has_cert {
        return Err(
            "the plugin's ExecCredential has neither a token nor a client certificate and key"
                .into(),
        );
    }
    if let Some(ts) = &status.expiration_timestamp
        && ts.parse::<jiff::Timestamp>().is_err()
    {
        return Err(format!(
            "the plugin's expirationTimestamp {ts:?} is not RFC 3339"
        ));
    }
    Ok(status)
}

/// A static kubeconfig for `cluster` authenticated with the plugin's credential.
pub fn static_kubeconfig(
    context_name: &str,
    cluster: &KubeconfigCluster,
    cred: &ExecCredentialStatus,
) -> Vec<u8> {
    #[derive(Serialize)]
    struct Named<T> {
        name: String,
        #[serde(flatten)]
        inner: T,
    }
    #[derive(Serialize)]
    struct ClusterWrap {
        cluster: BTreeMap<&'static str, serde_json::Value>,
    }
    #[derive(Serialize)]
    struct UserWrap {
        user: BTreeMap<&'static str, serde_json::Value>,
    }
    #[derive(Serialize)]
    struct ContextWrap {
        context: BTreeMap<&'static str, String>,
    }
    #[derive(Serialize)]
    #[serde(rename_all = "kebab-case")]
    struct Kubeconfig {
        api_version: &'static str,
        kind: &'static str,
        clusters: Vec<Named<ClusterWrap>>,
        users: Vec<Named<UserWrap>>,
        contexts: Vec<Named<ContextWrap>>,
        current_context: String,
    }
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
    let mut c = BTreeMap::new();
    c.insert("server", cluster.server.clone().into());
    if let Some(v) = &cluster.certificate_authority_data {
        c.insert("certificate-authority-data", v.clone().into());
    }
    if let Some(v) = &cluster.tls_server_name {
        c.insert("tls-server-name", v.clone().into());
    }
    if let Some(v) = cluster.insecure_skip_tls_verify {
        c.insert("insecure-skip-tls-verify", v.into());
    }
    if let Some(v) = &cluster.proxy_url {
        c.insert("proxy-url", v.clone().into());
    }
    let mut u = BTreeMap::new();
    if let Some(t) = cred.token.as_deref().filter(|t| !t.is_empty()) {
        u.insert("token", t.into());
    } else if let (Some(cert), Some(key)) = (&cred.client_certificate_data, &cred.client_key_data) {
        u.insert("client-certificate-data", b64(cert).into());
        u.insert("client-key-data", b64(key).into());
    }
    let name = context_name.to_string();
    let kc = Kubeconfig {
        api_version: "v1",
        kind: "Config",
        clusters: vec![Named {
            name: name.clone(),
            inner: ClusterWrap { cluster: c },
        }],
        users: vec![Named {
            name: name.clone(),
            inner: UserWrap { user: u },
        }],
        contexts: vec![Named {
            name: name.clone(),
            inner: ContextWrap {
                context: BTreeMap::from([("cluster", name.clone()), ("user", name.clone())]),
            },
        }],
        current_context: name,
    };
    serde_yaml::to_string(&kc)
        .expect("kubeconfig serializes")
        .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::NamedExtension;

    fn file() -> ProvidersFile {
        ProvidersFile::parse(
            br#"{"providers":[{"name":"tok","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"/usr/bin/get-token","args":["--a"],"env":[{"name":"X","value":"1"}],"provideClusterInfo":true},
            "profileSourcedCLIArgsPolicy":"Append","profileSourcedEnvVarsPolicy":"AppendIfNotExists"}]}"#,
        )
        .unwrap()
    }

    fn provider() -> AccessProvider {
        AccessProvider {
            name: "tok".into(),
            cluster: Some(KubeconfigCluster {
                server: "https://10.0.0.1:6443".into(),
                certificate_authority_data: Some("Q0E=".into()),
                extensions: vec![
                    NamedExtension {
                        name: keys::ADDITIONAL_ARGS_EXTENSION.into(),
                        extension: serde_json::json!(["--cluster", "c1"]),
                    },
                    NamedExtension {
                        name: keys::ADDITIONAL_ENVS_EXTENSION.into(),
                        extension: serde_json::json!({"X": "2", "Y": "3"}),
                    },
                    NamedExtension {
                        name: keys::EXEC_EXTENSION.into(),
                        extension: serde_json::json!({"audience": "a"}),
                    },
                ],
                ..Default::default()
            }),
        }
    }

    #[test]
    fn invocation_applies_policies_and_cluster_info() {
        let inv = invocation(file().get("tok").unwrap(), &provider()).unwrap();
        assert_eq!(inv.args, ["--a", "--cluster", "c1"]);
        assert_eq!(
            inv.env,
            [("X".into(), "1".into()), ("Y".into(), "3".into())]
        );
        let info: serde_json::Value = serde_json::from_str(&inv.exec_info).unwrap();
        assert_eq!(info["spec"]["cluster"]["server"], "https://10.0.0.1:6443");
        assert_eq!(info["spec"]["cluster"]["config"]["audience"], "a");
        assert_eq!(info["spec"]["interactive"], false);
    }

    #[test]
    fn replace_and_ignore_policies() {
        let mut f = file();
        f.providers[0].profile_sourced_env_vars_policy = Some("Replace".into());
        f.providers[0].profile_sourced_cli_args_policy = None;
        let inv = invocation(&f.providers[0], &provider()).unwrap();
        assert_eq!(inv.args, ["--a"]);
        assert_eq!(
            inv.env,
            [("X".into(), "2".into()), ("Y".into(), "3".into())]
        );
    }

    #[test]
    fn unknown_policy_is_an_error() {
        let e = ProvidersFile::parse(
            br#"{"providers":[{"name":"p","execConfig":{"apiVersion":"v","command":"c"},"profileSourcedEnvVarsPolicy":"Sometimes"}]}"#,
        )
        .unwrap_err();
        assert!(
            e.contains("Sometimes") && e.contains("profileSourcedEnvVarsPolicy"),
            "{e}"
        );
        assert!(ProvidersFile::parse(b"{").is_err());
    }

    #[test]
    fn exec_credential_to_kubeconfig() {
        let out = br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"canary-tok","expirationTimestamp":"2030-01-01T00:00:00Z"}}"#;
        let st = parse_exec_credential(out, "client.authentication.k8s.io/v1").unwrap();
        assert!(!format!("{st:?}").contains("canary"));
        let kc = static_kubeconfig("c1", provider().cluster.as_ref().unwrap(), &st);
        let doc: serde_yaml::Value = serde_yaml::from_slice(&kc).unwrap();
        assert_eq!(
            doc["users"][0]["user"]["token"].as_str(),
            Some("canary-tok")
        );
        assert_eq!(
            doc["clusters"][0]["cluster"]["server"].as_str(),
            Some("https://10.0.0.1:6443")
        );
        assert_eq!(doc["current-context"].as_str(), Some("c1"));
        crate::bridge::credentials::material::check_kubeconfig(&kc, &Default::default()).unwrap();
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
            assert!(!e.contains("canary"), "{e}");
        }
    }
}
