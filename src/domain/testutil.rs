//! Fixtures for the domain core's unit tests.

use std::collections::BTreeMap;

use k8s_openapi::{
    ByteString,
    api::core::v1::Secret,
    apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time},
};

use crate::api::*;

pub const KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\nusers:\n- name: u\n  user:\n    token: canary-secret-token\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n";

pub fn profile(ns: &str, name: &str, labels: &[(&str, &str)]) -> ClusterProfile {
    let mut p = ClusterProfile::new(
        name,
        ClusterProfileSpec {
            display_name: Some(format!("{name} display")),
            cluster_manager: ClusterManager { name: "ocm".into() },
        },
    );
    p.metadata.namespace = Some(ns.into());
    p.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    p
}

pub fn set_healthy(p: &mut ClusterProfile, healthy: bool) {
    let status = p.status.get_or_insert_with(Default::default);
    status.conditions = vec![Condition {
        type_: keys::CONTROL_PLANE_HEALTHY.into(),
        status: if healthy { "True" } else { "False" }.into(),
        reason: "Test".into(),
        message: String::new(),
        last_transition_time: Time(jiff::Timestamp::UNIX_EPOCH),
        observed_generation: None,
    }];
}

pub fn add_provider(p: &mut ClusterProfile, name: &str, exec_ext: serde_json::Value) {
    let status = p.status.get_or_insert_with(Default::default);
    status.access_providers.push(AccessProvider {
        name: name.into(),
        cluster: Some(KubeconfigCluster {
            server: "https://127.0.0.1:6443".into(),
            extensions: vec![NamedExtension {
                name: keys::EXEC_EXTENSION.into(),
                extension: exec_ext,
            }],
            ..Default::default()
        }),
    });
}

pub fn labelled_secret(
    ns: &str,
    name: &str,
    profile: &str,
    profile_ns: Option<&str>,
    data: &[(&str, &str)],
) -> Secret {
    let mut labels =
        BTreeMap::from([(keys::CLUSTER_PROFILE_LABEL.to_string(), profile.to_string())]);
    if let Some(pns) = profile_ns {
        labels.insert(keys::CLUSTER_PROFILE_NAMESPACE_LABEL.into(), pns.into());
    }
    Secret {
        metadata: ObjectMeta {
            namespace: Some(ns.into()),
            name: Some(name.into()),
            labels: Some(labels),
            ..Default::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                .collect(),
        ),
        ..Default::default()
    }
}
