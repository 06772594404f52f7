//! `sveltos_cluster_credentials`: the credentials of one member cluster, resolved from its ClusterProfile through
//! the bridge's one credential path, for configuring other providers (`kubernetes`, `helm`, a second `sveltos`)
//! within a run without writing them to state or plan files.
//!
//! Open: one call down, `crate::runtime::credentials::credentials_of`: the ClusterProfile read, its credential
//! sources read, located and judged as the bridge does; a kubeconfig is taken as the core rebuilt it; an exec
//! access provider's plugin is run and its credential turned into a kubeconfig (`runtime::credentials::mint`, the
//! bridge's minting path). The connection attributes are then read from that kubeconfig
//! (`domain::kubeconfig::connection`); a failure becomes a diagnostic in `provider::diag`.
//!
//! Renew (exec credentials only, `credentials.refresh_before` ahead of expiry): the same path again, after
//! checking that the profile still names the same source and plugin run. Terraform cannot hand a renewed value
//! to providers that already received the result; what renew guarantees is that a run outliving a credential
//! fails with a clear error when the credential can no longer be minted, and that plugins that cache (cloud
//! CLIs) keep a fresh one. The private bytes hold identities and a hash (profile, credentials settings, source,
//! SHA-256 of the plugin run), never a credential.
//!
//! One file per concern: when to renew ([`renew`]), the [`schema`] and result value; the arguments
//! ([`CredentialsArgs`], read in one pass) and the RPCs here.

mod renew;
mod schema;

use std::{sync::Arc, time::SystemTime};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::{
    domain::{
        credentials::{CredentialOptions, CredentialsConfig, options::validate},
        exec::ProvidersFile,
        kubeconfig::{KubeconfigPolicy, connection},
    },
    provider::state::{NotReady, ProviderState},
    provider::{
        blocks::{credentials as credentials_block, selection::profile_identity},
        diag::{credentials_failure as failure, problems_diags, secret_reader_notices},
    },
    runtime::credentials::{CredentialsError, credentials_of},
    tfplugin::{
        AttributePath, ClientCapabilities, CloseEphemeralRequest, DeferredReason, Diagnostic,
        Diagnostics, EphemeralResource, OpenEphemeralRequest, OpenEphemeralResponse,
        RenewEphemeralRequest, RenewEphemeralResponse, Schema, Value,
        value::{from_value, from_value_partial},
    },
};
pub use renew::renew_at;
use schema::result;
pub use schema::schema;

/// The type name.
pub const TYPE_NAME: &str = "sveltos_cluster_credentials";

/// What renew needs, kept in the private bytes: identities, settings and a hash, no credential.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct RenewState {
    namespace: String,
    name: String,
    credentials: Option<CredentialsConfig>,
    source: String,
    invocation_sha256: String,
}

/// The arguments, as written: the ClusterProfile and the `credentials` block.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CredentialsArgs {
    /// `namespace` (required; `None` only while not known).
    pub namespace: Option<String>,
    /// `name` (required; `None` only while not known).
    pub name: Option<String>,
    /// The `credentials` block.
    pub credentials: Option<CredentialsConfig>,
}

impl CredentialsArgs {
    /// `namespace` and `name` validated as Kubernetes validates them, then the `credentials` block (when
    /// `credentials_known`; otherwise it is checked at open).
    fn check(&self, credentials_known: bool) -> Diagnostics {
        let mut diags = profile_identity(self.namespace.as_deref(), self.name.as_deref());
        if credentials_known {
            diags.extend(credentials_block::check(self.credentials.as_ref()).into_vec());
            if let Some(refused) = self.exec_kubeconfigs_refused() {
                diags.push(refused);
            }
        }
        diags
    }

    /// `credentials.allow_exec_kubeconfigs = true` is refused here: a kubeconfig whose user runs an `exec` plugin,
    /// handed to a provider or a tool of this run, would run the inventory's command on the machine running
    /// Terraform, with its environment. The bridge may accept one (the command then runs in Sveltos' pods).
    fn exec_kubeconfigs_refused(&self) -> Option<Diagnostic> {
        let allowed = self.credentials.as_ref()?.allow_exec_kubeconfigs;
        (allowed == Some(true)).then(|| {
            Diagnostic::error(
                "Exec kubeconfigs are never handed out",
                format!(
                    "{TYPE_NAME} returns credentials to this run: a kubeconfig whose user runs an `exec` plugin \
                     would run a command chosen by whoever writes the inventory on the machine running Terraform. \
                     Remove allow_exec_kubeconfigs here (it applies to what sveltos_cluster_inventory_bridge \
                     writes for Sveltos); use an exec access provider from credentials.exec_providers_file, \
                     whose plugin the operator chooses."
                ),
            )
            .with_attribute(
                AttributePath::attr(credentials_block::BLOCK).then_attr("allow_exec_kubeconfigs"),
            )
        })
    }
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

/// An open with valid arguments and a client.
struct Opened<'a> {
    client: kube::Client,
    args: &'a CredentialsArgs,
    options: &'a CredentialOptions,
    providers: Option<&'a ProvidersFile>,
}

impl Opened<'_> {
    /// Mints the credentials and answers with their connection attributes (and, for exec credentials, when to
    /// renew them and what renew needs).
    async fn open(&self, config: &Value) -> OpenEphemeralResponse {
        let (namespace, name) = (
            self.args.namespace.as_deref().unwrap_or_default(),
            self.args.name.as_deref().unwrap_or_default(),
        );
        let failed =
            |e: &CredentialsError| ClusterCredentials::failed(failure(namespace, name, e).into());
        let minted =
            match credentials_of(&self.client, namespace, name, self.options, self.providers).await
            {
                Ok(m) => m,
                Err(e) => return failed(&e),
            };
        // Never an exec user here, whatever the options say (see `CredentialsArgs::exec_kubeconfigs_refused`).
        let policy = KubeconfigPolicy { allow_exec: false };
        let conn = match connection(&minted.kubeconfig, &policy) {
            Ok(c) => c,
            Err(source) => {
                return failed(&CredentialsError::Kubeconfig {
                    credential_source: minted.source.to_string(),
                    source,
                });
            }
        };
        let mut resp = OpenEphemeralResponse {
            result: result(config, &conn, &minted),
            ..OpenEphemeralResponse::default()
        };
        let key = format!("{namespace}/{name}");
        let notices = minted.notice.as_deref().map(|n| (key.as_str(), n));
        if let Some(w) = secret_reader_notices(notices) {
            resp.diagnostics.push(w);
        }
        if let Some(sha) = &minted.invocation_sha256 {
            resp.renew_at = renew_at(
                minted.expires_at.as_deref(),
                self.options.refresh_before,
                SystemTime::now(),
            );
            let st = RenewState {
                namespace: namespace.into(),
                name: name.into(),
                credentials: self.args.credentials.clone(),
                source: minted.source.to_string(),
                invocation_sha256: sha.clone(),
            };
            resp.private = serde_json::to_vec(&st).unwrap_or_default();
        }
        resp
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
        match from_value_partial::<CredentialsArgs>(config) {
            Ok(args) => args
                .value
                .check(!args.is_unknown_at(&AttributePath::attr(credentials_block::BLOCK))),
            Err(e) => e.to_diagnostic().into(),
        }
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
        let args = match from_value::<CredentialsArgs>(config) {
            Ok(args) => args,
            Err(e) => return Self::failed(e.to_diagnostic().into()),
        };
        let diags = args.check(true);
        if diags.has_errors() {
            return Self::failed(diags);
        }
        let (options, providers) = match credentials_block::settings(args.credentials.as_ref()) {
            Ok(v) => v,
            Err(d) => return Self::failed(d),
        };
        let client = match self.state.client(req.client) {
            Ok(c) => c,
            Err(NotReady::Defer(reason)) => return Self::unknown(config, Some(reason)),
            Err(NotReady::Fail(d)) => return Self::failed(d.into()),
        };
        let opened = Opened {
            client,
            args: &args,
            options: &options,
            providers: providers.as_ref(),
        };
        opened.open(config).await
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
        match credentials_of(&client, namespace, name, &options, providers.as_ref()).await {
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

    #[test]
    fn the_args_cover_the_schema() {
        crate::tfplugin::value::serde_bridge::coverage::assert_covers::<CredentialsArgs>(
            &schema().block,
            &[],
        );
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
