use std::collections::BTreeMap;

use super::*;
use crate::domain::credentials::CredentialProblem;
use crate::domain::{
    exec::{ExecScope, NamespaceScope, ServerAllowList},
    testutil::*,
};

fn opts() -> CredentialOptions {
    CredentialOptions::default()
}

#[test]
fn labelled_secret_in_profile_namespace() {
    let p = profile("team-a", "c1", &[]);
    let secrets = [labelled_secret(
        "team-a",
        "c1-kc",
        "c1",
        None,
        &[("Config", KUBECONFIG)],
    )];
    let idx = SecretIndex::new(&secrets, &opts(), &BTreeMap::new());
    assert_eq!(
        locate(&p, &opts(), None, &idx),
        Lookup::Found(CredentialSource::LabelledSecret {
            namespace: "team-a".into(),
            name: "c1-kc".into(),
            key: "Config".into()
        })
    );
}

#[test]
fn secret_in_another_namespace_needs_the_operators_consent() {
    let p = profile("team-a", "c1", &[]);
    let secrets = [labelled_secret(
        "creds",
        "x",
        "c1",
        Some("team-a"),
        &[("config", KUBECONFIG)],
    )];
    // Attack: whoever writes namespace `creds` cannot feed team-a's profile by labelling a Secret.
    let idx = SecretIndex::new(&secrets, &opts(), &BTreeMap::new());
    let Lookup::Unusable(CredentialProblem::NotFound { looked_at }) =
        locate(&p, &opts(), None, &idx)
    else {
        panic!("a cross-namespace Secret was used without consent")
    };
    assert!(
        looked_at.contains("creds/x") && looked_at.contains("secret_namespaces"),
        "{looked_at}"
    );
    // Listed by the operator: used.
    let o = CredentialOptions {
        secret_namespaces: ["creds".to_string()].into(),
        ..opts()
    };
    let idx = SecretIndex::new(&secrets, &o, &BTreeMap::new());
    assert!(
        matches!(locate(&p, &o, None, &idx), Lookup::Found(CredentialSource::LabelledSecret { namespace, .. }) if namespace == "creds")
    );
    // A consumer-labelled namespace: used.
    let o = CredentialOptions {
        consumer: Some("sveltos".into()),
        consumer_only: true,
        ..opts()
    };
    let labels = BTreeMap::from([(
        "creds".to_string(),
        BTreeMap::from([(
            keys::CONSUMER_NAMESPACE_LABEL.to_string(),
            "sveltos".to_string(),
        )]),
    )]);
    let idx = SecretIndex::new(&secrets, &o, &labels);
    assert!(matches!(locate(&p, &o, None, &idx), Lookup::Found(_)));
    // Without the namespace label the Secret belongs to a profile in its own namespace.
    let secrets = [labelled_secret(
        "creds",
        "x",
        "c1",
        None,
        &[("config", KUBECONFIG)],
    )];
    let idx = SecretIndex::new(&secrets, &opts(), &BTreeMap::new());
    assert!(matches!(
        locate(&p, &opts(), None, &idx),
        Lookup::Unusable(CredentialProblem::NotFound { .. })
    ));
}

#[test]
fn access_provider_names_from_a_profile_are_escaped_and_bounded() {
    let mut p = profile("team-a", "c1", &[]);
    let hostile = format!("x\u{1b}[31m{}", "y".repeat(10_000));
    add_provider(&mut p, &hostile, serde_json::json!({}));
    let Lookup::Unusable(problem) = locate(&p, &opts(), None, &SecretIndex::default()) else {
        panic!("no source expected")
    };
    let text = problem.to_string();
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(text.len() < 2_000, "{}", text.len());
}

#[test]
fn the_default_consumer_accepts_its_namespaces_and_the_profiles_own() {
    let p = profile("team-a", "c1", &[]);
    let o = opts();
    assert_eq!(o.consumer.as_deref(), Some("sveltos"));
    let kep = labelled_secret(
        "inventory",
        "kep",
        "c1",
        Some("team-a"),
        &[("Config", KUBECONFIG)],
    );
    let own = labelled_secret("team-a", "seed", "c1", None, &[("config", KUBECONFIG)]);
    let ns_labels = BTreeMap::from([(
        "inventory".to_string(),
        BTreeMap::from([(
            keys::CONSUMER_NAMESPACE_LABEL.to_string(),
            "sveltos".to_string(),
        )]),
    )]);
    for (secrets, want) in [(vec![kep.clone()], "kep"), (vec![own.clone()], "seed")] {
        let idx = SecretIndex::new(&secrets, &o, &ns_labels);
        assert!(
            matches!(locate(&p, &o, None, &idx), Lookup::Found(CredentialSource::LabelledSecret { name, .. }) if name == want),
            "{want}"
        );
    }
    // Labelled for another consumer: refused.
    let other = BTreeMap::from([(
        "inventory".to_string(),
        BTreeMap::from([(
            keys::CONSUMER_NAMESPACE_LABEL.to_string(),
            "argo".to_string(),
        )]),
    )]);
    let secrets = [kep];
    let idx = SecretIndex::new(&secrets, &o, &other);
    assert!(matches!(
        locate(&p, &o, None, &idx),
        Lookup::Unusable(CredentialProblem::NotFound { .. })
    ));
}

#[test]
fn consumer_filter_ignores_other_namespaces() {
    let p = profile("team-a", "c1", &[]);
    let o = CredentialOptions {
        consumer: Some("sveltos".into()),
        consumer_only: true,
        ..opts()
    };
    let secrets = [
        labelled_secret(
            "other",
            "x",
            "c1",
            Some("team-a"),
            &[("Config", KUBECONFIG)],
        ),
        labelled_secret(
            "consumer-ns",
            "y",
            "c1",
            Some("team-a"),
            &[("Config", KUBECONFIG)],
        ),
    ];
    let ns_labels = BTreeMap::from([(
        "consumer-ns".to_string(),
        BTreeMap::from([(
            keys::CONSUMER_NAMESPACE_LABEL.to_string(),
            "sveltos".to_string(),
        )]),
    )]);
    let idx = SecretIndex::new(&secrets, &o, &ns_labels);
    assert!(
        matches!(locate(&p, &o, None, &idx), Lookup::Found(CredentialSource::LabelledSecret { name, .. }) if name == "y")
    );
    // Without a consumer, both listed by the operator: ambiguous, naming both.
    let o = CredentialOptions {
        secret_namespaces: ["other".to_string(), "consumer-ns".to_string()].into(),
        ..opts()
    };
    let idx = SecretIndex::new(&secrets, &o, &ns_labels);
    assert_eq!(
        locate(&p, &o, None, &idx),
        Lookup::Unusable(CredentialProblem::Ambiguous {
            secrets: vec!["consumer-ns/y".into(), "other/x".into()]
        })
    );
}

#[test]
fn secret_reader_provider_wins_and_defaults_namespace() {
    let mut p = profile("team-a", "c1", &[]);
    add_provider(
        &mut p,
        "kubeconfig-secretreader",
        serde_json::json!({"name": "kc", "key": "value"}),
    );
    let idx = SecretIndex::default();
    assert_eq!(
        locate(&p, &opts(), None, &idx),
        Lookup::Found(CredentialSource::SecretReader {
            namespace: "team-a".into(),
            name: "kc".into(),
            key: Some("value".into()),
            context: None,
        })
    );
    assert_eq!(
        locate(&p, &opts(), None, &idx).describe(),
        "access-provider:kubeconfig-secretreader:team-a/kc#value"
    );
    // Upstream's optional `context` member is carried, and shown.
    let mut p = profile("team-a", "c2", &[]);
    add_provider(
        &mut p,
        "kubeconfig-secretreader",
        serde_json::json!({"name": "kc", "key": "value", "context": "admin@prod"}),
    );
    assert_eq!(
        locate(&p, &opts(), None, &idx).describe(),
        "access-provider:kubeconfig-secretreader:team-a/kc#value@admin@prod"
    );
}

#[test]
fn secret_reader_cannot_name_another_namespace() {
    let mut p = profile("tenant", "c1", &[]);
    // Attack: steal team-b's Secret by naming it from a profile in `tenant`.
    add_provider(
        &mut p,
        "kubeconfig-secretreader",
        serde_json::json!({"name": "prod-admin", "namespace": "team-b", "key": "value"}),
    );
    let idx = SecretIndex::default();
    let lookup = locate(&p, &opts(), None, &idx);
    assert_eq!(
        lookup,
        Lookup::Unusable(CredentialProblem::ForeignSecretReaderNamespace {
            namespace: "team-b".into()
        })
    );
    assert!(
        lookup.describe().contains("team-b"),
        "{}",
        lookup.describe()
    );
    // The same through the `config` member.
    let mut q = profile("tenant", "c2", &[]);
    add_provider(
        &mut q,
        "kubeconfig-secretreader",
        serde_json::json!({"config": {"name": "prod-admin", "namespace": "team-b"}}),
    );
    assert!(matches!(
        locate(&q, &opts(), None, &idx),
        Lookup::Unusable(CredentialProblem::ForeignSecretReaderNamespace { .. })
    ));
    // Allowed by the operator.
    let o = CredentialOptions {
        secret_reader_namespaces: ["team-b".to_string()].into(),
        ..opts()
    };
    assert!(matches!(
        locate(&p, &o, None, &idx),
        Lookup::Found(CredentialSource::SecretReader { namespace, .. }) if namespace == "team-b"
    ));
}

/// A providers file listing `names` in this order (each runs `/bin/true`).
fn providers_file(names: &[&str]) -> ProvidersFile {
    let entries: Vec<String> = names
        .iter()
        .map(|n| {
            format!(
                r#"{{"name":"{n}","execConfig":{{"apiVersion":"client.authentication.k8s.io/v1","command":"/bin/true","args":null,"env":null}}}}"#
            )
        })
        .collect();
    ProvidersFile::parse(format!(r#"{{"providers":[{}]}}"#, entries.join(",")).as_bytes()).unwrap()
}

/// Scopes allowing each of `names` in `namespaces`.
fn scopes(names: &[&str], namespaces: &[&str]) -> BTreeMap<String, ExecScope> {
    names
        .iter()
        .map(|n| {
            let ns = if namespaces == ["*"] {
                NamespaceScope::Any
            } else {
                NamespaceScope::Only(namespaces.iter().map(|s| s.to_string()).collect())
            };
            (
                n.to_string(),
                ExecScope {
                    namespaces: ns,
                    servers: ServerAllowList::default(),
                    profile_env: Default::default(),
                },
            )
        })
        .collect()
}

fn exec(provider: &str) -> Lookup {
    Lookup::Found(CredentialSource::Exec {
        provider: provider.into(),
    })
}

#[test]
fn exec_provider_needs_the_providers_file() {
    let mut p = profile("team-a", "c1", &[]);
    add_provider(&mut p, "token-plugin", serde_json::json!({}));
    let idx = SecretIndex::default();
    let Lookup::Unusable(CredentialProblem::NotFound { looked_at: reason }) =
        locate(&p, &opts(), None, &idx)
    else {
        panic!()
    };
    assert!(reason.contains("exec_providers_file"), "{reason}");
    let file = providers_file(&["token-plugin"]).scoped(&scopes(&["token-plugin"], &["*"]));
    assert_eq!(locate(&p, &opts(), Some(&file), &idx), exec("token-plugin"));
}

/// A profile offering the built-in `kubeconfig-secretreader` first and exec provider `secretreader` second.
fn offering_both() -> ClusterProfile {
    let mut p = profile("team-a", "c1", &[]);
    add_provider(
        &mut p,
        keys::SECRET_READER_PROVIDER,
        serde_json::json!({"name": "kc", "key": "value"}),
    );
    add_provider(
        &mut p,
        "secretreader",
        serde_json::json!({"clusterName": "c1"}),
    );
    p
}

#[test]
fn the_providers_file_order_decides_which_provider_is_used() {
    let p = offering_both();
    let idx = SecretIndex::default();
    let all = scopes(&["secretreader", keys::SECRET_READER_PROVIDER], &["*"]);
    // The file lists secretreader first: it is used, though the profile lists it second.
    let file = providers_file(&["secretreader", keys::SECRET_READER_PROVIDER]).scoped(&all);
    let found = locate(&p, &opts(), Some(&file), &idx);
    assert_eq!(found, exec("secretreader"));
    assert_eq!(found.describe(), "exec:secretreader");
    // The file lists kubeconfig-secretreader first: the built-in reads the named Secret.
    let file = providers_file(&[keys::SECRET_READER_PROVIDER, "secretreader"]).scoped(&all);
    let found = locate(&p, &opts(), Some(&file), &idx);
    assert_eq!(
        found.describe(),
        "access-provider:kubeconfig-secretreader:team-a/kc#value"
    );
    // Not in the file: the built-in comes after every provider of the file ...
    let file = providers_file(&["secretreader"]).scoped(&all);
    assert_eq!(locate(&p, &opts(), Some(&file), &idx), exec("secretreader"));
    // ... and without a providers file it is the only access provider used.
    assert!(matches!(
        locate(&p, &opts(), None, &idx),
        Lookup::Found(CredentialSource::SecretReader { .. })
    ));
    // A provider the file lists but the profile does not offer is skipped.
    let file = providers_file(&["other", "secretreader"])
        .scoped(&scopes(&["other", "secretreader"], &["*"]));
    assert_eq!(locate(&p, &opts(), Some(&file), &idx), exec("secretreader"));
}

#[test]
fn deprecated_credential_providers_count_when_access_providers_lack_the_name() {
    let mut p = profile("team-a", "c1", &[]);
    add_provider(&mut p, "b", serde_json::json!({}));
    let status = p.status.as_mut().unwrap();
    let mut old = status.access_providers[0].clone();
    old.name = "a".into();
    status.credential_providers.push(old);
    let file = providers_file(&["a", "b"]).scoped(&scopes(&["a", "b"], &["*"]));
    assert_eq!(
        locate(&p, &opts(), Some(&file), &SecretIndex::default()),
        exec("a")
    );
}

#[test]
fn an_exec_provider_is_used_only_where_the_operator_allows_it() {
    let mut p = profile("tenant", "c1", &[]);
    add_provider(&mut p, "aws", serde_json::json!({}));
    let idx = SecretIndex::default();
    // In the providers file but not in exec_providers: never used (default-deny), the reason names the attribute.
    let file = providers_file(&["aws"]);
    let Lookup::Unusable(CredentialProblem::NotFound { looked_at }) =
        locate(&p, &opts(), Some(&file), &idx)
    else {
        panic!("an unscoped exec provider was used")
    };
    assert!(
        looked_at.contains(r#"credentials.exec_providers["aws"]"#),
        "{looked_at}"
    );
    // Scoped to another namespace: passed over, naming the namespaces attribute.
    let file = providers_file(&["aws"]).scoped(&scopes(&["aws"], &["team-a"]));
    let Lookup::Unusable(CredentialProblem::NotFound { looked_at }) =
        locate(&p, &opts(), Some(&file), &idx)
    else {
        panic!("an exec provider ran for a namespace it is not allowed in")
    };
    assert!(
        looked_at.contains(r#"credentials.exec_providers["aws"].namespaces"#)
            && looked_at.contains("tenant"),
        "{looked_at}"
    );
    // Passed over means the next source is tried: here a labelled Secret next to the profile.
    let secrets = [labelled_secret(
        "tenant",
        "kc",
        "c1",
        None,
        &[("Config", KUBECONFIG)],
    )];
    let with_secret = SecretIndex::new(&secrets, &opts(), &BTreeMap::new());
    assert!(matches!(
        locate(&p, &opts(), Some(&file), &with_secret),
        Lookup::Found(CredentialSource::LabelledSecret { .. })
    ));
    // Allowed for the namespace: used.
    let file = providers_file(&["aws"]).scoped(&scopes(&["aws"], &["tenant"]));
    assert_eq!(locate(&p, &opts(), Some(&file), &idx), exec("aws"));
}

#[test]
fn an_exec_providers_servers_bind_the_profiles_server() {
    let mut p = profile("team-a", "c1", &[]);
    add_provider(&mut p, "aws", serde_json::json!({}));
    let idx = SecretIndex::default();
    let mut s = scopes(&["aws"], &["*"]);
    s.get_mut("aws").unwrap().servers = ServerAllowList::parse(&["*.eks.amazonaws.com"]).unwrap();
    let file = providers_file(&["aws"]).scoped(&s);
    let set_server = |p: &mut ClusterProfile, server: &str, insecure: Option<bool>| {
        let c = p.status.as_mut().unwrap().access_providers[0]
            .cluster
            .as_mut()
            .unwrap();
        c.server = server.into();
        c.insecure_skip_tls_verify = insecure;
    };
    // Attack: send the token minted with the operator's identity to a server of the profile writer's choice.
    for (server, insecure) in [
        ("https://sink.attacker.example", None),
        ("http://x.eks.amazonaws.com", None),
        ("https://x.eks.amazonaws.com", Some(true)),
    ] {
        set_server(&mut p, server, insecure);
        let found = locate(&p, &opts(), Some(&file), &idx);
        let Lookup::Unusable(CredentialProblem::Exec { provider, reason }) = &found else {
            panic!("{server}: {found:?}")
        };
        assert_eq!(provider, "aws");
        assert!(
            reason.contains(r#"credentials.exec_providers["aws"].servers"#),
            "{reason}"
        );
    }
    set_server(&mut p, "https://abc.gr7.eu-west-1.eks.amazonaws.com", None);
    assert_eq!(locate(&p, &opts(), Some(&file), &idx), exec("aws"));
}

#[test]
fn a_bad_secret_reader_reference_refuses_the_profile_and_requests_nothing() {
    let long = "a".repeat(10_000);
    for (ext, member) in [
        (
            serde_json::json!({"name": "x?watch=true", "key": "k"}),
            "name",
        ),
        (
            serde_json::json!({"name": "../../kube-system/secrets/x"}),
            "name",
        ),
        (serde_json::json!({"name": "x#frag"}), "name"),
        (serde_json::json!({"name": "a b"}), "name"),
        (serde_json::json!({"name": "Upper"}), "name"),
        (serde_json::json!({"name": long.clone()}), "name"),
        (serde_json::json!({"name": 7}), "name"),
        (serde_json::json!({"name": "kc", "key": "a/b"}), "key"),
        (serde_json::json!({"name": "kc", "key": "../x"}), "key"),
        (
            serde_json::json!({"name": "kc", "namespace": "x/y"}),
            "namespace",
        ),
        (
            serde_json::json!({"config": {"name": "kc", "context": "a\nb"}}),
            "context",
        ),
        (
            serde_json::json!({"name": "kc", "context": long.clone()}),
            "context",
        ),
        (
            serde_json::json!({"name": "kc", "context": ["x"]}),
            "context",
        ),
    ] {
        let mut p = profile("team-a", "c1", &[]);
        add_provider(&mut p, keys::SECRET_READER_PROVIDER, ext.clone());
        let found = locate(&p, &opts(), None, &SecretIndex::default());
        let Lookup::Unusable(CredentialProblem::BadSecretReaderReference { member: m, .. }) =
            &found
        else {
            panic!("{ext}: {found:?}")
        };
        assert_eq!(*m, member, "{ext}");
        let shown = found.describe();
        assert!(shown.len() < 400 && !shown.contains('\n'), "{shown}");
        assert!(
            crate::domain::credentials::resolve::secrets_to_read([&found]).is_empty(),
            "{ext}: a request was planned"
        );
    }
    // Valid references, a context included, still resolve.
    let mut p = profile("team-a", "c1", &[]);
    add_provider(
        &mut p,
        keys::SECRET_READER_PROVIDER,
        serde_json::json!({"name": "kc.prod", "key": "my_key-1.yaml", "context": "admin@prod", "namespace": null}),
    );
    assert!(matches!(
        locate(&p, &opts(), None, &SecretIndex::default()),
        Lookup::Found(CredentialSource::SecretReader { .. })
    ));
}
