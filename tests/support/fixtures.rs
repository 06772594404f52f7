//! Test data shared by the integration tests and the benchmarks (both as `support::fixtures`): kubeconfig text,
//! ClusterProfile and Secret values, and the head of a configuration using the provider. Pure values only:
//! nothing here talks to a cluster.

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use tfsveltos::api::{ClusterManager, ClusterProfile, ClusterProfileSpec};

/// The provider's source address, as a configuration writes it in `required_providers`.
pub const PROVIDER_SOURCE: &str = "clusterinventory/sveltos";

/// A kubeconfig with one cluster `cluster` at `server`, a user authenticating with `token`, and a current
/// context joining them.
pub fn kubeconfig_for(cluster: &str, server: &str, token: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {cluster}\n  cluster:\n    server: {server}\n\
         users:\n- name: u\n  user:\n    token: {token}\ncontexts:\n- name: {cluster}\n  context: {{cluster: {cluster}, user: u}}\n\
         current-context: {cluster}\n"
    )
}

/// A kubeconfig whose server is unreachable (`https://127.0.0.1:1`), for tests that follow where its
/// `token` goes rather than use it.
pub fn unreachable_kubeconfig(token: &str) -> String {
    kubeconfig_for("c", "https://127.0.0.1:1", token)
}

/// `(key, value)` pairs as a label map.
pub fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// ClusterProfile `namespace/name`, managed by `manager`, display name `"<name> display"`, with `labels`.
pub fn cluster_profile(
    namespace: &str,
    name: &str,
    manager: &str,
    label_pairs: &[(&str, &str)],
) -> ClusterProfile {
    let mut p = ClusterProfile::new(
        name,
        ClusterProfileSpec {
            display_name: Some(format!("{name} display")),
            cluster_manager: ClusterManager {
                name: manager.into(),
            },
        },
    );
    p.metadata.namespace = Some(namespace.into());
    p.metadata.labels = Some(labels(label_pairs));
    p
}

/// Secret `namespace/name` with `labels` and `data` (values as bytes).
pub fn secret<V: AsRef<[u8]>>(
    namespace: &str,
    name: &str,
    label_pairs: &[(&str, &str)],
    data: &[(&str, V)],
) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            labels: Some(labels(label_pairs)),
            ..Default::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), ByteString(v.as_ref().to_vec())))
                .collect(),
        ),
        ..Default::default()
    }
}

/// An HCL string literal (quotes and backslashes escaped).
pub fn hcl_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A `main.tf` of the provider from [`PROVIDER_SOURCE`] configured with `host` only (such as a test proxy's URL,
/// without credentials), then `resources`.
pub fn main_with_host(host: &str, resources: &str) -> String {
    format!(
        "{}\nprovider \"sveltos\" {{\n  host = {}\n}}\n{resources}",
        required_providers(PROVIDER_SOURCE, None),
        hcl_string(host)
    )
}

/// A `terraform { required_providers { sveltos = ... } }` block for `source`, with a version constraint
/// when given.
pub fn required_providers(source: &str, version: Option<&str>) -> String {
    let version = version
        .map(|v| format!("\n      version = {}", hcl_string(v)))
        .unwrap_or_default();
    format!(
        "terraform {{\n  required_providers {{\n    sveltos = {{\n      source  = {}{version}\n    }}\n  }}\n}}\n",
        hcl_string(source)
    )
}

/// The head of a configuration using our provider (at `version`, when given) against the cluster of
/// `kubeconfig`: [`required_providers`] plus `provider "sveltos" { config_path = ... }`.
pub fn provider_header(kubeconfig: &Path, version: Option<&str>) -> String {
    format!(
        "{}\nprovider \"sveltos\" {{\n  config_path = {}\n}}\n",
        required_providers(PROVIDER_SOURCE, version),
        hcl_string(&kubeconfig.display().to_string())
    )
}

/// What the bridge writes for Sveltos when it bridges kubeconfig `source`: never the source's bytes, but the
/// checked context rewritten (`tfsveltos::domain::kubeconfig::canonical`).
pub fn written(source: &str) -> Vec<u8> {
    tfsveltos::domain::kubeconfig::canonical(source.as_bytes(), &Default::default(), None)
        .expect("an accepted kubeconfig")
}

/// The status of a ClusterProfile with one `kubeconfig-secretreader` access provider whose `cluster` entry is the
/// first cluster of `kubeconfig` (its `server` and `certificate-authority-data`: where upstream consumers connect)
/// and whose exec extension is `reference` (`{"name": ..., "key": ...}`).
pub fn secret_reader_status(kubeconfig: &str, reference: serde_json::Value) -> serde_json::Value {
    let kc: serde_json::Value = serde_saphyr::from_str(kubeconfig).expect("a kubeconfig");
    let mut cluster = serde_json::json!({
        "server": kc["clusters"][0]["cluster"]["server"],
        "extensions": [{"name": tfsveltos::api::keys::EXEC_EXTENSION, "extension": reference}],
    });
    if let Some(ca) = kc["clusters"][0]["cluster"]["certificate-authority-data"].as_str() {
        cluster["certificate-authority-data"] = ca.into();
    }
    serde_json::json!({"accessProviders": [{
        "name": tfsveltos::api::keys::SECRET_READER_PROVIDER,
        "cluster": cluster,
    }]})
}
