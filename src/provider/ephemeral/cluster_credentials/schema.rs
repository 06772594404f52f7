//! The schema of `sveltos_cluster_credentials` (the ClusterProfile's identity and `credentials` block; the
//! connection attributes it results in, all sensitive) and the result value.

use crate::runtime::credentials::ProfileCredentials;
use crate::{
    domain::kubeconfig::Connection,
    provider::blocks::credentials as credentials_block,
    tfplugin::{Schema, Value, schema::Attribute},
};

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
        "The kubeconfig itself, as the bridge would write it for Sveltos: rebuilt from the checked source (a \
         Secret's kubeconfig, never one whose user runs an `exec` plugin), or the static kubeconfig built from an \
         exec access provider's credential.",
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

/// The result value: the configuration with the connection attributes filled in.
pub(super) fn result(config: &Value, c: &Connection, minted: &ProfileCredentials) -> Value {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::credentials::CredentialSource;

    const CANARY: &str = "canary-eph-51d0";

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
        let minted = ProfileCredentials {
            kubeconfig: format!("token: {CANARY}").into_bytes(),
            expires_at: Some("2030-01-01T00:00:00Z".into()),
            source: CredentialSource::Exec {
                provider: "p".into(),
            },
            invocation_sha256: Some("ab".into()),
            notice: None,
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
}
