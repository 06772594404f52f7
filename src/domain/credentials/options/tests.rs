use std::{collections::BTreeSet, time::Duration};

use super::{
    checks::{indexed, path},
    *,
};
use crate::domain::{exec::NamespaceScope, problem::Step};

fn err_paths(c: CredentialsConfig) -> Vec<Vec<Step>> {
    c.validate()
        .unwrap_err()
        .into_iter()
        .map(|p| p.path)
        .collect()
}

#[test]
fn defaults_and_mapping() {
    assert_eq!(validate(None).unwrap(), CredentialOptions::default());
    let o = CredentialsConfig {
        secret_label: Some("example.com/profile".into()),
        consumer: Some("sveltos".into()),
        profile_namespace_secrets: Some(false),
        kubeconfig_keys: Some(vec!["kc".into()]),
        use_access_providers: Some(false),
        refresh_before: Some("5m".into()),
        secret_namespaces: Some(vec!["creds".into()]),
        secret_reader_namespaces: Some(vec!["vault".into()]),
        allow_exec_kubeconfigs: Some(true),
        exec_allowed_servers: Some(vec!["*.eks.amazonaws.com".into(), "10.0.0.1:6443".into()]),
        secret_reader_mode: Some("whole_kubeconfig".into()),
        ..Default::default()
    }
    .validate()
    .unwrap();
    assert_eq!(o.secret_reader_mode, SecretReaderMode::WholeKubeconfig);
    assert_eq!(
        CredentialOptions::default().secret_reader_mode,
        SecretReaderMode::Credential
    );
    for v in SecretReaderMode::VALUES {
        assert!(SecretReaderMode::parse(v).is_some(), "{v}");
    }
    assert_eq!(o.secret_label, "example.com/profile");
    assert_eq!(o.consumer.as_deref(), Some("sveltos"));
    assert!(o.consumer_only);
    assert_eq!(o.refresh_before, Duration::from_secs(300));
    assert!(o.secret_namespaces.contains("creds"));
    assert!(o.secret_reader_namespaces.contains("vault"));
    assert!(o.allow_exec_kubeconfigs && !o.use_access_providers);
}

#[test]
fn every_bad_value_is_an_error_at_its_path() {
    let c = CredentialsConfig {
        secret_label: Some(String::new()),
        consumer: Some("not a label value".into()),
        kubeconfig_keys: Some(vec!["ok".into(), String::new()]),
        exec_providers_file: Some(" ".into()),
        refresh_before: Some("soon".into()),
        secret_namespaces: Some(vec!["Bad_NS".into()]),
        secret_reader_namespaces: Some(vec!["ok".into(), "x".repeat(64)]),
        exec_allowed_servers: Some(vec!["http://x".into()]),
        secret_reader_mode: Some("Credential".into()),
        ..Default::default()
    };
    let paths = err_paths(c);
    for want in [
        path("secret_label"),
        path("consumer"),
        indexed("kubeconfig_keys", 1),
        path("exec_providers_file"),
        path("refresh_before"),
        indexed("secret_namespaces", 0),
        indexed("secret_reader_namespaces", 1),
        indexed("exec_allowed_servers", 0),
        path("secret_reader_mode"),
    ] {
        assert!(paths.contains(&want), "{want:?} not in {paths:?}");
    }
    assert_eq!(
        err_paths(CredentialsConfig {
            kubeconfig_keys: Some(vec![]),
            ..Default::default()
        }),
        vec![path("kubeconfig_keys")]
    );
}

#[test]
fn consumer_defaults_to_sveltos_and_the_empty_string_turns_it_off() {
    let d = validate(None).unwrap();
    assert_eq!(d.consumer.as_deref(), Some(DEFAULT_CONSUMER));
    assert!(
        !d.consumer_only,
        "the default keeps Secrets next to their profile"
    );
    let off = CredentialsConfig {
        consumer: Some(String::new()),
        ..Default::default()
    }
    .validate()
    .unwrap();
    assert_eq!((off.consumer, off.consumer_only), (None, false));
}

#[test]
fn an_explicit_default_consumer_behaves_as_the_unset_one() {
    let explicit = CredentialsConfig {
        consumer: Some(DEFAULT_CONSUMER.into()),
        ..Default::default()
    }
    .validate()
    .unwrap();
    assert_eq!(explicit, validate(None).unwrap());
    let only = CredentialsConfig {
        profile_namespace_secrets: Some(false),
        ..Default::default()
    }
    .validate()
    .unwrap();
    assert!(only.consumer_only);
    assert_eq!(only.consumer.as_deref(), Some(DEFAULT_CONSUMER));
}

fn provider_path(provider: &str, attr: &'static str, i: Option<usize>) -> Vec<Step> {
    let mut p = vec![
        Step::Attr("credentials"),
        Step::Attr("exec_providers"),
        Step::Key(provider.into()),
        Step::Attr(attr),
    ];
    p.extend(i.map(Step::Index));
    p
}

fn exec_providers(entries: &[(&str, ExecProviderConfig)]) -> CredentialsConfig {
    CredentialsConfig {
        exec_providers: Some(
            entries
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        ),
        ..Default::default()
    }
}

fn strings(v: &[&str]) -> Option<Vec<String>> {
    Some(v.iter().map(|s| s.to_string()).collect())
}

#[test]
fn exec_providers_are_scopes_and_nothing_is_allowed_by_default() {
    assert!(validate(None).unwrap().exec_providers.is_empty());
    let o = exec_providers(&[
        (
            "aws",
            ExecProviderConfig {
                namespaces: strings(&["team-a", "team-b"]),
                servers: strings(&["*.eks.amazonaws.com"]),
                profile_env: strings(&["AWS_REGION"]),
            },
        ),
        (
            "gke",
            ExecProviderConfig {
                namespaces: strings(&["*"]),
                ..Default::default()
            },
        ),
    ])
    .validate()
    .unwrap();
    let aws = &o.exec_providers["aws"];
    assert!(aws.allows_namespace("team-b") && !aws.allows_namespace("team-c"));
    assert!(aws.servers.allows("https://x.eks.amazonaws.com"));
    assert!(!aws.servers.allows("https://evil.example"));
    assert_eq!(aws.profile_env, BTreeSet::from(["AWS_REGION".to_string()]));
    let gke = &o.exec_providers["gke"];
    assert_eq!(gke.namespaces, NamespaceScope::Any);
    assert!(gke.servers.is_empty() && gke.profile_env.is_empty());
}

#[test]
fn bad_exec_providers_entries_are_errors_at_their_path() {
    let paths = err_paths(exec_providers(&[
        (
            "aws",
            ExecProviderConfig {
                namespaces: strings(&["team-a", "Bad_NS", "*"]),
                servers: strings(&["ok.example", "https://x"]),
                profile_env: strings(&["AWS_REGION", "LD_PRELOAD", "https_proxy", "A-B"]),
            },
        ),
        ("none", ExecProviderConfig::default()),
        (
            "empty",
            ExecProviderConfig {
                namespaces: Some(vec![]),
                ..Default::default()
            },
        ),
    ]));
    let want = [
        provider_path("aws", "namespaces", Some(1)),
        provider_path("aws", "namespaces", Some(2)),
        provider_path("aws", "servers", Some(1)),
        provider_path("aws", "profile_env", Some(1)),
        provider_path("aws", "profile_env", Some(2)),
        provider_path("aws", "profile_env", Some(3)),
        provider_path("none", "namespaces", None),
        provider_path("empty", "namespaces", None),
    ];
    let mut sorted = paths.clone();
    sorted.sort_by_key(|p| format!("{p:?}"));
    let mut want_sorted = want.to_vec();
    want_sorted.sort_by_key(|p| format!("{p:?}"));
    assert_eq!(sorted, want_sorted);
    // The denylist's reason is given.
    let problems = exec_providers(&[(
        "aws",
        ExecProviderConfig {
            namespaces: strings(&["*"]),
            profile_env: strings(&["PATH"]),
            ..Default::default()
        },
    )])
    .validate()
    .unwrap_err();
    assert!(
        problems[0].detail.contains("PATH") && problems[0].detail.contains("program"),
        "{problems:?}"
    );
}

#[test]
fn exec_providers_keep_the_serde_shape_backward_compatible() {
    // A record written before exec_providers existed still reads, and one without it writes no new key.
    let old: CredentialsConfig =
        serde_json::from_str(r#"{"exec_providers_file":"/p.json"}"#).unwrap();
    assert_eq!(old.exec_providers, None);
    assert_eq!(
        serde_json::to_string(&old).unwrap(),
        r#"{"exec_providers_file":"/p.json"}"#
    );
    let new = exec_providers(&[(
        "aws",
        ExecProviderConfig {
            namespaces: strings(&["*"]),
            ..Default::default()
        },
    )]);
    let text = serde_json::to_string(&new).unwrap();
    assert_eq!(text, r#"{"exec_providers":{"aws":{"namespaces":["*"]}}}"#);
    assert_eq!(
        serde_json::from_str::<CredentialsConfig>(&text).unwrap(),
        new
    );
}

#[test]
fn server_patterns() {
    for ok in [
        "api.example.com",
        "*.example.com",
        "10.0.0.1",
        "host:6443",
        "[::1]:6443",
    ] {
        assert!(server_pattern(ok).is_ok(), "{ok}");
    }
    let huge = "a".repeat(100_000);
    for bad in [
        "",
        "*.",
        "https://x",
        "a b",
        "host:port",
        "*.[::1]",
        huge.as_str(),
    ] {
        assert!(server_pattern(bad).is_err(), "{bad}");
    }
}

/// The `credentials` block as kept in the configuration record: only what was written (never `null`), so that a
/// record written before an attribute existed reads the same.
#[test]
fn the_written_block_keeps_only_what_was_written() {
    assert_eq!(
        serde_json::to_string(&CredentialsConfig::default()).unwrap(),
        "{}"
    );
    let c = CredentialsConfig {
        secret_label: Some("l".into()),
        exec_providers: Some(
            [(
                "tok".to_string(),
                ExecProviderConfig {
                    profile_env: Some(vec!["REGION".into()]),
                    ..Default::default()
                },
            )]
            .into(),
        ),
        ..Default::default()
    };
    assert_eq!(
        serde_json::to_string(&c).unwrap(),
        r#"{"secret_label":"l","exec_providers":{"tok":{"profile_env":["REGION"]}}}"#
    );
}
