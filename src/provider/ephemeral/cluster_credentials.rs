//! `sveltos_cluster_credentials`: the credentials of one member cluster, resolved from its ClusterProfile through
//! the bridge's one credential path, for configuring other providers (`kubernetes`, `helm`, a second `sveltos`)
//! within a run without writing them to state or plan files.
//!
//! Open: read the ClusterProfile, read the credential sources (`crate::k8s::credentials`), locate and judge them
//! (`crate::bridge::credentials`): a kubeconfig is taken as is; an exec access provider's plugin is run
//! (`crate::k8s::exec::run`) and its credential turned into a kubeconfig (`bridge::exec::static_kubeconfig`). The
//! connection attributes are then read from that kubeconfig (`bridge::kubeconfig::connection`).
//!
//! Renew (exec credentials only, `credentials.refresh_before` ahead of expiry): the same path again, after
//! checking that the profile still names the same source and plugin run. Terraform cannot hand a renewed value
//! to providers that already received the result; what renew guarantees is that a run outliving a credential
//! fails with a clear error when the credential can no longer be minted, and that plugins that cache (cloud
//! CLIs) keep a fresh one. The private bytes hold identities and a hash (profile, credentials settings, source,
//! SHA-256 of the plugin run), never a credential.

use std::{
    sync::Arc,
    time::{Duration, SystemTime},
};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::{
    api::ClusterProfile,
    bridge::{
        credentials::{
            CredentialOptions, CredentialProblem, CredentialSecrets, CredentialSource,
            CredentialsConfig, Lookup, Resolved, SecretIndex, access_providers, locate,
            options::validate, resolve, resolve::secrets_to_read,
        },
        exec::{ProvidersFile, static_kubeconfig},
        kubeconfig::{Connection, ConnectionError, KubeconfigPolicy, connection},
        plan::invocation_sha256,
    },
    k8s::{
        credentials::{read_named_secrets, read_sources},
        exec::{ExecRunError, run as run_exec},
        io::{self, IoError},
    },
    provider::state::{NotReady, ProviderState},
    provider::{blocks::credentials as credentials_block, diag::problems_diags},
    tfplugin::{
        AttributePath, ClientCapabilities, CloseEphemeralRequest, DeferredReason, Diagnostic,
        Diagnostics, EphemeralResource, OpenEphemeralRequest, OpenEphemeralResponse,
        RenewEphemeralRequest, RenewEphemeralResponse, Schema, Value, schema::Attribute,
    },
};

/// The type name.
pub const TYPE_NAME: &str = "sveltos_cluster_credentials";

/// The computed (result) attributes, all sensitive, with their descriptions.
const RESULT: [(&str, &str); 9] = [
    (
        "host",
        "API server URL of the member cluster (`server` of the kubeconfig's context).",
    ),
    (
        "cluster_ca_certificate",
        "PEM CA bundle of the API server (decoded `certificate-authority-data`); null when the kubeconfig has none.",
    ),
    (
        "token",
        "Bearer token; null when the cluster authenticates with a client certificate.",
    ),
    (
        "client_certificate",
        "PEM client certificate (decoded `client-certificate-data`); null with a token.",
    ),
    (
        "client_key",
        "PEM client key (decoded `client-key-data`); null with a token.",
    ),
    (
        "tls_server_name",
        "Server name for TLS verification (`tls-server-name`), or null.",
    ),
    ("proxy_url", "Proxy URL (`proxy-url`), or null."),
    (
        "expires_at",
        "RFC 3339 expiry of an exec plugin's credential; null for a kubeconfig taken from a Secret.",
    ),
    (
        "kubeconfig",
        "The kubeconfig itself: the Secret's bytes as they are, or the static kubeconfig built from the exec \
         plugin's credential (what the bridge would write for Sveltos).",
    ),
];

/// The schema of `sveltos_cluster_credentials`.
pub fn schema() -> Schema {
    let mut s = Schema::new(0)
        .markdown_description(
            "The credentials of one member cluster, resolved from its KEP-4322 `ClusterProfile` exactly as \
             `sveltos_cluster_inventory_bridge` resolves them (same sources, order, trust rules and exec plugins). \
             Ephemeral: the values exist only during the run and never reach state or plan files. For configuring \
             a `kubernetes`, `helm` or aliased `sveltos` provider per member cluster. Needs Terraform >= 1.10 or \
             OpenTofu >= 1.11.",
        )
;
    for a in crate::provider::blocks::selection::profile_identity_attributes() {
        s = s.attribute(a);
    }
    for (name, doc) in RESULT {
        s = s.attribute(
            Attribute::string(name)
                .computed()
                .sensitive()
                .markdown_description(doc),
        );
    }
    s.attribute(
        Attribute::bool("insecure")
            .computed()
            .sensitive()
            .markdown_description(
                "Whether the kubeconfig skips TLS verification (`insecure-skip-tls-verify`).",
            ),
    )
    .block(credentials_block::block())
}

/// Why a cluster's credentials could not be produced. Displays name objects, sources and fields, never
/// credential content.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    /// The ClusterProfile does not exist.
    #[error(
        "there is no ClusterProfile (multicluster.x-k8s.io/v1alpha1) named {name} in namespace {namespace}"
    )]
    ProfileNotFound {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// Reading the ClusterProfile failed.
    #[error("{source}")]
    ReadProfile {
        /// The API error.
        #[source]
        source: IoError,
    },
    /// Reading the credential Secrets or namespaces failed.
    #[error("{source}")]
    ReadSources {
        /// The API error.
        #[source]
        source: IoError,
    },
    /// The credential path found no usable source, or refused it.
    #[error("{source}")]
    Refused {
        /// What the credential path decided.
        #[source]
        source: CredentialProblem,
    },
    /// The exec access provider disappeared from the profile between two reads.
    #[error("access provider {provider} vanished from the ClusterProfile")]
    AccessProviderVanished {
        /// Its name.
        provider: String,
    },
    /// The exec plugin gave no credential.
    #[error("{source}")]
    Mint {
        /// Why.
        #[source]
        source: ExecRunError,
    },
    /// The access provider's cluster entry cannot be written as a kubeconfig with the minted credential.
    #[error("the access provider's cluster entry cannot be written as a kubeconfig: {source}")]
    Unwritable {
        /// Why.
        #[source]
        source: ConnectionError,
    },
    /// The kubeconfig holds no usable connection settings.
    #[error("{source} (source {credential_source})")]
    Kubeconfig {
        /// Where the kubeconfig came from.
        credential_source: String,
        /// Why.
        #[source]
        source: ConnectionError,
    },
    /// At renew, the profile names another source or plugin run than when the resource was opened.
    #[error(
        "the credentials now come from {now} instead of {was} (or the plugin run changed); they are not renewed \
         within this run"
    )]
    Changed {
        /// Source when opened.
        was: String,
        /// Source now.
        now: String,
    },
}

/// A kubeconfig obtained through the credential path.
struct Minted {
    kubeconfig: Vec<u8>,
    expires_at: Option<String>,
    source: CredentialSource,
    invocation_sha256: Option<String>,
}

/// Resolves the credentials of ClusterProfile `namespace/name` as the bridge does, running an exec plugin when
/// the profile's source is one.
async fn mint(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
) -> Result<Minted, CredentialsError> {
    let profile = io::get_opt::<ClusterProfile>(client, namespace, name)
        .await
        .map_err(|source| CredentialsError::ReadProfile { source })?
        .ok_or_else(|| CredentialsError::ProfileNotFound {
            namespace: namespace.into(),
            name: name.into(),
        })?;
    let reads = read_sources(client, options, &[profile.key()])
        .await
        .map_err(|source| CredentialsError::ReadSources { source })?;
    let index = SecretIndex::new(&reads.labelled, options, &reads.namespace_labels);
    let lookup = locate(&profile, options, providers, &index);
    let source = match &lookup {
        Lookup::Found(s) => s.clone(),
        Lookup::Unusable(p) => return Err(CredentialsError::Refused { source: p.clone() }),
    };
    let fetched = read_named_secrets(client, &secrets_to_read([&lookup]))
        .await
        .map_err(|source| CredentialsError::ReadSources { source })?;
    let secrets = CredentialSecrets::new(&reads.labelled, &fetched);
    let resolved = resolve(&profile, &source, options, providers, &secrets)
        .map_err(|source| CredentialsError::Refused { source })?;
    tracing::debug!(%namespace, %name, source = %source, "resolved ClusterProfile credentials");
    match resolved {
        Resolved::Kubeconfig(bytes) => Ok(Minted {
            kubeconfig: bytes,
            expires_at: None,
            source,
            invocation_sha256: None,
        }),
        Resolved::Exec(inv) => {
            let cluster = access_providers(&profile)
                .into_iter()
                .find(|a| a.name == inv.provider)
                .and_then(|a| a.cluster.clone())
                .ok_or_else(|| CredentialsError::AccessProviderVanished {
                    provider: inv.provider.clone(),
                })?;
            let cred = run_exec(&inv)
                .await
                .map_err(|source| CredentialsError::Mint { source })?;
            Ok(Minted {
                kubeconfig: static_kubeconfig(&cluster, &cred)
                    .map_err(|source| CredentialsError::Unwritable { source })?,
                expires_at: cred.expiration_timestamp.clone(),
                source,
                invocation_sha256: Some(invocation_sha256(&inv)),
            })
        }
    }
}

/// When to renew a credential expiring at `expires_at`: `refresh_before` ahead of it, or halfway to it when that
/// moment has passed already. `None`: no expiry, or already expired (nothing to renew).
pub fn renew_at(
    expires_at: Option<&str>,
    refresh_before: Duration,
    now: SystemTime,
) -> Option<SystemTime> {
    let expiry = SystemTime::from(expires_at?.parse::<jiff::Timestamp>().ok()?);
    let left = expiry.duration_since(now).ok().filter(|d| !d.is_zero())?;
    Some(match left.checked_sub(refresh_before) {
        Some(wait) if !wait.is_zero() => now + wait,
        _ => now + left / 2,
    })
}

/// What renew needs, kept in the private bytes: identities, settings and a hash, no credential.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct RenewState {
    namespace: String,
    name: String,
    credentials: Option<CredentialsConfig>,
    source: String,
    invocation_sha256: String,
}

/// The result value: the configuration with the connection attributes filled in.
fn result(config: &Value, c: &Connection, minted: &Minted) -> Value {
    let s = |v: &Option<String>| v.as_ref().map(Value::string).unwrap_or(Value::Null);
    let mut out = config.clone();
    out.set_attr("host", Value::string(&c.host));
    out.set_attr("cluster_ca_certificate", s(&c.cluster_ca_certificate));
    out.set_attr("token", s(&c.token));
    out.set_attr("client_certificate", s(&c.client_certificate));
    out.set_attr("client_key", s(&c.client_key));
    out.set_attr("tls_server_name", s(&c.tls_server_name));
    out.set_attr("proxy_url", s(&c.proxy_url));
    out.set_attr("insecure", Value::bool(c.insecure));
    out.set_attr("expires_at", s(&minted.expires_at));
    out.set_attr(
        "kubeconfig",
        Value::string(String::from_utf8_lossy(&minted.kubeconfig)),
    );
    out
}

/// The error diagnostic for a failure on ClusterProfile `namespace/name`.
fn failure(namespace: &str, name: &str, e: &CredentialsError) -> Diagnostic {
    let d = Diagnostic::error(
        format!("Cannot get the credentials of ClusterProfile {namespace}/{name}"),
        format!(
            "{e}. The sveltos_cluster_credentials ephemeral resource resolves credentials as \
             sveltos_cluster_inventory_bridge does; the sveltos_clusterprofile data source reports where they would \
             come from."
        ),
    );
    match e {
        CredentialsError::ProfileNotFound { .. } => d.with_attribute(AttributePath::attr("name")),
        _ => d,
    }
}

fn check_config(config: &Value) -> Diagnostics {
    crate::provider::blocks::selection::profile_identity(config)
}

/// The `sveltos_cluster_credentials` ephemeral resource.
pub struct ClusterCredentials {
    state: Arc<ProviderState>,
}

impl ClusterCredentials {
    /// The resource, using the provider's shared state.
    pub fn new(state: Arc<ProviderState>) -> Self {
        Self { state }
    }

    fn unknown(config: &Value, deferred: Option<DeferredReason>) -> OpenEphemeralResponse {
        OpenEphemeralResponse {
            result: schema().mark_computed_unknown(config),
            deferred,
            ..OpenEphemeralResponse::default()
        }
    }

    fn failed(diagnostics: Diagnostics) -> OpenEphemeralResponse {
        OpenEphemeralResponse {
            diagnostics,
            ..OpenEphemeralResponse::default()
        }
    }
}

#[async_trait]
impl EphemeralResource for ClusterCredentials {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        schema()
    }

    async fn validate(&self, config: &Value) -> Diagnostics {
        check_config(config)
    }

    async fn open(&self, req: OpenEphemeralRequest) -> OpenEphemeralResponse {
        let config = &req.config;
        if !config.is_wholly_known() {
            let defer = req
                .client
                .deferral_allowed
                .then_some(DeferredReason::ResourceConfigUnknown);
            return Self::unknown(config, defer);
        }
        let diags = check_config(config);
        if diags.has_errors() {
            return Self::failed(diags);
        }
        let namespace = config.get_attr("namespace").as_str().unwrap_or_default();
        let name = config.get_attr("name").as_str().unwrap_or_default();
        let block = config.get_attr(credentials_block::BLOCK);
        let (options, providers) = match credentials_block::settings(block) {
            Ok(v) => v,
            Err(d) => return Self::failed(d),
        };
        let client = match self.state.client(req.client) {
            Ok(c) => c,
            Err(NotReady::Defer(reason)) => return Self::unknown(config, Some(reason)),
            Err(NotReady::Fail(d)) => return Self::failed(d.into()),
        };
        let minted = match mint(&client, namespace, name, &options, providers.as_ref()).await {
            Ok(m) => m,
            Err(e) => return Self::failed(failure(namespace, name, &e).into()),
        };
        let policy = KubeconfigPolicy {
            allow_exec: options.allow_exec_kubeconfigs,
        };
        let conn = match connection(&minted.kubeconfig, &policy) {
            Ok(c) => c,
            Err(source) => {
                let e = CredentialsError::Kubeconfig {
                    credential_source: minted.source.to_string(),
                    source,
                };
                return Self::failed(failure(namespace, name, &e).into());
            }
        };
        let mut resp = OpenEphemeralResponse {
            result: result(config, &conn, &minted),
            ..OpenEphemeralResponse::default()
        };
        if let Some(sha) = &minted.invocation_sha256 {
            resp.renew_at = renew_at(
                minted.expires_at.as_deref(),
                options.refresh_before,
                SystemTime::now(),
            );
            let st = RenewState {
                namespace: namespace.into(),
                name: name.into(),
                credentials: credentials_block::from_value(block),
                source: minted.source.to_string(),
                invocation_sha256: sha.clone(),
            };
            resp.private = serde_json::to_vec(&st).unwrap_or_default();
        }
        resp
    }

    async fn renew(&self, req: RenewEphemeralRequest) -> RenewEphemeralResponse {
        let mut resp = RenewEphemeralResponse::default();
        if req.private.is_empty() {
            return resp;
        }
        let Ok(st) = serde_json::from_slice::<RenewState>(&req.private) else {
            resp.diagnostics.error(
                "Cannot renew cluster credentials",
                "The private data of sveltos_cluster_credentials is not what this provider wrote.",
            );
            return resp;
        };
        let (namespace, name) = (st.namespace.as_str(), st.name.as_str());
        let options = match validate(st.credentials.as_ref()) {
            Ok(o) => o,
            Err(p) => {
                resp.diagnostics = problems_diags(&p);
                return resp;
            }
        };
        let providers = match credentials_block::providers(&options) {
            Ok(p) => p,
            Err(d) => {
                resp.diagnostics = d.into();
                return resp;
            }
        };
        let client = match self.state.client(ClientCapabilities::default()) {
            Ok(c) => c,
            Err(NotReady::Fail(d)) => {
                resp.diagnostics = d.into();
                return resp;
            }
            Err(NotReady::Defer(_)) => {
                resp.diagnostics.error(
                    "Cannot renew cluster credentials",
                    "The sveltos provider's configuration is not known.",
                );
                return resp;
            }
        };
        match mint(&client, namespace, name, &options, providers.as_ref()).await {
            Ok(m)
                if m.source.to_string() == st.source
                    && m.invocation_sha256.as_deref() == Some(st.invocation_sha256.as_str()) =>
            {
                tracing::debug!(%namespace, %name, "renewed exec credentials");
                resp.renew_at = renew_at(
                    m.expires_at.as_deref(),
                    options.refresh_before,
                    SystemTime::now(),
                );
            }
            Ok(m) => {
                let e = CredentialsError::Changed {
                    was: st.source.clone(),
                    now: m.source.to_string(),
                };
                resp.diagnostics.push(failure(namespace, name, &e));
            }
            Err(e) => resp.diagnostics.push(failure(namespace, name, &e)),
        }
        resp
    }

    async fn close(&self, _req: CloseEphemeralRequest) -> Diagnostics {
        // Nothing to release: exec credentials expire on their own, kubeconfigs are not leased.
        Diagnostics::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANARY: &str = "canary-eph-51d0";

    #[test]
    fn renew_at_is_refresh_before_ahead_of_expiry_or_halfway() {
        let now = SystemTime::from("2030-01-01T00:00:00Z".parse::<jiff::Timestamp>().unwrap());
        let min = |m: u64| Duration::from_secs(60 * m);
        assert_eq!(
            renew_at(Some("2030-01-01T01:00:00Z"), min(10), now),
            Some(now + min(50))
        );
        // Already inside refresh_before: halfway to expiry, never in the past.
        assert_eq!(
            renew_at(Some("2030-01-01T00:04:00Z"), min(10), now),
            Some(now + min(2))
        );
        assert_eq!(renew_at(Some("2029-12-31T23:00:00Z"), min(10), now), None);
        assert_eq!(renew_at(None, min(10), now), None);
        assert_eq!(renew_at(Some("soon"), min(10), now), None);
    }

    #[test]
    fn schema_marks_every_result_attribute_sensitive_and_computed() {
        let s = schema();
        let mut results = 0;
        for a in &s.block.attributes {
            if a.name == "namespace" || a.name == "name" {
                assert!(a.required && !a.sensitive, "{}", a.name);
            } else {
                assert!(a.computed && a.sensitive && !a.optional, "{}", a.name);
                results += 1;
            }
        }
        assert_eq!(results, 10);
        assert!(s.block.block_named(credentials_block::BLOCK).is_some());
    }

    #[test]
    fn result_fills_every_computed_attribute() {
        let config = Value::object([
            ("namespace", Value::string("team-a")),
            ("name", Value::string("c1")),
        ]);
        let minted = Minted {
            kubeconfig: format!("token: {CANARY}").into_bytes(),
            expires_at: Some("2030-01-01T00:00:00Z".into()),
            source: CredentialSource::Exec {
                provider: "p".into(),
            },
            invocation_sha256: Some("ab".into()),
        };
        let c = Connection {
            host: "https://h".into(),
            token: Some(CANARY.into()),
            ..Connection::default()
        };
        let v = result(&config, &c, &minted);
        assert_eq!(v.get_attr("host").as_str(), Some("https://h"));
        assert_eq!(v.get_attr("token").as_str(), Some(CANARY));
        assert_eq!(v.get_attr("insecure").as_bool(), Some(false));
        assert_eq!(
            v.get_attr("expires_at").as_str(),
            Some("2030-01-01T00:00:00Z")
        );
        assert!(v.get_attr("client_key").is_null());
        assert_eq!(v.get_attr("namespace").as_str(), Some("team-a"));
        // Values redact their strings in Debug.
        assert!(!format!("{v:?}").contains(CANARY));
    }

    #[test]
    fn private_state_holds_no_credential_and_round_trips() {
        let st = RenewState {
            namespace: "team-a".into(),
            name: "c1".into(),
            credentials: Some(CredentialsConfig {
                exec_providers_file: Some("/etc/p.json".into()),
                ..CredentialsConfig::default()
            }),
            source: "exec:p".into(),
            invocation_sha256: "00ff".into(),
        };
        let bytes = serde_json::to_vec(&st).unwrap();
        assert_eq!(serde_json::from_slice::<RenewState>(&bytes).unwrap(), st);
    }

    #[tokio::test]
    async fn validation_checks_identity_and_credentials_block() {
        let all = crate::provider::ephemeral::all(&Arc::new(ProviderState::new()));
        let r = all
            .iter()
            .find(|r| r.type_name() == TYPE_NAME)
            .expect("registered with the provider");
        let ok = Value::object([
            ("namespace", Value::string("team-a")),
            ("name", Value::string("c1")),
        ]);
        assert!(!r.validate(&ok).await.has_errors());
        let bad = Value::object([
            ("namespace", Value::string("Team_A")),
            ("name", Value::string("c1")),
            (
                "credentials",
                Value::object([("refresh_before", Value::string("soon"))]),
            ),
        ]);
        let paths: Vec<String> = r
            .validate(&bad)
            .await
            .iter()
            .filter_map(|d| d.attribute.as_ref().map(ToString::to_string))
            .collect();
        assert!(paths.iter().any(|p| p == "namespace"), "{paths:?}");
        assert!(
            paths.iter().any(|p| p.contains("refresh_before")),
            "{paths:?}"
        );
    }
}
