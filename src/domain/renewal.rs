//! Whether sveltoscluster-manager can renew a bridged cluster's credential (`token_renewal`), judged from what the
//! bridge writes for it. Pure: the kubeconfig bytes (or, for a credential minted at apply, the profile's access
//! provider entry) are all it reads.
//!
//! What the manager does on a renewal (sveltoscluster-manager `d0efb5f`, `handleTokenRequestRenewal`): it takes the
//! ServiceAccount from `tokenRequestRenewalOption.saNamespace`/`saName` when both are set, else asks the member
//! cluster who the credential is (a SelfSubjectReview: only a `system:serviceaccount:<namespace>:<name>` user
//! names one), else falls back to the kubeconfig's contexts, which it decodes with a YAML library that drops their
//! `user` (so that fallback never finds one). It then requests a token for that ServiceAccount and writes a new
//! kubeconfig holding **only** the server, the CA and that token. Hence two ways a renewal fails:
//!
//! - [`Verdict::Withheld`]: the connection needs `insecure-skip-tls-verify`, `tls-server-name` or `proxy-url`,
//!   which the renewed kubeconfig drops: the cluster would lose its connection at the first renewal, so the bridge
//!   does not enable renewal for it (and the plan says so);
//! - [`Verdict::NotRenewed`]: without `service_account`, a credential that is not a ServiceAccount token (a static
//!   token of another user, a client certificate, basic authentication, an exec plugin) is never renewed, and the
//!   manager says nothing: the plan says so instead.
//!
//! A token's claims are read only to tell whether it is a ServiceAccount token (bounded, never kept or shown).

use base64::Engine as _;

use super::{
    TokenRenewal,
    credentials::{CredentialSource, access_providers},
    kubeconfig::{Connection, KubeconfigPolicy, select},
    names,
};
use crate::api::{ClusterProfile, KubeconfigCluster};

/// Longest token whose claims are read (bytes); a longer one is judged not to be a ServiceAccount token.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// What becomes of `token_renewal` for one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Renewal is written and sveltoscluster-manager can renew the credential.
    Renewable,
    /// Renewal is written, but sveltoscluster-manager will not renew this credential: why (no credential bytes).
    NotRenewed(String),
    /// Renewal is not written for this cluster: a renewal would break its connection; why.
    Withheld(String),
}

/// The kind of credential a written kubeconfig's user holds, as far as renewal cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Credential {
    /// A token whose claims name a ServiceAccount (`system:serviceaccount:<namespace>:<name>`).
    ServiceAccountToken,
    /// A token that does not.
    OtherToken,
    /// A client certificate.
    ClientCertificate,
    /// Username and password.
    Basic,
    /// An exec plugin in the kubeconfig (`allow_exec_kubeconfigs`).
    ExecPlugin,
    /// Minted at apply by an exec provider: not known at plan.
    Minted,
    /// None of these.
    Unknown,
}

/// What a cluster's written kubeconfig holds that renewal depends on.
struct Facts {
    /// The connection fields a renewal drops, by their kubeconfig names.
    dropped: Vec<&'static str>,
    /// The credential.
    credential: Credential,
}

/// The verdict for one cluster with `renewal` configured, whose credential comes from `source` and, when it is not
/// minted at apply, is the kubeconfig `bytes` the bridge writes.
pub fn judge(
    renewal: &TokenRenewal,
    profile: &ClusterProfile,
    source: &CredentialSource,
    bytes: Option<&[u8]>,
) -> Verdict {
    let facts = match (source, bytes) {
        // Minted at apply: the written kubeconfig's cluster is the access provider's entry (and a credential
        // minted at apply is judged the same way, so plan and apply agree).
        (CredentialSource::Exec { provider }, _) => Facts {
            dropped: provider_cluster(profile, provider)
                .map(dropped_by_cluster)
                .unwrap_or_default(),
            credential: Credential::Minted,
        },
        (_, Some(b)) => match select(b, &KubeconfigPolicy { allow_exec: true }, None) {
            Ok(c) => Facts {
                dropped: dropped_by_connection(&c),
                credential: credential_of(&c),
            },
            Err(_) => Facts {
                dropped: Vec::new(),
                credential: Credential::Unknown,
            },
        },
        (_, None) => Facts {
            dropped: Vec::new(),
            credential: Credential::Unknown,
        },
    };
    verdict(renewal, &facts)
}

/// The verdict from what the written kubeconfig holds.
fn verdict(renewal: &TokenRenewal, facts: &Facts) -> Verdict {
    if !facts.dropped.is_empty() {
        return Verdict::Withheld(format!(
            "its connection needs {}, which a Sveltos renewal drops (the kubeconfig it writes holds only the server, \
             the CA and the new token): the cluster would lose its connection at the first renewal, so token \
             renewal is not enabled for it",
            facts.dropped.join(" and ")
        ));
    }
    if renewal.sa_name.is_some() && renewal.sa_namespace.is_some() {
        return Verdict::Renewable;
    }
    let what = match facts.credential {
        Credential::ServiceAccountToken | Credential::Unknown => return Verdict::Renewable,
        Credential::OtherToken => "its token is not a ServiceAccount token",
        Credential::ClientCertificate => "its credential is a client certificate",
        Credential::Basic => "its credential is a username and password",
        Credential::ExecPlugin => "its credential is an exec plugin of the kubeconfig",
        Credential::Minted => {
            "its credential is minted by an exec provider (a ServiceAccount token only if that plugin mints one)"
        }
    };
    Verdict::NotRenewed(format!(
        "{what}, and token_renewal names no service_account: Sveltos will not renew it"
    ))
}

/// The cluster entry of `profile`'s access provider `name`.
fn provider_cluster<'p>(profile: &'p ClusterProfile, name: &str) -> Option<&'p KubeconfigCluster> {
    access_providers(profile)
        .into_iter()
        .find(|p| p.name == name)?
        .cluster
        .as_ref()
}

/// The fields of an access provider's cluster entry a renewal drops (what the minted kubeconfig carries of it).
fn dropped_by_cluster(c: &KubeconfigCluster) -> Vec<&'static str> {
    dropped(
        c.insecure_skip_tls_verify == Some(true),
        c.tls_server_name.is_some(),
        c.proxy_url.is_some(),
    )
}

/// The fields of a written kubeconfig's connection a renewal drops.
fn dropped_by_connection(c: &Connection) -> Vec<&'static str> {
    dropped(
        c.insecure,
        c.tls_server_name.is_some(),
        c.proxy_url.is_some(),
    )
}

fn dropped(insecure: bool, tls_server_name: bool, proxy_url: bool) -> Vec<&'static str> {
    [
        (insecure, "insecure-skip-tls-verify"),
        (tls_server_name, "tls-server-name"),
        (proxy_url, "proxy-url"),
    ]
    .into_iter()
    .filter_map(|(set, name)| set.then_some(name))
    .collect()
}

/// The kind of credential of a written kubeconfig's user.
fn credential_of(c: &Connection) -> Credential {
    if let Some(t) = &c.token {
        return if service_account_of(t).is_some() {
            Credential::ServiceAccountToken
        } else {
            Credential::OtherToken
        };
    }
    if c.client_certificate.is_some() {
        Credential::ClientCertificate
    } else if c.username.is_some() {
        Credential::Basic
    } else if c.exec.is_some() {
        Credential::ExecPlugin
    } else {
        Credential::Unknown
    }
}

/// The ServiceAccount (`namespace`, `name`) a token's claims name (`sub`: `system:serviceaccount:<ns>:<name>`,
/// both valid Kubernetes names), if it is a JWT of at most [`MAX_TOKEN_BYTES`] that does. The signature is not
/// checked: this tells which kind of credential the kubeconfig holds, never whom to trust.
pub fn service_account_of(token: &str) -> Option<(String, String)> {
    if token.len() > MAX_TOKEN_BYTES {
        return None;
    }
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let sub = claims.get("sub")?.as_str()?;
    let (ns, name) = sub
        .strip_prefix("system:serviceaccount:")?
        .split_once(':')?;
    names::dns1123_label(ns).ok()?;
    names::dns1123_subdomain(name).ok()?;
    Some((ns.to_string(), name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::AccessProvider;

    fn jwt(claims: serde_json::Value) -> String {
        let enc = |v: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        format!(
            "{}.{}.{}",
            enc(br#"{"alg":"RS256"}"#),
            enc(claims.to_string().as_bytes()),
            enc(b"signature")
        )
    }

    fn sa_token() -> String {
        jwt(serde_json::json!({"sub": "system:serviceaccount:kube-system:sveltos", "exp": 1}))
    }

    fn renewal(sa: bool) -> TokenRenewal {
        TokenRenewal {
            interval: "1h".into(),
            token_duration: None,
            sa_namespace: sa.then(|| "kube-system".into()),
            sa_name: sa.then(|| "sveltos".into()),
        }
    }

    fn kubeconfig(c: &Connection) -> Vec<u8> {
        c.to_kubeconfig()
    }

    fn secret_source() -> CredentialSource {
        CredentialSource::LabelledSecret {
            namespace: "a".into(),
            name: "s".into(),
            key: "Config".into(),
        }
    }

    fn judged(c: &Connection, sa: bool) -> Verdict {
        let profile = ClusterProfile::new("c1", Default::default());
        judge(
            &renewal(sa),
            &profile,
            &secret_source(),
            Some(&kubeconfig(c)),
        )
    }

    fn with_token(t: &str) -> Connection {
        Connection {
            host: "https://10.0.0.1:6443".into(),
            token: Some(t.into()),
            ..Default::default()
        }
    }

    /// The renewal record the bridge writes (annotation and configuration hash) leaves out what is unset: a
    /// change of encoding would rewrite every renewed cluster.
    #[test]
    fn the_renewal_record_leaves_out_what_is_unset() {
        let r = serde_json::to_string(&renewal(false)).unwrap();
        assert_eq!(r, r#"{"interval":"1h"}"#);
        let r = serde_json::to_string(&renewal(true)).unwrap();
        assert_eq!(
            r,
            r#"{"interval":"1h","sa_namespace":"kube-system","sa_name":"sveltos"}"#
        );
    }

    #[test]
    fn a_service_account_token_is_told_by_its_claims_within_bounds() {
        assert_eq!(
            service_account_of(&sa_token()),
            Some(("kube-system".into(), "sveltos".into()))
        );
        for not in [
            jwt(serde_json::json!({"sub": "admin"})),
            jwt(serde_json::json!({"sub": "system:serviceaccount:Kube_System:x"})),
            jwt(serde_json::json!({"sub": "system:serviceaccount:ns"})),
            jwt(serde_json::json!({"sub": 7})),
            "static-token".into(),
            "a.b.c".into(),
            format!("{}.x", sa_token()),
            format!("{}{}", sa_token(), "A".repeat(MAX_TOKEN_BYTES)),
        ] {
            assert_eq!(service_account_of(&not), None, "{not:.60}");
        }
    }

    #[test]
    fn without_service_account_only_a_service_account_token_is_renewable() {
        assert_eq!(judged(&with_token(&sa_token()), false), Verdict::Renewable);
        let cert = Connection {
            host: "https://10.0.0.1:6443".into(),
            client_certificate: Some("cert".into()),
            client_key: Some("key".into()),
            ..Default::default()
        };
        for (c, what) in [
            (with_token("static-token"), "not a ServiceAccount token"),
            (cert, "client certificate"),
        ] {
            match judged(&c, false) {
                Verdict::NotRenewed(why) => {
                    assert!(
                        why.contains(what) && why.contains("service_account"),
                        "{why}"
                    );
                    assert!(!why.contains("static-token"), "{why}");
                }
                v => panic!("{what}: {v:?}"),
            }
            // With service_account, Sveltos requests that ServiceAccount's token with any credential.
            assert_eq!(judged(&c, true), Verdict::Renewable, "{what}");
        }
    }

    #[test]
    fn a_connection_a_renewal_would_break_withholds_renewal() {
        for (mut c, field) in [
            (with_token(&sa_token()), "insecure-skip-tls-verify"),
            (with_token(&sa_token()), "tls-server-name"),
            (with_token(&sa_token()), "proxy-url"),
        ] {
            match field {
                "insecure-skip-tls-verify" => c.insecure = true,
                "tls-server-name" => c.tls_server_name = Some("api.internal".into()),
                _ => c.proxy_url = Some("http://proxy:3128".into()),
            }
            for sa in [false, true] {
                match judged(&c, sa) {
                    Verdict::Withheld(why) => assert!(why.contains(field), "{why}"),
                    v => panic!("{field}: {v:?}"),
                }
            }
        }
    }

    #[test]
    fn a_minted_credential_is_judged_by_its_access_provider() {
        let mut profile = ClusterProfile::new("c1", Default::default());
        let cluster = KubeconfigCluster {
            server: "https://10.0.0.1:6443".into(),
            tls_server_name: Some("api.internal".into()),
            ..Default::default()
        };
        let mut status = crate::api::ClusterProfileStatus::default();
        status.access_providers.push(AccessProvider {
            name: "tok".into(),
            cluster: Some(cluster),
        });
        profile.status = Some(status);
        let exec = CredentialSource::Exec {
            provider: "tok".into(),
        };
        assert!(matches!(
            judge(&renewal(true), &profile, &exec, None),
            Verdict::Withheld(_)
        ));
        profile.status.as_mut().unwrap().access_providers[0]
            .cluster
            .as_mut()
            .unwrap()
            .tls_server_name = None;
        assert_eq!(
            judge(&renewal(true), &profile, &exec, None),
            Verdict::Renewable
        );
        assert!(matches!(
            judge(&renewal(false), &profile, &exec, None),
            Verdict::NotRenewed(why) if why.contains("exec provider")
        ));
    }
}
