use std::time::{Duration, Instant};

use super::*;

const CANARY: &str = "canary-7f3a";

fn yaml_with_user(user: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://10.0.0.1:6443\n    certificate-authority-data: Q0E=\nusers:\n- name: ok\n  user:\n    token: {CANARY}\n- name: u\n  user:\n{user}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n"
    )
}

fn refused(doc: &str, policy: KubeconfigPolicy) -> (String, RefusedField) {
    match inspect(doc.as_bytes(), &policy) {
        Err(KubeconfigError::Refused { path, field }) => {
            let msg = KubeconfigError::Refused {
                path: path.clone(),
                field,
            }
            .to_string();
            assert!(!msg.contains(CANARY), "{msg}");
            (path, field)
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn alias_bomb_is_rejected_in_milliseconds() {
    // 100,000-item list, then 150,000 aliases to it: about 800 KB, 15 billion nodes once expanded.
    let mut doc = String::from("a: &ab [");
    doc.push_str(&"0,".repeat(99_999));
    doc.push_str("0]\nb: [");
    doc.push_str(&"*ab,".repeat(149_999));
    doc.push_str("*ab]\n");
    assert!(
        doc.len() > 750_000 && doc.len() <= MAX_BYTES,
        "{}",
        doc.len()
    );
    let start = Instant::now();
    let err = inspect(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap_err();
    let took = start.elapsed();
    println!("alias bomb of {} bytes rejected in {took:?}", doc.len());
    assert_eq!(err, KubeconfigError::TooManyNodes { limit: MAX_NODES });
    // The parser is built without optimisation in test builds and runs ~30 times slower there; in release
    // builds this takes tens of milliseconds (serde_yaml 0.9 expanded 15 billion nodes and died).
    let bound = if cfg!(debug_assertions) {
        Duration::from_secs(5)
    } else {
        Duration::from_millis(250)
    };
    assert!(took < bound, "took {took:?}");
}

#[test]
fn nested_aliases_are_charged_their_expansion() {
    // Each level doubles: 2^30 nodes from a few hundred bytes.
    let mut doc = String::from("l0: &l0 [x, x]\n");
    for i in 1..30 {
        doc.push_str(&format!("l{i}: &l{i} [*l{p}, *l{p}]\n", p = i - 1));
    }
    let err = inspect(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap_err();
    assert_eq!(err, KubeconfigError::TooManyNodes { limit: MAX_NODES });
}

#[test]
fn deep_nesting_is_rejected() {
    for doc in [
        format!("clusters: {}{}", "[".repeat(10_000), "]".repeat(10_000)),
        format!("clusters: {}1{}", "{a: ".repeat(100), "}".repeat(100)),
        (0..100).fold(String::from("clusters:\n"), |mut s, i| {
            s.push_str(&" ".repeat(i + 1));
            s.push_str("- \n");
            s
        }),
    ] {
        let start = Instant::now();
        let err = inspect(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap_err();
        assert!(
            matches!(
                err,
                KubeconfigError::TooDeep { limit: MAX_DEPTH } | KubeconfigError::Syntax { .. }
            ),
            "{err:?}"
        );
        assert!(start.elapsed() < Duration::from_secs(1));
    }
    let flow = format!("clusters: {}{}", "[".repeat(200), "]".repeat(200));
    assert_eq!(
        inspect(flow.as_bytes(), &KubeconfigPolicy::default()).unwrap_err(),
        KubeconfigError::TooDeep { limit: MAX_DEPTH }
    );
    // Nesting just under the limit is fine as far as depth goes.
    let ok = format!(
        "clusters: [{{cluster: {}1{}}}]",
        "[".repeat(50),
        "]".repeat(50)
    );
    inspect(ok.as_bytes(), &KubeconfigPolicy::default()).unwrap();
}

#[test]
fn more_than_a_mebibyte_is_rejected_before_parsing() {
    let mut doc = yaml_with_user("    token: x");
    doc.push('#');
    doc.push_str(&"x".repeat(MAX_BYTES));
    assert_eq!(
        inspect(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap_err(),
        KubeconfigError::TooLarge {
            size: doc.len(),
            limit: MAX_BYTES
        }
    );
}

#[test]
fn each_refused_field_is_named_by_path() {
    let cases = [
        (
            "    exec:\n      command: /bin/sh\n      apiVersion: client.authentication.k8s.io/v1",
            "users[1].user.exec",
            RefusedField::Exec,
        ),
        (
            "    auth-provider:\n      name: gcp\n      config: {cmd-path: /bin/sh}",
            "users[1].user.auth-provider",
            RefusedField::AuthProvider,
        ),
        (
            "    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token",
            "users[1].user.tokenFile",
            RefusedField::TokenFile,
        ),
        (
            "    client-certificate: /etc/cert.pem\n    client-key-data: Q0E=",
            "users[1].user.client-certificate",
            RefusedField::ClientCertificate,
        ),
        (
            "    client-key: /etc/key.pem",
            "users[1].user.client-key",
            RefusedField::ClientKey,
        ),
        (
            "    TokenFile: /etc/token",
            "users[1].user.tokenFile",
            RefusedField::TokenFile,
        ),
        (
            "    EXEC: {command: sh}",
            "users[1].user.exec",
            RefusedField::Exec,
        ),
    ];
    for (user, path, field) in cases {
        assert_eq!(
            refused(&yaml_with_user(user), KubeconfigPolicy::default()),
            (path.to_string(), field),
            "{user}"
        );
    }
    let ca = "clusters:\n- name: c\n  cluster: {server: 'https://h', certificate-authority: /etc/ca.pem}\n";
    assert_eq!(
        refused(ca, KubeconfigPolicy::default()),
        (
            "clusters[0].cluster.certificate-authority".to_string(),
            RefusedField::CertificateAuthority
        )
    );
    // A refused field reached through an alias is still refused.
    let via_alias = "x: &u {exec: {command: sh}}\nclusters: [{cluster: {server: s}}]\nusers: [{name: a, user: *u}]\n";
    assert_eq!(
        refused(via_alias, KubeconfigPolicy::default()).1,
        RefusedField::Exec
    );
    // Empty or null values name no file and run nothing.
    inspect(
        yaml_with_user("    tokenFile: \"\"\n    exec: null").as_bytes(),
        &KubeconfigPolicy::default(),
    )
    .unwrap();
}

#[test]
fn exec_users_are_accepted_when_the_policy_allows_them() {
    let doc = yaml_with_user(
        "    exec:\n      command: kubectl-oidc\n      apiVersion: client.authentication.k8s.io/v1",
    );
    let allow = KubeconfigPolicy { allow_exec: true };
    let facts = inspect(doc.as_bytes(), &allow).unwrap();
    assert_eq!(facts.exec_users, ["users[1].user.exec"]);
    // The policy allows exec only: a file path next to it is still refused.
    let doc = yaml_with_user("    exec: {command: x}\n    client-key: /k");
    assert_eq!(refused(&doc, allow).1, RefusedField::ClientKey);
}

#[test]
fn valid_yaml_and_json_kubeconfigs_are_accepted() {
    let facts = inspect(
        yaml_with_user("    token: abc").as_bytes(),
        &KubeconfigPolicy::default(),
    )
    .unwrap();
    assert_eq!(facts.servers, ["https://10.0.0.1:6443"]);
    assert_eq!((facts.clusters, facts.users), (1, 2));
    let json = br#"{"apiVersion":"v1","kind":"Config","clusters":[{"name":"a","cluster":{"server":"https://a:443"}},{"name":"b","cluster":{"server":"https://b"}}],
        "users":[{"name":"u","user":{"client-certificate-data":"Q0E=","client-key-data":"Q0E="}}],"contexts":[],"current-context":"a"}"#;
    let facts = inspect(json, &KubeconfigPolicy::default()).unwrap();
    assert_eq!(facts.servers, ["https://a:443", "https://b"]);
    // Anchors and aliases within the budget are fine.
    let aliases = "clusters:\n- &c {name: a, cluster: {server: 'https://a'}}\n- *c\n";
    assert_eq!(
        inspect(aliases.as_bytes(), &KubeconfigPolicy::default())
            .unwrap()
            .clusters,
        2
    );
}

#[test]
fn malformed_documents_are_refused_without_quoting_them() {
    type Expect = fn(&KubeconfigError) -> bool;
    let cases: [(&[u8], Expect); 9] = [
        (b"{{{ canary-7f3a", |e| matches!(e, KubeconfigError::Syntax { .. })),
        (b"token: canary-7f3a", |e| *e == KubeconfigError::NoClusters),
        (b"clusters: []", |e| *e == KubeconfigError::NoClusters),
        (b"- canary-7f3a", |e| *e == KubeconfigError::NotAMapping),
        (b"", |e| *e == KubeconfigError::NotAMapping),
        (b"\xff\xfecanary-7f3a", |e| *e == KubeconfigError::NotUtf8),
        (b"clusters: [{cluster: {server: a}}]\nusers: []\nusers: [{user: {exec: {command: canary-7f3a}}}]", |e| {
            matches!(e, KubeconfigError::DuplicateKey { line: 1, .. })
        }),
        (b"x: &x {exec: {command: canary-7f3a}}\nclusters: [{cluster: {server: a}}]\nusers: [{user: {<<: *x}}]", |e| {
            matches!(e, KubeconfigError::RefusedKey { .. })
        }),
        (b"clusters: [{cluster: {server: a}}]\n---\nclusters: [{cluster: {server: canary-7f3a}}]\n", |e| {
            *e == KubeconfigError::MultipleDocuments
        }),
    ];
    for (doc, expected) in cases {
        let e = inspect(doc, &KubeconfigPolicy::default()).unwrap_err();
        assert!(expected(&e), "{:?}: {e:?}", String::from_utf8_lossy(doc));
        assert!(!e.to_string().contains(CANARY), "{e}");
        assert!(!format!("{e:?}").contains(CANARY), "{e:?}");
    }
}

#[test]
fn debug_output_holds_no_content() {
    let doc = format!(
        "clusters: [{{cluster: {{server: 'https://user:{CANARY}@h'}}}}]\nusers: [{{user: {{token: {CANARY}}}}}]\n"
    );
    let facts = inspect(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap();
    assert!(!format!("{facts:?}").contains(CANARY));
    assert!(facts.servers[0].contains(CANARY));
    let tree = parse(doc.as_bytes()).unwrap();
    assert!(!format!("{tree:?}").contains(CANARY));
}

fn b64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[test]
fn connection_follows_the_current_context() {
    let ca = "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n";
    let doc = format!(
        "clusters:\n- name: a\n  cluster: {{server: 'https://a:6443'}}\n- name: b\n  cluster:\n    server: https://b:6443\n    certificate-authority-data: {}\n    tls-server-name: b.internal\n    proxy-url: http://proxy:3128\n    insecure-skip-tls-verify: false\n\
         users:\n- name: ua\n  user: {{token: other}}\n- name: ub\n  user: {{token: {CANARY}}}\n\
         contexts:\n- name: ca\n  context: {{cluster: a, user: ua}}\n- name: cb\n  context: {{cluster: b, user: ub}}\ncurrent-context: cb\n",
        b64(ca)
    );
    let c = connection(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap();
    assert_eq!(c.host, "https://b:6443");
    assert_eq!(c.cluster_ca_certificate.as_deref(), Some(ca));
    assert_eq!(c.token.as_deref(), Some(CANARY));
    assert_eq!(c.tls_server_name.as_deref(), Some("b.internal"));
    assert_eq!(c.proxy_url.as_deref(), Some("http://proxy:3128"));
    assert!(!c.insecure);
    assert_eq!((c.client_certificate, c.client_key), (None, None));
    assert!(
        !format!(
            "{:?}",
            connection(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap()
        )
        .contains(CANARY)
    );
}

#[test]
fn connection_decodes_client_certificates_and_falls_back_to_the_only_entries() {
    let doc = format!(
        "clusters:\n- name: only\n  cluster: {{server: 'https://x', insecure-skip-tls-verify: true}}\n\
         users:\n- name: u\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n",
        b64("CERT"),
        b64("KEY")
    );
    let c = connection(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap();
    assert_eq!(c.host, "https://x");
    assert!(c.insecure);
    assert_eq!(c.client_certificate.as_deref(), Some("CERT"));
    assert_eq!(c.client_key.as_deref(), Some("KEY"));
    assert_eq!(c.token, None);
    // One context and no current-context: that context.
    let one = "clusters: [{name: a, cluster: {server: 'https://a'}}]\ncontexts: [{name: x, context: {cluster: a}}]\n";
    let c = connection(one.as_bytes(), &KubeconfigPolicy::default()).unwrap();
    assert_eq!((c.host.as_str(), c.token), ("https://a", None));
}

#[test]
fn connection_errors_name_places_never_content() {
    let two = format!(
        "clusters: [{{name: a, cluster: {{server: 'https://a'}}}}, {{name: b, cluster: {{server: 'https://b'}}}}]\n\
         contexts: [{{name: {CANARY}, context: {{cluster: a}}}}, {{name: y, context: {{cluster: b}}}}]\n"
    );
    let cases: Vec<(String, ConnectionError)> = vec![
        (two.clone(), ConnectionError::NoCurrentContext),
        (
            format!("{two}current-context: missing-{CANARY}\n"),
            ConnectionError::MissingContext,
        ),
        (
            format!(
                "clusters: [{{name: a, cluster: {{server: 'https://a'}}}}]\ncontexts: [{{name: c, context: {{cluster: {CANARY}}}}}]\ncurrent-context: c\n"
            ),
            ConnectionError::MissingCluster { index: 0 },
        ),
        (
            format!(
                "clusters: [{{name: a, cluster: {{server: 'https://a'}}}}]\ncontexts: [{{name: c, context: {{cluster: a, user: {CANARY}}}}}]\ncurrent-context: c\n"
            ),
            ConnectionError::MissingUser { index: 0 },
        ),
        (
            format!(
                "clusters: [{{name: a, cluster: {{server: 'https://a', certificate-authority-data: '{CANARY}!'}}}}]\n"
            ),
            ConnectionError::BadBase64 {
                path: "clusters[0].cluster.certificate-authority-data".into(),
            },
        ),
        (
            "clusters: [{name: a, cluster: {certificate-authority-data: Q0E=}}]\n".into(),
            ConnectionError::NoServer {
                path: "clusters[0].cluster.server".into(),
            },
        ),
        (
            format!(
                "clusters: [{{name: a, cluster: {{server: 'https://a', insecure-skip-tls-verify: {CANARY}}}}}]\n"
            ),
            ConnectionError::WrongType {
                path: "clusters[0].cluster.insecure-skip-tls-verify".into(),
                expected: "boolean",
            },
        ),
    ];
    for (doc, want) in cases {
        let e = connection(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap_err();
        assert_eq!(e, want, "{doc}");
        assert!(!e.to_string().contains(CANARY), "{e}");
    }
    // The inertness check comes first.
    let e = connection(
        yaml_with_user("    tokenFile: /etc/t").as_bytes(),
        &KubeconfigPolicy::default(),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            ConnectionError::Kubeconfig(KubeconfigError::Refused { .. })
        ),
        "{e:?}"
    );
}

/// A kubeconfig whose one user is `user` (YAML lines indented by four spaces), with a harmless token user next
/// to it.
fn hostile(user: &str) -> String {
    yaml_with_user(user)
}

#[test]
fn constructs_yaml_1_1_and_1_2_read_differently_are_refused() {
    type Expect = fn(&KubeconfigError) -> bool;
    let tag: Expect = |e| matches!(e, KubeconfigError::Tag { .. });
    let sep: Expect = |e| matches!(e, KubeconfigError::LineSeparator { .. });
    let key: Expect = |e| matches!(e, KubeconfigError::RefusedKey { .. });
    let cases: Vec<(String, Expect)> = vec![
        // `!!binary` keys are their decoded text to client-go: `tokenFile`, `exec`.
        (hostile("    !!binary dG9rZW5GaWxl: /var/run/secrets/token"), tag),
        (hostile("    !!binary ZXhlYw==: {command: /bin/sh}"), tag),
        (hostile("    !!str token: x"), tag),
        (hostile("    token: !local x"), tag),
        (hostile("    token: !<tag:yaml.org,2002:str> x"), tag),
        ("clusters: !!seq [{cluster: {server: s}}]\n".into(), tag),
        // A merge key in any style, with or without a tag.
        (
            format!("p: &a {{exec: {{command: /bin/sh}}}}\n{}", hostile("    \"<<\": *a")),
            key,
        ),
        (
            format!("p: &a {{exec: {{command: /bin/sh}}}}\n{}", hostile("    '<<': *a")),
            key,
        ),
        (
            format!("p: &a {{exec: {{command: /bin/sh}}}}\n{}", hostile("    !!merge \"<<\": *a")),
            tag,
        ),
        // Non-scalar keys.
        (hostile("    ? [token]\n    : x"), key),
        (hostile("    ? {a: b}\n    : x"), key),
        // Line separators: a comment to YAML 1.2, a line break to YAML 1.1.
        (
            "clusters: [{cluster: {server: s}}]\nusers:\n- name: u #\u{2028}  user: {tokenFile: /t}\n".into(),
            sep,
        ),
        (
            "clusters: [{cluster: {server: s}}]\nusers:\n- name: u #\u{2029}  user: {tokenFile: /t}\n".into(),
            sep,
        ),
        (
            "clusters: [{cluster: {server: s}}]\nusers:\n- name: u #\u{85}  user: {tokenFile: /t}\n".into(),
            sep,
        ),
        (hostile("    token: \"a\u{2028}b\""), sep),
    ];
    for (doc, expected) in cases {
        let e = inspect(doc.as_bytes(), &KubeconfigPolicy::default()).unwrap_err();
        assert!(expected(&e), "{doc:?}: {e:?}");
        assert!(!e.to_string().contains(CANARY), "{e}");
    }
}

fn written(doc: &str, policy: KubeconfigPolicy, context: Option<&str>) -> serde_json::Value {
    let out = canonical(doc.as_bytes(), &policy, context).unwrap();
    assert!(
        out.iter().all(|b| (0x20..0x7f).contains(b) || *b == b'\n'),
        "printable ASCII only: {}",
        String::from_utf8_lossy(&out)
    );
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn what_is_written_is_the_checked_context_only() {
    let ca = "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n";
    let doc = format!(
        "apiVersion: v1\nkind: Config\npreferences: {{colors: true}}\nextensions: [{{name: x, extension: {{a: b}}}}]\n\
         clusters:\n- name: a\n  cluster: {{server: 'https://a:6443', extensions: [{{name: e, extension: {{}}}}]}}\n\
         - name: b\n  cluster:\n    server: https://b:6443\n    certificate-authority-data: {}\n    disable-compression: true\n\
         users:\n- name: ua\n  user: {{token: other, as: admin, as-groups: [system:masters], as-uid: '0', as-user-extra: {{k: [v]}}}}\n\
         - name: ub\n  user: {{token: {CANARY}, username: u, password: p}}\n\
         contexts:\n- name: ca\n  context: {{cluster: a, user: ua, namespace: kube-system}}\n- name: cb\n  context: {{cluster: b, user: ub}}\n\
         current-context: ca\n",
        b64(ca)
    );
    let v = written(&doc, KubeconfigPolicy::default(), None);
    let user = &v["users"][0]["user"];
    assert_eq!(
        user,
        &serde_json::json!({"token": "other"}),
        "impersonation dropped"
    );
    assert_eq!(
        v["clusters"][0]["cluster"],
        serde_json::json!({"server": "https://a:6443"})
    );
    assert!(v.get("extensions").is_none() && v.get("preferences").is_none());
    assert_eq!(
        v["contexts"][0]["context"],
        serde_json::json!({"cluster": NAME, "user": NAME})
    );
    assert_eq!(v["current-context"], NAME);
    // The access provider's `context` picks another context.
    let v = written(&doc, KubeconfigPolicy::default(), Some("cb"));
    assert_eq!(
        v["users"][0]["user"],
        serde_json::json!({"token": CANARY, "username": "u", "password": "p"})
    );
    assert_eq!(
        v["clusters"][0]["cluster"]["certificate-authority-data"].as_str(),
        Some(b64(ca).as_str())
    );
    assert_eq!(
        canonical(
            doc.as_bytes(),
            &KubeconfigPolicy::default(),
            Some("missing")
        )
        .unwrap_err(),
        ConnectionError::NoSuchContext
    );
    // Rewriting what was written gives the same bytes.
    let once = canonical(doc.as_bytes(), &KubeconfigPolicy::default(), None).unwrap();
    assert_eq!(
        canonical(&once, &KubeconfigPolicy::default(), None).unwrap(),
        once
    );
}

#[test]
fn exec_users_are_written_only_when_allowed_and_only_with_exec_config_fields() {
    let doc = "clusters: [{name: c, cluster: {server: 'https://c'}}]\n\
               users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: kubectl-oidc, \
               args: [get-token], env: [{name: A, value: b}], provideClusterInfo: true, interactiveMode: Never, \
               installHint: 'install it', unknownField: x}}}]\n\
               contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n";
    let allow = KubeconfigPolicy { allow_exec: true };
    let v = written(doc, allow, None);
    assert_eq!(
        v["users"][0]["user"]["exec"],
        serde_json::json!({"apiVersion": "client.authentication.k8s.io/v1", "command": "kubectl-oidc",
            "args": ["get-token"], "env": [{"name": "A", "value": "b"}], "installHint": "install it",
            "provideClusterInfo": true, "interactiveMode": "Never"})
    );
    assert!(matches!(
        canonical(doc.as_bytes(), &KubeconfigPolicy::default(), None),
        Err(ConnectionError::Kubeconfig(KubeconfigError::Refused { .. }))
    ));
}

#[test]
fn keys_are_matched_exactly_and_values_with_control_characters_are_refused() {
    // client-go decodes field names case-sensitively: `Token` is not a token to it, nor to what is written.
    let doc = "clusters: [{name: c, cluster: {server: 'https://c'}}]\nusers: [{name: u, user: {Token: x}}]\n\
               contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n";
    let v = written(doc, KubeconfigPolicy::default(), None);
    assert_eq!(v["users"][0]["user"], serde_json::json!({}));
    for bad in [
        "\"a\\tb\"",
        "\"a\\u0000b\"",
        "\"a\\u001bb\"",
        "\"a\\u0085b\"",
        "\"\\ufeffa\"",
    ] {
        let doc = format!(
            "clusters: [{{name: c, cluster: {{server: 'https://c'}}}}]\nusers: [{{name: u, user: {{token: {bad}}}}}]\n\
             contexts: [{{name: c, context: {{cluster: c, user: u}}}}]\ncurrent-context: c\n"
        );
        assert_eq!(
            canonical(doc.as_bytes(), &KubeconfigPolicy::default(), None).unwrap_err(),
            ConnectionError::ControlCharacter {
                path: "users[0].user.token".into()
            },
            "{bad}"
        );
    }
    // Other non-ASCII text is kept, escaped.
    let doc = "clusters: [{name: c, cluster: {server: 'https://c'}}]\nusers: [{name: u, user: {password: \"pä\u{1F600}\"}}]\n\
               contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n";
    let out = canonical(doc.as_bytes(), &KubeconfigPolicy::default(), None).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("p\\u00e4\u{1F600}"), "{text}");
}
