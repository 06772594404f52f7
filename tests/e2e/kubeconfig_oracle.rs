//! What Sveltos loads, judged by its real reader. Every kubeconfig the bridge would write for a candidate (the
//! code path of the bridge, the data sources and `sveltos_cluster_credentials`: `check_kubeconfig`) is handed to
//! client-go through the `kubectl` the test environment builds (`kubectl config view --raw -o json`), and whatever
//! client-go finds in it must be inert: no `exec` (unless allowed), `auth-provider`, `tokenFile`, file paths,
//! impersonation or extensions, and the server and token it reads are the ones the bridge meant to write.
//!
//! Three layers: a corpus of hostile kubeconfigs (each attack class of the security guide, and the variants found
//! since), a property test that generates kubeconfig-shaped documents mixing YAML styles and hostile spellings,
//! and end-to-end attacks: hostile kubeconfigs in labelled Secrets, bridged by `tofu apply` against the real API
//! server, the Secrets the bridge wrote read back and judged by kubectl.

use std::path::Path;

use proptest::prelude::*;
use serde_json::Value as Json;
use support::{Cli, TestEnv, client_go_view, inventory::*, unique_name, unique_namespace};
use tfsveltos::domain::credentials::{CredentialOptions, resolve::check_kubeconfig};

/// The fields client-go found that run a command, read a file, impersonate or carry extensions.
fn active_fields(view: &Json, allow_exec: bool) -> Vec<String> {
    let mut found = Vec::new();
    let allowed_user = [
        "token",
        "client-certificate-data",
        "client-key-data",
        "username",
        "password",
    ];
    let allowed_cluster = [
        "server",
        "certificate-authority-data",
        "tls-server-name",
        "proxy-url",
        "insecure-skip-tls-verify",
    ];
    let list = |key: &str| view[key].as_array().cloned().unwrap_or_default();
    for (i, u) in list("users").iter().enumerate() {
        for (k, _) in u["user"].as_object().into_iter().flatten() {
            if !(allowed_user.contains(&k.as_str()) || (allow_exec && k == "exec")) {
                found.push(format!("users[{i}].user.{k}"));
            }
        }
    }
    for (i, c) in list("clusters").iter().enumerate() {
        for (k, _) in c["cluster"].as_object().into_iter().flatten() {
            if !allowed_cluster.contains(&k.as_str()) {
                found.push(format!("clusters[{i}].cluster.{k}"));
            }
        }
    }
    for (i, c) in list("contexts").iter().enumerate() {
        for (k, _) in c["context"].as_object().into_iter().flatten() {
            if !["cluster", "user"].contains(&k.as_str()) {
                found.push(format!("contexts[{i}].context.{k}"));
            }
        }
    }
    if view["extensions"].as_array().is_some_and(|e| !e.is_empty()) {
        found.push("extensions".into());
    }
    found
}

/// The current context's server and token as client-go reads them.
fn current(view: &Json) -> (Option<String>, Option<String>) {
    let ctx_name = view["current-context"].as_str().unwrap_or_default();
    let find = |list: &str, name: &str| -> Json {
        view[list]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["name"] == name)
            .cloned()
            .unwrap_or(Json::Null)
    };
    let ctx = find("contexts", ctx_name);
    let cluster = find(
        "clusters",
        ctx["context"]["cluster"].as_str().unwrap_or_default(),
    );
    let user = find("users", ctx["context"]["user"].as_str().unwrap_or_default());
    (
        cluster["cluster"]["server"].as_str().map(String::from),
        user["user"]["token"].as_str().map(String::from),
    )
}

/// Judges one candidate: refused by the bridge, or written in a form client-go loads and finds inert, with the
/// server and token the bridge read. Returns whether the bridge accepted it.
fn judge(dir: &Path, source: &[u8], options: &CredentialOptions) -> bool {
    let Ok(written) = check_kubeconfig(source, options, None) else {
        return false;
    };
    let view = client_go_view(dir, &written).unwrap_or_else(|e| {
        panic!(
            "client-go cannot load what the bridge writes for {:?}: {e}\nwritten: {}",
            String::from_utf8_lossy(source),
            String::from_utf8_lossy(&written)
        )
    });
    let active = active_fields(&view, options.allow_exec_kubeconfigs);
    assert!(
        active.is_empty(),
        "client-go finds {active:?} in what the bridge writes for {:?}",
        String::from_utf8_lossy(source)
    );
    // The bridge and client-go agree on what the written kubeconfig connects to and with.
    let conn = tfsveltos::domain::kubeconfig::connection(&written, &Default::default())
        .or_else(|_| {
            tfsveltos::domain::kubeconfig::connection(
                &written,
                &tfsveltos::domain::kubeconfig::KubeconfigPolicy { allow_exec: true },
            )
        })
        .unwrap();
    assert_eq!(
        current(&view),
        (Some(conn.host.clone()), conn.token.clone()),
        "for {:?}",
        String::from_utf8_lossy(source)
    );
    true
}

const TOKEN_FILE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/// A kubeconfig with one cluster and one context whose user is written by `user` (lines of the `user:` mapping,
/// indented four spaces), with `prefix` before it.
fn doc(prefix: &str, user: &str) -> String {
    format!(
        "{prefix}apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n\
         users:\n- name: u\n  user:\n{user}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n"
    )
}

/// The hostile corpus: (what it tries, the document). Each of them makes client-go run a command or read a file
/// when it reads the document as written (checked below for the classes the security issue reported).
fn corpus() -> Vec<(&'static str, String)> {
    vec![
        (
            "U+2028 ends a comment for YAML 1.1",
            format!(
                "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:6443'}}}}]\n\
                 contexts: [{{name: c, context: {{cluster: c, user: u}}}}]\ncurrent-context: c\n\
                 users:\n- name: u #\u{2028}  user: {{tokenFile: {TOKEN_FILE}}}\n"
            ),
        ),
        (
            "U+2029 ends a comment for YAML 1.1",
            format!(
                "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:6443'}}}}]\n\
                 contexts: [{{name: c, context: {{cluster: c, user: u}}}}]\ncurrent-context: c\n\
                 users:\n- name: u #\u{2029}  user: {{tokenFile: {TOKEN_FILE}}}\n"
            ),
        ),
        (
            "U+0085 ends a comment for YAML 1.1",
            format!(
                "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:6443'}}}}]\n\
                 contexts: [{{name: c, context: {{cluster: c, user: u}}}}]\ncurrent-context: c\n\
                 users:\n- name: u #\u{85}  user: {{tokenFile: {TOKEN_FILE}}}\n"
            ),
        ),
        (
            "!!binary key decoding to tokenFile",
            doc("", &format!("    !!binary dG9rZW5GaWxl: {TOKEN_FILE}")),
        ),
        (
            "!!binary key decoding to exec",
            doc(
                "",
                "    !!binary ZXhlYw==:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh",
            ),
        ),
        (
            "!!merge of an exec block parked at top level",
            doc(
                "parked: &x\n  exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}\n",
                "    !!merge \"<<\": *x",
            ),
        ),
        (
            "quoted merge key",
            doc(
                "parked: &x\n  tokenFile: /etc/token\n",
                "    \"<<\": *x\n    token: t",
            ),
        ),
        (
            "plain merge key",
            doc("parked: &x\n  tokenFile: /etc/token\n", "    <<: *x"),
        ),
        ("exec in another case", doc("", "    Exec: {command: /bin/sh}")),
        ("tokenFile in another case", doc("", "    TOKENFILE: /etc/token")),
        (
            "duplicate users key",
            format!("{}users: [{{name: u, user: {{tokenFile: /t}}}}]\n", doc("", "    token: t")),
        ),
        ("byte-order mark", doc("\u{feff}", "    tokenFile: /t")),
        (
            "tab-indented flow",
            doc("", "    {\ttokenFile: /t}").replace("  user:\n    {", "  user: {"),
        ),
        (
            "impersonation",
            doc("", "    token: t\n    as: system:admin\n    as-groups: [system:masters]"),
        ),
        (
            "auth-provider",
            doc("", "    auth-provider: {name: gcp, config: {cmd-path: /bin/sh}}"),
        ),
        (
            "client-certificate file",
            doc("", "    client-certificate: /etc/cert\n    client-key: /etc/key"),
        ),
        (
            "certificate-authority file",
            "apiVersion: v1\nclusters: [{name: c, cluster: {server: 'https://h', certificate-authority: /etc/ca}}]\n\
             contexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c\n"
                .to_string(),
        ),
        (
            "anchors across documents",
            format!("a: &x {{tokenFile: /t}}\n---\n{}", doc("", "    token: t")),
        ),
        ("!!str tag", doc("", "    !!str tokenFile: /t")),
        (
            "extensions everywhere",
            doc(
                "extensions: [{name: x, extension: {command: /bin/sh}}]\n",
                "    token: t\n    extensions: [{name: y, extension: {}}]",
            ),
        ),
        (
            "a very long line",
            doc("", &format!("    token: {}", "a".repeat(200_000))),
        ),
        (
            "quoted keys",
            doc("", "    \"token\": t\n    'tokenFile': /t"),
        ),
        (
            "escaped key in double quotes",
            doc("", "    \"token\\x46ile\": /t"),
        ),
    ]
}

#[test]
fn every_hostile_kubeconfig_is_refused_or_written_inert() {
    let dir = tempfile::tempdir().unwrap();
    let strict = CredentialOptions::default();
    let mut accepted = Vec::new();
    for (what, source) in corpus() {
        if judge(dir.path(), source.as_bytes(), &strict) {
            accepted.push(what);
        }
    }
    println!("accepted and written inert: {accepted:?}");
    // These are accepted on purpose: what is written leaves out what client-go would have honoured.
    assert!(accepted.contains(&"impersonation"), "{accepted:?}");
    assert!(accepted.contains(&"extensions everywhere"), "{accepted:?}");
    assert!(accepted.contains(&"a very long line"), "{accepted:?}");
}

#[test]
fn the_reported_attacks_are_active_in_their_source() {
    // Without the rewrite, the source bytes reach client-go: these are what it makes of them.
    let dir = tempfile::tempdir().unwrap();
    for (what, source) in corpus().into_iter().take(6) {
        let view = client_go_view(dir.path(), source.as_bytes())
            .unwrap_or_else(|e| panic!("{what}: client-go cannot load the source: {e}"));
        let active = active_fields(&view, false);
        assert!(
            active
                .iter()
                .any(|f| f.ends_with("tokenFile") || f.ends_with("exec")),
            "{what}: client-go finds nothing active in the source ({active:?}); the corpus is stale"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// generated documents
// ---------------------------------------------------------------------------------------------

/// A user field, spelled one of many ways: (its key, its line).
fn user_field() -> impl Strategy<Value = (String, String)> {
    let key = prop_oneof![
        6 => Just("token"),
        1 => Just("tokenFile"),
        1 => Just("TokenFile"),
        1 => Just("exec"),
        1 => Just("auth-provider"),
        1 => Just("client-certificate"),
        1 => Just("client-key-data"),
        3 => Just("username"),
        3 => Just("password"),
        1 => Just("as"),
        1 => Just("<<"),
        1 => Just("extensions"),
    ];
    let spelling = prop_oneof![
        12 => Just("{}"),
        3 => Just("\"{}\""),
        1 => Just("'{}'"),
        1 => Just("!!str {}"),
        1 => Just("!!binary {}"),
        1 => Just("? {}\n   "),
    ];
    let value = prop_oneof![
        10 => Just("t0k3n".to_string()),
        1 => Just("/etc/token".to_string()),
        1 => Just("{command: /bin/sh}".to_string()),
        1 => Just("*parked".to_string()),
        1 => Just("\"a\\u2028b\"".to_string()),
        1 => Just("'x # y'".to_string()),
        1 => Just("~".to_string()),
        1 => Just("[a, b]".to_string()),
        10 => "[a-zA-Z0-9:/._-]{1,12}",
    ];
    let comment = prop_oneof![
        8 => Just(""),
        2 => Just(" # note"),
        1 => Just(" #\u{2028}tokenFile: /t"),
        1 => Just(" #\u{85}exec: {command: sh}"),
    ];
    (key, spelling, value, comment).prop_map(|(k, s, v, c)| {
        let key = if s == "!!binary {}" {
            use base64::Engine;
            format!(
                "!!binary {}",
                base64::engine::general_purpose::STANDARD.encode(k)
            )
        } else {
            s.replace("{}", k)
        };
        (k.to_string(), format!("    {key}: {v}{c}"))
    })
}

/// A kubeconfig-shaped document: a parked anchor, a cluster in block or flow style, users made of generated
/// fields, a context.
fn document() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(user_field(), 1..5),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(fields, flow_cluster, parked)| {
            // One line per key: duplicate keys are refused before anything else is looked at.
            let mut seen = std::collections::BTreeSet::new();
            let fields: Vec<String> = fields
                .into_iter()
                .filter(|(k, _)| seen.insert(k.to_ascii_lowercase()))
                .map(|(_, line)| line)
                .collect();
            let prefix = if parked {
                "parked: &parked\n  tokenFile: /etc/parked\n"
            } else {
                ""
            };
            let cluster = if flow_cluster {
                "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}]\n".to_string()
            } else {
                "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n".to_string()
            };
            format!(
                "{prefix}apiVersion: v1\nkind: Config\n{cluster}users:\n- name: u\n  user:\n{}\n\
                 contexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n",
                fields.join("\n")
            )
        })
}

/// The generator must exercise the writer, not only the refusals: with a fixed seed, at least an eighth of the
/// documents are accepted and judged by client-go.
#[test]
fn generated_documents_are_often_accepted() {
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: 200,
            failure_persistence: None,
            ..Config::default()
        },
        proptest::test_runner::TestRng::deterministic_rng(
            proptest::test_runner::RngAlgorithm::ChaCha,
        ),
    );
    let (judged, accepted) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    runner
        .run(&document(), |source| {
            judged.set(judged.get() + 1);
            if check_kubeconfig(source.as_bytes(), &CredentialOptions::default(), None).is_ok() {
                accepted.set(accepted.get() + 1);
            }
            Ok(())
        })
        .unwrap();
    let (judged, accepted) = (judged.get(), accepted.get());
    println!("{accepted} of {judged} generated documents accepted");
    assert!(accepted * 8 >= judged, "{accepted} of {judged}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, failure_persistence: None, ..ProptestConfig::default() })]

    /// Whatever the document, what the bridge writes for it is loaded by client-go, inert, and connects where
    /// the bridge says; with `allow_exec_kubeconfigs`, exec is the only addition.
    #[test]
    fn generated_kubeconfigs_are_refused_or_written_inert(source in document(), allow_exec in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let options = CredentialOptions { allow_exec_kubeconfigs: allow_exec, ..Default::default() };
        judge(dir.path(), source.as_bytes(), &options);
    }
}

// ---------------------------------------------------------------------------------------------
// end to end
// ---------------------------------------------------------------------------------------------

/// Each attack class in a labelled Secret of its own profile, bridged with `tofu apply`: whatever Secret the
/// bridge wrote for Sveltos holds nothing client-go would act on, and the healthy profile next to them is bridged.
#[tokio::test(flavor = "multi_thread")]
async fn hostile_kubeconfigs_in_the_inventory_reach_sveltos_inert() {
    let env = TestEnv::get();
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "oracle").await;
    let member = String::from_utf8(std::fs::read(env.member_kubeconfig()).unwrap()).unwrap();
    let mut names = Vec::new();
    for (i, (_, source)) in corpus().into_iter().enumerate() {
        let name = format!("attack-{i}");
        inv.profile_with_secret(&ns, &name, &[], Json::Null, &source)
            .await;
        names.push(name);
    }
    inv.profile_with_secret(&ns, "healthy", &[], Json::Null, &member)
        .await;
    let tf = inv.tf(&Cli::tofu(), &bridge(&unique_name("oracle"), &[&ns], ""));
    let out = flat(&apply_ok(&tf));
    let dir = tempfile::tempdir().unwrap();
    let healthy = inv
        .bridged_kubeconfig(&ns, "healthy")
        .await
        .expect("the healthy profile is bridged");
    let view = client_go_view(dir.path(), &healthy).unwrap();
    assert!(active_fields(&view, false).is_empty());
    env.kubectl_at(
        &{
            let f = dir.path().join("healthy");
            std::fs::write(&f, &healthy).unwrap();
            f
        },
        &["get", "--raw", "/version"],
    );
    let mut written = 0;
    for name in names {
        let Some(bytes) = inv.bridged_kubeconfig(&ns, &name).await else {
            // Refused: the plan's warning names the cluster.
            assert!(
                out.contains(&format!("{ns}/{name}")),
                "{name} not named in:\n{out}"
            );
            continue;
        };
        written += 1;
        let view = client_go_view(dir.path(), &bytes)
            .unwrap_or_else(|e| panic!("{name}: client-go cannot load the bridged Secret: {e}"));
        let active = active_fields(&view, false);
        assert!(active.is_empty(), "{name}: client-go finds {active:?}");
    }
    println!("{written} hostile kubeconfigs were bridged, each rewritten inert");
}
