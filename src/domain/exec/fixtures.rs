//! Test fixtures shared by the exec modules' tests: a scoped providers file, a profile's access provider with
//! every extension, and an empty runner environment.

use std::collections::BTreeMap;

use super::*;
use crate::api::{AccessProvider, KubeconfigCluster, NamedExtension};

/// A scope for every namespace allowing these profile variables.
pub(crate) fn scope(profile_env: &[&str]) -> ExecScope {
    ExecScope {
        namespaces: NamespaceScope::Any,
        servers: ServerAllowList::default(),
        profile_env: profile_env.iter().map(|s| s.to_string()).collect(),
    }
}

pub(crate) fn file() -> ProvidersFile {
    ProvidersFile::parse(
        br#"{"providers":[{"name":"tok","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"/usr/bin/get-token","args":["--a"],"env":[{"name":"X","value":"1"}],"provideClusterInfo":true},
        "profileSourcedCLIArgsPolicy":"Append","profileSourcedEnvVarsPolicy":"AppendIfNotExists"}]}"#,
    )
    .unwrap()
    .scoped(&BTreeMap::from([(
        "tok".to_string(),
        scope(&["X", "Y", "OK", "AUDIENCE", "region_1"]),
    )]))
}

/// The runner's environment sets nothing.
pub(crate) fn bare(_: &str) -> bool {
    false
}

pub(crate) fn provider() -> AccessProvider {
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
