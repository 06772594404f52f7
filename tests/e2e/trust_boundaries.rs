//! Issue 12 end to end: whoever can write the inventory (ClusterProfiles with their status, labelled Secrets,
//! labels) cannot turn the bridge against its operator. Each test performs the attack against the real
//! control plane with the real `tofu` and checks what the bridge read, wrote, ran and reported.

use serde_json::{Value as Json, json};
use support::inventory::{
    Inv, Plugin, alias_bomb, apply_ok, bridge, entry, exec_status, labels_of, measure,
    one_diagnostic, plan_clusters, run, secret_reads_in, state_clusters, text,
};
use support::{Cli, fixtures, unique_namespace};
use tfsveltos::api::keys;

/// A kubeconfig-secretreader provider naming a Secret in another namespace: the Secret is never fetched (no
/// GET, no LIST in that namespace in the API server's audit log) nor copied, and the warning names the profile
/// and the namespace; listed in `secret_reader_namespaces`, it is read and bridged.
#[tokio::test(flavor = "multi_thread")]
async fn secret_reader_cannot_reach_into_another_namespace() {
    let inv = Inv::new().await;
    let tenant = unique_namespace(&inv.client, "tenant").await;
    let victim = unique_namespace(&inv.client, "victim").await;
    let admin_kc = fixtures::unreachable_kubeconfig("victim-admin-token");
    inv.secret(&victim, "prod-admin", &[], &[("value", &admin_kc)])
        .await;
    inv.profile(
        &tenant,
        "thief",
        &[],
        json!({"accessProviders": [{"name": keys::SECRET_READER_PROVIDER, "cluster": {"server": "https://127.0.0.1:1",
            "extensions": [{"name": keys::EXEC_EXTENSION,
                "extension": {"name": "prod-admin", "namespace": victim, "key": "value"}}]}}]}),
    )
    .await;
    // A well-behaved neighbour is planned and applied as usual.
    inv.profile_with_secret(
        &tenant,
        "honest",
        &[],
        Json::Null,
        &fixtures::unreachable_kubeconfig("honest"),
    )
    .await;
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &bridge(&tenant, &[&tenant], ""));
    let (plan_out, planned) = plan_clusters(&tf);
    let warning = one_diagnostic(
        &plan_out,
        "Warning",
        "kubeconfig-secretreader names a Secret in a namespace that is not allowed",
    );
    assert!(
        entry(warning, &format!("{tenant}/thief")).contains(&victim),
        "the warning names the profile and the namespace it asked for:\n{warning}"
    );
    assert!(
        !planned.contains_key(&format!("{tenant}/thief")),
        "{planned:?}"
    );
    assert!(
        planned.contains_key(&format!("{tenant}/honest")),
        "{planned:?}"
    );
    let out = apply_ok(&tf);
    assert!(out.contains(&victim), "{out}");
    assert!(
        inv.bridged_kubeconfig(&tenant, "thief").await.is_none(),
        "the victim's kubeconfig was copied into the tenant's namespace"
    );
    assert!(inv.bridged_kubeconfig(&tenant, "honest").await.is_some());
    let reads = secret_reads_in(&victim);
    assert!(
        reads.is_empty(),
        "Secrets of {victim} were read during plan/apply: {reads:?}"
    );

    // The operator allows the namespace: now it is read (the audit log sees that read) and bridged.
    inv.rewrite(
        &tf,
        &bridge(
            &tenant,
            &[&tenant],
            &format!("  credentials {{\n    secret_reader_namespaces = [\"{victim}\"]\n  }}"),
        ),
    );
    apply_ok(&tf);
    assert_eq!(
        inv.bridged_kubeconfig(&tenant, "thief").await,
        Some(fixtures::written(&admin_kc))
    );
    let reads = secret_reads_in(&victim);
    assert!(
        reads.iter().any(|r| r.starts_with("get prod-admin")),
        "the audit log records the allowed read: {reads:?}"
    );
    tf.destroy();
}

/// A Secret in namespace B labelled for a profile in namespace A: ignored (B is not even read) without a consumer
/// label or a listing; used when B is in `secret_namespaces`, or labelled as the consumer's namespace with
/// `consumer` set.
#[tokio::test(flavor = "multi_thread")]
async fn labelled_secret_in_another_namespace_needs_the_operators_consent() {
    let inv = Inv::new().await;
    let a = unique_namespace(&inv.client, "lbl-a").await;
    let b = unique_namespace(&inv.client, "lbl-b").await;
    let kc = fixtures::unreachable_kubeconfig("from-b");
    inv.profile(&a, "p", &[], Json::Null).await;
    inv.secret(
        &b,
        "for-a",
        &[
            (keys::CLUSTER_PROFILE_LABEL, "p"),
            (keys::CLUSTER_PROFILE_NAMESPACE_LABEL, &a),
        ],
        &[("Config", &kc)],
    )
    .await;
    let key = format!("{a}/p");
    let cli = Cli::tofu();

    let tf = inv.tf(&cli, &bridge(&a, &[&a], ""));
    let (out, planned) = plan_clusters(&tf);
    assert!(
        !planned.contains_key(&key),
        "used without consent: {planned:?}"
    );
    let w = one_diagnostic(&out, "Warning", "no usable credentials");
    assert!(!entry(w, &key).contains("for-a"), "{w}");
    // B may not supply credentials, so its Secrets are not even listed.
    let reads = secret_reads_in(&b);
    assert!(reads.is_empty(), "Secrets of {b} were read: {reads:?}");

    let tf = inv.tf(
        &cli,
        &bridge(
            &a,
            &[&a],
            &format!("  credentials {{\n    secret_namespaces = [\"{b}\"]\n  }}"),
        ),
    );
    let (_, planned) = plan_clusters(&tf);
    assert_eq!(
        planned[&key]["credential_source"],
        format!("secret:{b}/for-a#Config")
    );

    // With a consumer: B unlabelled is refused, B labelled for the consumer is used.
    let with_consumer = bridge(
        &a,
        &[&a],
        "  credentials {\n    consumer = \"sveltos-e2e\"\n  }",
    );
    let tf = inv.tf(&cli, &with_consumer);
    let (_, planned) = plan_clusters(&tf);
    assert!(!planned.contains_key(&key), "{planned:?}");
    inv.label_namespace(&b, keys::CONSUMER_NAMESPACE_LABEL, "sveltos-e2e")
        .await;
    let (_, planned) = plan_clusters(&tf);
    assert_eq!(
        planned[&key]["credential_source"],
        format!("secret:{b}/for-a#Config")
    );
    apply_ok(&tf);
    assert_eq!(
        inv.bridged_kubeconfig(&a, "p").await,
        Some(fixtures::written(&kc))
    );
    tf.destroy();
}

fn kubeconfig_with_user(user: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n\
         users:\n- name: u\n  user:\n{user}contexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n"
    )
}

/// Kubeconfigs that would run a command or read a file inside Sveltos' pods are not bridged, each named by its
/// field; `allow_exec_kubeconfigs = true` accepts the `exec` one, copied byte for byte.
#[tokio::test(flavor = "multi_thread")]
async fn kubeconfigs_that_run_commands_or_read_files_are_refused() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "inert").await;
    let cases = [
        (
            "token-file",
            "    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n",
            "tokenFile",
        ),
        (
            "exec",
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [\"-c\", \"id\"]\n",
            "exec",
        ),
        (
            "auth-provider",
            "    auth-provider:\n      name: oidc\n      config: {client-id: x}\n",
            "auth-provider",
        ),
        (
            "client-key",
            "    client-certificate-data: Y2VydA==\n    client-key: /etc/kubernetes/pki/admin.key\n",
            "client-key",
        ),
    ];
    for (name, user, _) in &cases {
        inv.profile_with_secret(&ns, name, &[], Json::Null, &kubeconfig_with_user(user))
            .await;
    }
    inv.profile_with_secret(
        &ns,
        "inert",
        &[],
        Json::Null,
        &fixtures::unreachable_kubeconfig("ok"),
    )
    .await;
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
    let (out, planned) = plan_clusters(&tf);
    let w = one_diagnostic(&out, "Warning", "kubeconfig refused");
    for (name, _, field) in &cases {
        let line = entry(w, &format!("{ns}/{name}"));
        assert!(
            line.contains(&format!(".{field}`")),
            "{name}: field {field} not named: {line}"
        );
        assert!(!planned.contains_key(&format!("{ns}/{name}")), "{name}");
    }
    assert_eq!(
        planned.keys().collect::<Vec<_>>(),
        vec![&format!("{ns}/inert")]
    );
    apply_ok(&tf);
    for (name, _, _) in &cases {
        assert!(inv.bridged_kubeconfig(&ns, name).await.is_none(), "{name}");
    }

    inv.rewrite(
        &tf,
        &bridge(
            &ns,
            &[&ns],
            "  credentials {\n    allow_exec_kubeconfigs = true\n  }",
        ),
    );
    let out = apply_ok(&tf);
    let exec_kc = kubeconfig_with_user(cases[1].1);
    assert_eq!(
        inv.bridged_kubeconfig(&ns, "exec").await,
        Some(
            tfsveltos::domain::kubeconfig::canonical(
                exec_kc.as_bytes(),
                &tfsveltos::domain::kubeconfig::KubeconfigPolicy { allow_exec: true },
                None
            )
            .unwrap()
        ),
        "{out}"
    );
    for name in ["token-file", "auth-provider", "client-key"] {
        assert!(inv.bridged_kubeconfig(&ns, name).await.is_none(), "{name}");
    }

    // Exec refused again. The refresh reads the inventory ahead for the plan and checks its kubeconfigs under the
    // policy last applied, which allowed exec; the plan's own policy refuses the exec kubeconfig again, naming it
    // (the bridged cluster is kept as it is).
    inv.rewrite(&tf, &bridge(&ns, &[&ns], ""));
    let (out, _) = plan_clusters(&tf);
    let w = one_diagnostic(&out, "Warning", "kubeconfig refused");
    let line = entry(w, &format!("{ns}/exec"));
    assert!(line.contains(".exec`"), "exec not named: {line}\n{out}");
    tf.destroy();
}

/// The YAML alias bomb: an 800 KB labelled Secret whose 150,000 aliases point at a 100,000-item list. `plan`
/// finishes, rejects it naming the profile, and plans the other clusters. Prints wall time and the provider's
/// peak RSS.
#[tokio::test(flavor = "multi_thread")]
async fn alias_bomb_is_rejected_and_the_others_are_planned() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "bomb").await;
    let bomb = alias_bomb();
    assert!(
        (780_000..1_000_000).contains(&bomb.len()),
        "{} bytes",
        bomb.len()
    );
    inv.profile_with_secret(&ns, "bomb", &[], Json::Null, &bomb)
        .await;
    for name in ["fine-1", "fine-2"] {
        inv.profile_with_secret(
            &ns,
            name,
            &[],
            Json::Null,
            &fixtures::unreachable_kubeconfig(name),
        )
        .await;
    }
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
    let m = measure(&tf, &["plan", "-input=false", "-no-color", "-out=tfplan"]);
    let out = text(&m.output);
    support::inventory::report(&format!(
        "alias bomb ({} bytes): tofu plan took {:.2} s; provider peak RSS {:.1} MiB over {} provider process(es)",
        bomb.len(),
        m.wall.as_secs_f64(),
        m.provider_peak_rss_kib as f64 / 1024.0,
        m.provider_processes
    ));
    assert!(m.output.status.success(), "plan failed:\n{out}");
    let w = one_diagnostic(&out, "Warning", "kubeconfig refused");
    assert!(
        entry(w, &format!("{ns}/bomb")).contains("nodes"),
        "the rejection names the profile and the node budget:\n{w}"
    );
    assert!(
        m.provider_processes > 0 && m.provider_peak_rss_kib > 0,
        "the provider was measured"
    );
    // Generous ceilings (debug build, busy shared machine); the unbounded parser grew to gigabytes.
    assert!(
        m.provider_peak_rss_kib < 300 * 1024,
        "provider peak RSS {} KiB",
        m.provider_peak_rss_kib
    );
    assert!(m.wall.as_secs() < 60, "plan took {:?}", m.wall);
    let plan = tf.json(&["show", "-json", "-no-color", "tfplan"]);
    let clusters = &plan["resource_changes"][0]["change"]["after"]["clusters"];
    for name in ["fine-1", "fine-2"] {
        assert!(
            clusters.get(format!("{ns}/{name}")).is_some(),
            "{name} planned: {clusters}"
        );
    }
    assert!(clusters.get(format!("{ns}/bomb")).is_none());
}

/// A profile asking for `LD_PRELOAD` through KEP-5339 additional-envs (provider policy `Replace`) and one whose
/// server is outside `exec_allowed_servers`: no plugin runs for either (the plugin logs each run), each warning
/// names the variable or the host; a well-behaved profile's plugin does run.
#[tokio::test(flavor = "multi_thread")]
async fn profiles_cannot_steer_exec_plugins() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "steer").await;
    let scratch = tempfile::tempdir().unwrap();
    let plugin = Plugin::write(scratch.path(), 3600, &[("tok", Some("Replace"))]);
    inv.profile(
        &ns,
        "preload",
        &[],
        exec_status(
            "tok",
            "https://api.allowed.example:6443",
            json!([{"name": keys::ADDITIONAL_ENVS_EXTENSION, "extension": {"LD_PRELOAD": "/tmp/evil.so"}}]),
        ),
    )
    .await;
    inv.profile(
        &ns,
        "elsewhere",
        &[],
        exec_status("tok", "https://token-sink.attacker.example:443", json!([])),
    )
    .await;
    inv.profile(
        &ns,
        "good",
        &[],
        exec_status(
            "tok",
            "https://api.allowed.example:6443",
            json!([{"name": keys::ADDITIONAL_ENVS_EXTENSION, "extension": {"REGION": "eu"}}]),
        ),
    )
    .await;
    let cli = Cli::tofu();
    let tf = inv.tf(
        &cli,
        &bridge(&ns, &[&ns],
            &format!(
                "  credentials {{\n    exec_providers_file = \"{}\"\n    exec_allowed_servers = [\"*.allowed.example\"]\n    \
                 exec_providers = {{ tok = {{ namespaces = [\"{ns}\"], profile_env = [\"REGION\"] }} }}\n  }}",
                plugin.providers_file.display()
            ),
        ),
    );
    let out = apply_ok(&tf);
    let w = one_diagnostic(&out, "Warning", "exec provider refused");
    let line = |name: &str| entry(w, &format!("{ns}/{name}"));
    assert!(line("preload").contains("LD_PRELOAD"), "{w}");
    assert!(
        line("elsewhere").contains("token-sink.attacker.example"),
        "{w}"
    );
    let runs = plugin.runs();
    assert!(
        !runs.is_empty(),
        "the well-behaved profile's plugin ran (the marker works)"
    );
    for r in &runs {
        assert!(
            r.contains("server=https://api.allowed.example:6443") && r.ends_with("ld_preload="),
            "a plugin ran for a refused profile: {runs:?}"
        );
    }
    assert!(inv.bridged_kubeconfig(&ns, "good").await.is_some());
    for name in ["preload", "elsewhere"] {
        assert!(inv.bridged_kubeconfig(&ns, name).await.is_none(), "{name}");
    }
    tf.destroy();
}

/// A SveltosCluster and a Secret someone else made that carry the ownership label, at the names the bridge
/// would use and at other names: apply and destroy leave them exactly as they are, and a warning reports them.
#[tokio::test(flavor = "multi_thread")]
async fn objects_that_merely_carry_the_ownership_label_are_never_touched() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "forge").await;
    let name = ns.as_str();
    let kc = fixtures::unreachable_kubeconfig("t");
    for p in ["mine", "squat"] {
        inv.profile_with_secret(&ns, p, &[], Json::Null, &kc).await;
    }
    let forged = [(keys::BRIDGE_LABEL, name)];
    // At the names the bridge would use for profile `squat`, and at unrelated names.
    inv.foreign_sveltos_cluster(&ns, "squat", &forged).await;
    inv.secret(
        &ns,
        "squat-sveltos-kubeconfig",
        &forged,
        &[("kubeconfig", "theirs")],
    )
    .await;
    inv.foreign_sveltos_cluster(&ns, "bystander", &forged).await;
    inv.secret(
        &ns,
        "bystander-secret",
        &forged,
        &[("kubeconfig", "theirs")],
    )
    .await;
    let versions = async || {
        (
            inv.sc_version(&ns, "squat").await,
            inv.secret_version(&ns, "squat-sveltos-kubeconfig").await,
            inv.sc_version(&ns, "bystander").await,
            inv.secret_version(&ns, "bystander-secret").await,
        )
    };
    let before = versions().await;
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &bridge(name, &[&ns], ""));
    let out = apply_ok(&tf);
    let w = one_diagnostic(&out, "Warning", "carry the ownership label");
    for id in [
        "squat",
        "squat-sveltos-kubeconfig",
        "bystander",
        "bystander-secret",
    ] {
        assert!(w.contains(&format!("{ns}/{id}")), "{id} not reported:\n{w}");
    }
    assert_eq!(versions().await, before, "apply touched a foreign object");
    assert!(inv.bridged_kubeconfig(&ns, "mine").await.is_some());
    let clusters = state_clusters(&tf);
    assert!(clusters.contains_key(&format!("{ns}/mine")));
    assert!(
        !clusters.contains_key(&format!("{ns}/squat")),
        "{clusters:?}"
    );
    let (ok, out) = run(
        &tf,
        &["destroy", "-input=false", "-no-color", "-auto-approve"],
    );
    assert!(ok, "{out}");
    assert_eq!(versions().await, before, "destroy touched a foreign object");
    assert!(inv.sc(&ns, "mine").await.is_none());
}

/// `copy_labels`: by default a profile label under `projectsveltos.io/` is not copied (it would choose the
/// cluster's Sveltos profiles); `include` restricts copying to the listed keys.
#[tokio::test(flavor = "multi_thread")]
async fn copy_labels_keeps_sveltos_selectors_out_by_default_and_include_restricts() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "copy").await;
    inv.profile_with_secret(
        &ns,
        "p",
        &[
            ("projectsveltos.io/x", "gold"),
            ("team", "a"),
            ("env", "prod"),
        ],
        Json::Null,
        &fixtures::unreachable_kubeconfig("t"),
    )
    .await;
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
    apply_ok(&tf);
    let l = labels_of(&inv.sc(&ns, "p").await.unwrap());
    assert!(!l.contains_key("projectsveltos.io/x"), "{l:?}");
    assert_eq!((l["team"].as_str(), l["env"].as_str()), ("a", "prod"));
    inv.rewrite(
        &tf,
        &bridge(
            &ns,
            &[&ns],
            "  copy_labels {\n    include = [\"team\"]\n  }",
        ),
    );
    apply_ok(&tf);
    let l = labels_of(&inv.sc(&ns, "p").await.unwrap());
    assert_eq!(l.get("team").map(String::as_str), Some("a"));
    assert!(
        !l.contains_key("env") && !l.contains_key("projectsveltos.io/x"),
        "{l:?}"
    );
    assert_eq!(l[keys::BRIDGE_LABEL], ns);
    tf.destroy();
}

/// One tenant cannot fail every plan: a ClusterProfile whose status holds a timestamp the API server's loose
/// `date-time` check admits but no decoder reads is that cluster's problem. With 20 healthy profiles next to it,
/// all 20 are bridged and the bad one is named; a bridged cluster whose profile turns unreadable is kept as it is,
/// never deregistered for it. The timestamp carries terminal escape sequences (the check reads only the text
/// between the first two `T`s and lets one character of any kind stand for the fraction's dot): the warning
/// quotes them, escaped, and no control character reaches the CLI's output.
#[tokio::test(flavor = "multi_thread")]
async fn an_unreadable_profile_affects_only_its_own_cluster() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "unread").await;
    for i in 0..20 {
        inv.profile_with_secret(
            &ns,
            &format!("ok-{i:02}"),
            &[],
            Json::Null,
            &fixtures::unreachable_kubeconfig("ok"),
        )
        .await;
    }
    inv.profile_with_secret(
        &ns,
        "later-bad",
        &[],
        Json::Null,
        &fixtures::unreachable_kubeconfig("later"),
    )
    .await;
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
    apply_ok(&tf);
    assert_eq!(state_clusters(&tf).len(), 21);

    // Now a new profile and an already bridged one carry a timestamp the API server admits, with an ESC for the
    // fraction's dot and, after a second `T`, a colour sequence, a window-title sequence and a BEL.
    let planted = "2024-01-01T00:00:00\u{1b}1ZT\u{1b}[31mRED\u{1b}]0;owned\u{7}";
    let bad_status = json!({"conditions": [{"type": "ControlPlaneHealthy", "status": "True", "reason": "x",
        "message": "x", "lastTransitionTime": planted}]});
    inv.profile_with_secret(
        &ns,
        "bad",
        &[],
        Json::Null,
        &fixtures::unreachable_kubeconfig("bad"),
    )
    .await;
    // kubectl, not the typed client: the API server's answer holds the timestamp, which the typed client cannot
    // read back either.
    for name in ["bad", "later-bad"] {
        support::TestEnv::get().kubectl(&[
            "-n",
            &ns,
            "patch",
            "clusterprofile",
            name,
            "--subresource=status",
            "--type=merge",
            "-p",
            &json!({ "status": bad_status }).to_string(),
        ]);
    }

    let out = apply_ok(&tf);
    let warning = one_diagnostic(&out, "Warning", "the ClusterProfile cannot be read");
    assert!(
        entry(warning, &format!("{ns}/bad")).contains("not registered"),
        "{warning}"
    );
    assert!(
        entry(warning, &format!("{ns}/later-bad")).contains("kept as it is"),
        "{warning}"
    );
    no_control_characters(&out);
    // The planted text reaches the warning (the decoder quotes what it could not read), each ESC written out.
    for key in ["bad", "later-bad"] {
        let e = entry(warning, &format!("{ns}/{key}"));
        for after_esc in ["1ZT", "[31mRED", "]0;owned"] {
            assert!(
                e.contains(&format!("1b{after_esc}")) || e.contains(&format!("1b}}{after_esc}")),
                "the timestamp's ESC before {after_esc:?} is not quoted, escaped, in: {e}"
            );
        }
    }
    let clusters = state_clusters(&tf);
    assert_eq!(clusters.len(), 21, "{:?}", clusters.keys());
    assert!(clusters.contains_key(&format!("{ns}/later-bad")));
    assert!(!clusters.contains_key(&format!("{ns}/bad")));
    assert!(inv.sc(&ns, "later-bad").await.is_some(), "kept registered");
    // The data sources list the others and name the unreadable ones.
    let ds = inv.tf(
        &cli,
        &format!(
            "data \"sveltos_clusterprofiles\" \"all\" {{\n  namespaces = [\"{ns}\"]\n}}\n\
             output \"n\" {{ value = length(data.sveltos_clusterprofiles.all.cluster_profiles) }}\n"
        ),
    );
    let out = apply_ok(&ds);
    assert!(out.contains("n = 20"), "{out}");
    assert!(out.contains("2 ClusterProfile(s) cannot be read"), "{out}");
    assert!(
        out.contains("[31mRED"),
        "the data source quotes the timestamp:\n{out}"
    );
    no_control_characters(&out);
}

/// Fails when `out` (a CLI's output) holds a control character other than a line break: an escape sequence
/// planted in the inventory would then reach the operator's terminal.
fn no_control_characters(out: &str) {
    let raw: Vec<(usize, char)> = out
        .char_indices()
        .filter(|(_, c)| c.is_control() && *c != '\n')
        .collect();
    assert!(
        raw.is_empty(),
        "control characters {raw:?} in the output:\n{}",
        out.escape_debug()
    );
}

/// The bridge's own objects cannot be turned: a tenant who adds the token-renewal annotation to a bridged Secret
/// (renewal is not configured) and swaps its kubeconfig sees the swap shown by the next plan and written back by
/// apply; a tenant who points another cluster's SveltosCluster annotation `…/cluster-profile` at a neighbour's
/// key shadows nothing: both clusters stay registered and recorded, and destroy removes both.
#[tokio::test(flavor = "multi_thread")]
async fn the_bridges_own_objects_cannot_be_turned() {
    use k8s_openapi::api::core::v1::Secret;
    use kube::api::{Api, Patch, PatchParams};
    let inv = Inv::new().await;
    let a = unique_namespace(&inv.client, "turn-a").await;
    let b = unique_namespace(&inv.client, "turn-b").await;
    let kc = fixtures::unreachable_kubeconfig("good-token");
    inv.profile_with_secret(&a, "c1", &[], Json::Null, &kc)
        .await;
    inv.profile_with_secret(&b, "c1", &[], Json::Null, &kc)
        .await;
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &bridge(&a, &[&a, &b], ""));
    apply_ok(&tf);
    let written = fixtures::written(&kc);
    assert_eq!(
        inv.bridged_kubeconfig(&a, "c1").await,
        Some(written.clone())
    );
    let key = format!("{a}/c1");
    let sha_before = state_clusters(&tf)[&key]["kubeconfig_sha256"].clone();

    // The renewal annotation plus a swapped kubeconfig.
    let evil = fixtures::unreachable_kubeconfig("attacker-token");
    let secrets: Api<Secret> = Api::namespaced(inv.client.clone(), &a);
    secrets
        .patch(
            "c1-sveltos-kubeconfig",
            &PatchParams::default(),
            &Patch::Merge(json!({
                "metadata": {"annotations": {"sveltos.clusterinventory.io/token-renewal": "{}"}},
                "stringData": {"kubeconfig": evil},
            })),
        )
        .await
        .unwrap();
    let (out, planned) = plan_clusters(&tf);
    assert_eq!(
        planned[&key]["kubeconfig_sha256"], sha_before,
        "the plan wants the bridge's kubeconfig back:\n{out}"
    );
    assert_eq!(tf.plan(), 2, "the swap shows as drift");
    apply_ok(&tf);
    assert_eq!(
        inv.bridged_kubeconfig(&a, "c1").await,
        Some(written.clone()),
        "the swapped kubeconfig was written back"
    );

    // B's SveltosCluster claims to be A's.
    inv.patch_sc_metadata(
        &b,
        "c1",
        json!({"annotations": {keys::SOURCE_ANNOTATION: format!("{a}/c1")}}),
    )
    .await;
    apply_ok(&tf);
    let clusters = state_clusters(&tf);
    assert!(
        clusters.contains_key(&format!("{a}/c1")) && clusters.contains_key(&format!("{b}/c1")),
        "{:?}",
        clusters.keys()
    );
    assert!(inv.sc(&a, "c1").await.is_some() && inv.sc(&b, "c1").await.is_some());
    assert_eq!(tf.plan(), 0);
    tf.destroy();
    assert!(inv.sc(&a, "c1").await.is_none(), "A's object was orphaned");
    assert!(inv.sc(&b, "c1").await.is_none(), "B's object was orphaned");
}

/// A tenant who floods the namespaces the bridge reads with large labelled Secrets (the credential label naming
/// profiles that do not exist, several Secrets naming one real profile, and the bridge's own label) costs the
/// bridge their metadata only: no body of theirs crosses the wire, every healthy cluster is bridged and the plan
/// after apply is empty. (Before the bodies were read only where needed, the labelled Secrets and the bridge's
/// labelled objects were two whole LISTs: every byte of the flood, twice per plan.)
#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_labelled_secrets_is_never_read() {
    use support::fault_proxy::FaultProxy;
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "flood").await;
    for i in 0..20 {
        inv.profile_with_secret(
            &ns,
            &format!("ok-{i:02}"),
            &[],
            Json::Null,
            &fixtures::unreachable_kubeconfig("ok"),
        )
        .await;
    }
    // 60 Secrets of 900 KiB: 20 name profiles that do not exist, 20 name the same real profile (`crowded`, which
    // then has 21 candidates and is that cluster's problem), 20 carry the bridge's label.
    inv.profile_with_secret(
        &ns,
        "crowded",
        &[],
        Json::Null,
        &fixtures::unreachable_kubeconfig("crowded"),
    )
    .await;
    let big = "x".repeat(900 * 1024);
    for i in 0..60 {
        let (key, value) = match i / 20 {
            0 => (keys::CLUSTER_PROFILE_LABEL, format!("ghost-{i}")),
            1 => (keys::CLUSTER_PROFILE_LABEL, "crowded".to_string()),
            _ => (keys::BRIDGE_LABEL, ns.clone()),
        };
        inv.secret(
            &ns,
            &format!("flood-{i:02}"),
            &[(key, &value)],
            &[("value", &big)],
        )
        .await;
    }
    let flood_bytes = 60 * big.len();

    let proxy = FaultProxy::start(inv.client.clone()).await;
    let tf = support::Tf::new(&Cli::tofu());
    tf.write_main(&fixtures::main_with_host(
        &proxy.url(),
        &bridge(&ns, &[&ns], ""),
    ));
    let out = apply_ok(&tf);
    let clusters = state_clusters(&tf);
    assert_eq!(clusters.len(), 20, "{:?}\n{out}", clusters.keys());
    let crowded = one_diagnostic(&out, "Warning", "candidate");
    assert!(crowded.contains(&format!("{ns}/crowded")), "{crowded}");
    assert_eq!(tf.plan(), 0, "the plan after apply is empty");
    let read = proxy.answered_bytes();
    eprintln!(
        "answered {read} bytes over two runs; the flood holds {flood_bytes} bytes of Secret data"
    );
    assert!(
        read < flood_bytes / 10,
        "the bridge read {read} bytes: the flood's bodies ({flood_bytes} bytes) crossed the wire; largest \
         answers: {:#?}",
        proxy.largest_answers(8)
    );
}
