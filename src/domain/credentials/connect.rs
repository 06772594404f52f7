//! A `kubeconfig-secretreader` Secret under `secret_reader_mode = "credential"` (the default), as the upstream
//! plugin and access library use it: the Secret supplies the credential (the user of the chosen context), the
//! ClusterProfile's access provider the connection (its `cluster` entry: server, CA, TLS server name, proxy).
//!
//! What the Secret's kubeconfig says about the connection is compared with the access provider's entry: a field it
//! sets to another value is a notice (the plan warns, naming the cluster and the fields) when the Secret is in the
//! ClusterProfile's namespace, and a refusal when it is not: a ClusterProfile never sends a credential stored outside
//! its own namespace (where the operator listed it in `secret_reader_namespaces`) anywhere but where that Secret
//! says.

use super::CredentialProblem;
use crate::{
    api::KubeconfigCluster,
    domain::{
        exec::server_host_port,
        kubeconfig::{Connection, KubeconfigPolicy, for_cluster, select},
        text::shown,
    },
};

/// What the bridge writes for the kubeconfig `bytes` of Secret `secret` (`namespace/name`) sent to `cluster`, and
/// the notice for the plan when the Secret's kubeconfig points elsewhere. `foreign`: the Secret is outside the
/// ClusterProfile's namespace (then pointing elsewhere is refused).
pub(super) fn credential_for(
    secret: &str,
    bytes: &[u8],
    policy: &KubeconfigPolicy,
    context: Option<&str>,
    cluster: &KubeconfigCluster,
    foreign: bool,
) -> Result<(Vec<u8>, Option<String>), CredentialProblem> {
    let refused = |reason: String| CredentialProblem::Kubeconfig {
        secret: secret.to_string(),
        reason,
    };
    let stored = select(bytes, policy, context).map_err(|e| refused(e.to_string()))?;
    user_has_credential(&stored).map_err(|why| refused(why.into()))?;
    let connection = |reason: String| CredentialProblem::SecretReaderConnection { reason };
    if cluster.server.trim().is_empty() {
        return Err(connection(
            "the access provider's cluster entry has no server (credentials.secret_reader_mode = \
             \"whole_kubeconfig\" connects with the Secret's kubeconfig instead)"
                .into(),
        ));
    }
    let written = for_cluster(cluster, &stored, policy).map_err(|e| {
        connection(format!(
            "the access provider's cluster entry: {}",
            e.to_string().replace("clusters[0].cluster.", "cluster.")
        ))
    })?;
    let target = select(&written, policy, None).map_err(|e| connection(e.to_string()))?;
    let differing = differences(&stored, &target);
    if differing.is_empty() {
        return Ok((written, None));
    }
    let what = format!("the kubeconfig in Secret {secret} {}", differing.join(", "));
    if foreign {
        return Err(connection(format!(
            "{what}; the Secret is outside the ClusterProfile's namespace, and a ClusterProfile never sends a \
             credential stored there anywhere but where that kubeconfig says (credentials.secret_reader_mode = \
             \"whole_kubeconfig\" uses the Secret's kubeconfig as it is)"
        )));
    }
    Ok((
        written,
        Some(format!(
            "{what}; the bridge connects as the access provider's cluster entry says"
        )),
    ))
}

/// Why the user of the chosen context cannot authenticate, if it cannot: upstream's plugin returns a token and/or a
/// client certificate with its key, and refuses a user with neither (the bridge also passes basic auth and, when the
/// policy allows it, an `exec` user on).
fn user_has_credential(c: &Connection) -> Result<(), &'static str> {
    match (&c.client_certificate, &c.client_key) {
        (Some(_), None) | (None, Some(_)) => {
            return Err(
                "the chosen context's user has a client certificate without its key, or a key without its \
                 certificate",
            );
        }
        _ => {}
    }
    let any = c.token.is_some()
        || c.client_certificate.is_some()
        || (c.username.is_some() && c.password.is_some())
        || c.exec.is_some();
    if any {
        Ok(())
    } else {
        Err("the chosen context's user has no credential (token, client certificate and key)")
    }
}

/// The connection fields that the Secret's kubeconfig (`stored`) sets to another value than the access provider's
/// entry (`target`), and a proxy the entry adds, in words (hosts only, escaped and bounded).
fn differences(stored: &Connection, target: &Connection) -> Vec<String> {
    let mut out = Vec::new();
    if !same_server(&stored.host, &target.host) {
        out.push(format!(
            "names server {} where the access provider names {}",
            host_of(&stored.host),
            host_of(&target.host)
        ));
    }
    let pem = |s: &Option<String>| s.as_deref().map(str::trim).map(str::to_string);
    if stored.cluster_ca_certificate.is_some()
        && pem(&stored.cluster_ca_certificate) != pem(&target.cluster_ca_certificate)
    {
        out.push("trusts another certificate-authority-data".into());
    }
    if stored.tls_server_name.is_some() && stored.tls_server_name != target.tls_server_name {
        out.push("sets another tls-server-name".into());
    }
    if (stored.proxy_url.is_some() || target.proxy_url.is_some())
        && stored.proxy_url != target.proxy_url
    {
        out.push("sets another proxy-url".into());
    }
    out
}

/// Whether two server URLs name the same endpoint: equal but for a trailing `/`, or with equal scheme, host (any
/// case), port (explicit or the scheme's default) and path.
fn same_server(a: &str, b: &str) -> bool {
    let path = |s: &str| {
        let rest = s.split_once("://").map_or(s, |(_, r)| r);
        rest.find('/')
            .map_or("", |i| &rest[i..])
            .trim_end_matches('/')
            .to_string()
    };
    let scheme = |s: &str| s.split_once("://").map(|(p, _)| p.to_ascii_lowercase());
    a.trim_end_matches('/') == b.trim_end_matches('/')
        || (server_host_port(a).is_some()
            && server_host_port(a) == server_host_port(b)
            && scheme(a) == scheme(b)
            && path(a) == path(b))
}

/// The host and port of a server URL for a diagnostic (no user info, no path), escaped and bounded.
fn host_of(server: &str) -> String {
    match server_host_port(server) {
        Some((host, Some(port))) => shown(&format!("{host}:{port}"), 80),
        Some((host, None)) => shown(&host, 80),
        None => "an unparsable address".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(server: &str) -> KubeconfigCluster {
        KubeconfigCluster {
            server: server.into(),
            ..Default::default()
        }
    }

    fn kubeconfig(server: &str, user: &str) -> String {
        format!(
            "{{\"clusters\":[{{\"name\":\"c\",\"cluster\":{{\"server\":\"{server}\"}}}}],\
             \"users\":[{{\"name\":\"u\",\"user\":{user}}}],\
             \"contexts\":[{{\"name\":\"x\",\"context\":{{\"cluster\":\"c\",\"user\":\"u\"}}}}],\
             \"current-context\":\"x\"}}"
        )
    }

    fn written_server(bytes: &[u8]) -> String {
        let v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        v["clusters"][0]["cluster"]["server"]
            .as_str()
            .unwrap()
            .to_string()
    }

    const TOKEN: &str = "{\"token\":\"canary-token\"}";

    #[test]
    fn the_profile_chooses_the_server_and_the_secret_the_user() {
        let p = KubeconfigPolicy::default();
        let kc = kubeconfig("https://secret.example:6443", TOKEN);
        let (w, notice) = credential_for(
            "a/s",
            kc.as_bytes(),
            &p,
            None,
            &cluster("https://profile.example:443"),
            false,
        )
        .unwrap();
        assert_eq!(written_server(&w), "https://profile.example:443");
        let notice = notice.unwrap();
        assert!(
            notice.contains("secret.example:6443")
                && notice.contains("profile.example:443")
                && notice.contains("a/s")
                && !notice.contains("canary"),
            "{notice}"
        );
        let v: serde_json::Value = serde_json::from_slice(&w).unwrap();
        assert_eq!(v["users"][0]["user"]["token"], "canary-token");
        // The same endpoint spelled otherwise: no notice.
        for same in [
            "https://SECRET.example:6443/",
            "https://secret.example:6443",
        ] {
            let (_, n) =
                credential_for("a/s", kc.as_bytes(), &p, None, &cluster(same), false).unwrap();
            assert_eq!(n, None, "{same}");
        }
        let kc443 = kubeconfig("https://secret.example", TOKEN);
        let (_, n) = credential_for(
            "a/s",
            kc443.as_bytes(),
            &p,
            None,
            &cluster("https://secret.example:443"),
            false,
        )
        .unwrap();
        assert_eq!(n, None);
        // Outside the profile's namespace: refused, naming the rule.
        let e = credential_for(
            "vault/s",
            kc.as_bytes(),
            &p,
            None,
            &cluster("https://profile.example"),
            true,
        )
        .unwrap_err();
        assert!(
            matches!(e, CredentialProblem::SecretReaderConnection { .. })
                && e.to_string()
                    .contains("outside the ClusterProfile's namespace"),
            "{e}"
        );
        // ... and accepted when it points where the Secret says.
        credential_for(
            "vault/s",
            kc.as_bytes(),
            &p,
            None,
            &cluster("https://secret.example:6443"),
            true,
        )
        .unwrap();
    }

    #[test]
    fn a_proxy_a_ca_or_a_server_name_the_profile_changes_is_a_notice() {
        let p = KubeconfigPolicy::default();
        let kc = kubeconfig("https://s.example", TOKEN);
        let mut c = cluster("https://s.example");
        c.proxy_url = Some("http://proxy.example:3128".into());
        let (w, n) = credential_for("a/s", kc.as_bytes(), &p, None, &c, false).unwrap();
        assert!(n.unwrap().contains("proxy-url"));
        let v: serde_json::Value = serde_json::from_slice(&w).unwrap();
        assert_eq!(
            v["clusters"][0]["cluster"]["proxy-url"],
            "http://proxy.example:3128"
        );
        // A CA the Secret's kubeconfig trusts and the profile's entry replaces.
        use base64::Engine as _;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let mut with_ca: serde_json::Value = serde_json::from_str(&kc).unwrap();
        with_ca["clusters"][0]["cluster"]["certificate-authority-data"] =
            b64("-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----\n").into();
        let mut c = cluster("https://s.example");
        c.certificate_authority_data = Some(b64(
            "-----BEGIN CERTIFICATE-----\nB\n-----END CERTIFICATE-----\n",
        ));
        let with_ca = with_ca.to_string();
        let (_, n) = credential_for("a/s", with_ca.as_bytes(), &p, None, &c, false).unwrap();
        assert!(n.unwrap().contains("certificate-authority-data"));
        c.certificate_authority_data = None;
        let (_, n) = credential_for("a/s", with_ca.as_bytes(), &p, None, &c, false).unwrap();
        assert!(n.unwrap().contains("certificate-authority-data"), "dropped");
        // The profile's TLS settings are written (upstream's library drops tls-server-name and insecure).
        let mut c = cluster("https://s.example");
        c.tls_server_name = Some("member.internal".into());
        let (w, n) = credential_for("a/s", kc.as_bytes(), &p, None, &c, false).unwrap();
        assert_eq!(n, None, "the Secret sets no tls-server-name");
        let v: serde_json::Value = serde_json::from_slice(&w).unwrap();
        assert_eq!(
            v["clusters"][0]["cluster"]["tls-server-name"],
            "member.internal"
        );
    }

    #[test]
    fn a_user_without_a_credential_or_a_bad_cluster_entry_is_refused() {
        let p = KubeconfigPolicy::default();
        let c = cluster("https://s.example");
        for user in [
            "{}",
            "{\"client-certificate-data\":\"LS0tLS1CRUdJTg==\"}",
            "{\"username\":\"u\"}",
        ] {
            let kc = kubeconfig("https://s.example", user);
            let e = credential_for("a/s", kc.as_bytes(), &p, None, &c, false).unwrap_err();
            assert!(
                matches!(e, CredentialProblem::Kubeconfig { .. }),
                "{user}: {e}"
            );
        }
        let kc = kubeconfig("https://s.example", TOKEN);
        let e = credential_for("a/s", kc.as_bytes(), &p, None, &cluster(""), false).unwrap_err();
        assert!(e.to_string().contains("no server"), "{e}");
        let mut bad = cluster("https://s.example");
        bad.certificate_authority_data = Some("not base64!".into());
        let e = credential_for("a/s", kc.as_bytes(), &p, None, &bad, false).unwrap_err();
        assert!(
            e.to_string().contains("cluster.certificate-authority-data"),
            "{e}"
        );
        let bad = cluster("https://s.example\u{7}");
        let e = credential_for("a/s", kc.as_bytes(), &p, None, &bad, false).unwrap_err();
        assert!(
            matches!(e, CredentialProblem::SecretReaderConnection { .. }),
            "{e}"
        );
    }
}
