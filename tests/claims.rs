//! Issue 13, "one claim per bridge name" and "no panics from input", end to end with the real `tofu` on the
//! shared control plane: two states using one bridge name, moving a bridge between states with `import`,
//! writes counted by the API server's own metrics when one argument changes, and every string attribute
//! driven with huge, empty and malformed values.
//!
//! A test binary of its own: its tests count the SveltosCluster writes the main API server serves
//! (`support::metrics`), and those counters are global to the API server. In a binary with other tests that write
//! SveltosClusters (all of `tests/e2e`) they would count those writes too; test binaries run one after another,
//! and within this one every test that writes SveltosClusters holds `SC_WRITERS`.

support::test_binary!();

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;
use serde_json::Value as Json;
use support::inventory::{Inv, apply_ok, bridge, flat, run, state_clusters};
use support::metrics::{request_total, sum_requests};
use support::{Cli, Tf, fixtures, unique_namespace};

const APPLY: &[&str] = &["apply", "-input=false", "-no-color", "-auto-approve"];
const ADDR: &str = "sveltos_cluster_inventory_bridge.x";
const SC_GROUP: &str = "lib.projectsveltos.io";
/// Every verb that writes a SveltosCluster.
const WRITE_VERBS: &[&str] = &["APPLY", "PATCH", "PUT", "POST", "DELETE"];

/// Held by every test of this binary that writes SveltosClusters, so the API server's counters one test
/// reads only move with its own writes.
static SC_WRITERS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The claim ConfigMap `default/sveltos-bridge-<bridge>`.
async fn claim(inv: &Inv, bridge: &str) -> Option<ConfigMap> {
    Api::<ConfigMap>::namespaced(inv.client.clone(), "default")
        .get_opt(&format!("sveltos-bridge-{bridge}"))
        .await
        .unwrap_or_else(|e| panic!("reading the claim of {bridge}: {e}"))
}

fn claim_instance(cm: &ConfigMap) -> String {
    cm.data
        .as_ref()
        .and_then(|d| d.get("instance"))
        .cloned()
        .unwrap_or_else(|| panic!("claim without `instance`: {cm:?}"))
}

fn state_instance(tf: &Tf) -> String {
    tf.state_resources()[ADDR]["values"]["instance_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no instance_id in state"))
        .to_string()
}

/// Two states with the same bridge `name`: the second fails at plan naming the claim and writes nothing, the
/// first's plan stays empty; after `state rm` in the first, `import` into the second restores the
/// configuration from the claim (empty plan), and apply and destroy work there (destroy deletes the claim).
#[tokio::test(flavor = "multi_thread")]
async fn second_state_with_the_same_name_is_refused_until_imported() {
    let _serial = SC_WRITERS.lock().await;
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "claims-two").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    inv.profile_with_secret(&ns, "p1", &[], Json::Null, &kc)
        .await;
    let cli = Cli::tofu();
    let body = bridge(&ns, &[&ns], "  max_removals = 5");
    let first = inv.tf(&cli, &body);
    apply_ok(&first);
    let cm = claim(&inv, &ns)
        .await
        .expect("the first apply writes a claim");
    assert_eq!(claim_instance(&cm), state_instance(&first));
    let versions = async || {
        (
            inv.sc_version(&ns, "p1").await,
            inv.secret_version(&ns, "p1-sveltos-kubeconfig").await,
            claim(&inv, &ns)
                .await
                .and_then(|c| c.metadata.resource_version),
        )
    };
    let before = versions().await;

    let second = inv.tf(&cli, &body);
    let (ok, out) = run(&second, APPLY);
    assert!(!ok, "the second state applied:\n{out}");
    let out = flat(&out);
    assert!(
        out.contains(&format!("default/sveltos-bridge-{ns}")) && out.contains("state rm"),
        "the error names the claim and how to leave it:\n{out}"
    );
    assert_eq!(versions().await, before, "the second state wrote something");
    assert_eq!(first.plan(), 0, "the first state's plan is no longer empty");

    // Move the bridge: out of the first state, into the second.
    first.run_ok(&["state", "rm", "-no-color", ADDR]);
    second.import(ADDR, &ns);
    assert_eq!(
        second.plan(),
        0,
        "plan right after import is not empty: configuration not restored from the claim"
    );
    // An instance of its own, taking the claim over at its first apply.
    assert_ne!(state_instance(&second), claim_instance(&cm));
    assert_eq!(versions().await, before, "import or plan wrote something");

    inv.profile_with_secret(&ns, "p2", &[], Json::Null, &kc)
        .await;
    apply_ok(&second);
    assert!(inv.sc(&ns, "p2").await.is_some(), "apply after import");
    let taken = claim(&inv, &ns).await.expect("the claim");
    assert_eq!(claim_instance(&taken), state_instance(&second));
    assert_eq!(state_clusters(&second).len(), 2);
    second.destroy();
    assert!(inv.sc(&ns, "p1").await.is_none());
    assert!(inv.sc(&ns, "p2").await.is_none());
    assert!(
        claim(&inv, &ns).await.is_none(),
        "destroy left the claim behind"
    );
}

/// The security review's "two states, one bridge": a second state imports a bridge while the first still holds
/// it. Import gives the second state an instance of its own; its first apply takes the claim over, and from then on
/// the first state's plan and apply fail naming the claim, so the two never undo each other's work.
#[tokio::test(flavor = "multi_thread")]
async fn an_import_beside_a_live_state_takes_the_bridge_over_loudly() {
    let _serial = SC_WRITERS.lock().await;
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "claims-live").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for p in ["p1", "p2"] {
        inv.profile_with_secret(&ns, p, &[], Json::Null, &kc).await;
    }
    let cli = Cli::tofu();
    let first = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
    apply_ok(&first);
    let second = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
    let (ok, out) = run(&second, &["import", "-input=false", "-no-color", ADDR, &ns]);
    assert!(
        ok && flat(&out).contains("Imported bridge taken over at the next apply"),
        "import warns that it takes the bridge over:\n{out}"
    );
    assert_ne!(state_instance(&second), state_instance(&first));
    // The second state narrows the selection: its apply deregisters p2 and takes the claim over.
    inv.rewrite(&second, &bridge(&ns, &[&ns], "  names = [\"p1\"]"));
    apply_ok(&second);
    assert!(
        inv.sc(&ns, "p2").await.is_none(),
        "the second state's apply"
    );
    let cm = claim(&inv, &ns).await.expect("the claim");
    assert_eq!(claim_instance(&cm), state_instance(&second));
    // The first state cannot put p2 back: its plan and apply fail naming the claim.
    for args in [&["plan", "-input=false", "-no-color"][..], APPLY] {
        let (ok, out) = run(&first, args);
        assert!(
            !ok,
            "the first state still manages the bridge ({args:?}):\n{out}"
        );
        assert!(
            flat(&out).contains(&format!("default/sveltos-bridge-{ns}")),
            "{out}"
        );
    }
    assert!(
        inv.sc(&ns, "p2").await.is_none(),
        "the first state undid the second's work"
    );
    assert_eq!(second.plan(), 0, "the second state's plan is not empty");
    first.run_ok(&["state", "rm", "-no-color", ADDR]);
    second.destroy();
}

/// An imported bridge destroyed before its first apply: the claim still holds the instance the import took over,
/// and it is this state's to release (one takeover rule for the claim check and the release), so destroy deletes
/// the clusters and the claim. (`-refresh=false` skips the plan before the destroy, and with it the plan's claim
/// check: the release alone decides here.)
#[tokio::test(flavor = "multi_thread")]
async fn an_imported_bridge_destroyed_before_it_applies_releases_the_claim() {
    let _serial = SC_WRITERS.lock().await;
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "claims-import-destroy").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    inv.profile_with_secret(&ns, "p1", &[], Json::Null, &kc)
        .await;
    let cli = Cli::tofu();
    let first = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
    apply_ok(&first);
    let held = claim_instance(&claim(&inv, &ns).await.expect("the claim"));
    first.run_ok(&["state", "rm", "-no-color", ADDR]);
    let second = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
    second.import(ADDR, &ns);
    assert_ne!(state_instance(&second), held, "an instance of its own");
    let cm = claim(&inv, &ns).await.expect("import leaves the claim");
    assert_eq!(claim_instance(&cm), held, "nothing applied yet");
    let destroy = ["destroy", "-input=false", "-no-color", "-auto-approve"];
    second.run_ok(&[&destroy[..], &["-refresh=false"]].concat());
    assert!(inv.sc(&ns, "p1").await.is_none(), "destroy left p1");
    assert!(
        claim(&inv, &ns).await.is_none(),
        "destroy left the claim the import took over"
    );
}

/// Without a claim (deleted here), import takes over the labelled objects but restores no configuration, and
/// says so: the warning `Imported bridge configuration not restored`, a plan showing the configuration as changes,
/// and an apply that writes a new claim, the imported cluster kept as the same object.
#[tokio::test(flavor = "multi_thread")]
async fn an_import_without_a_claim_restores_nothing_and_says_so() {
    let _serial = SC_WRITERS.lock().await;
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "claims-none").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    inv.profile_with_secret(&ns, "p1", &[], Json::Null, &kc)
        .await;
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &bridge(&ns, &[&ns], "  max_removals = 5"));
    apply_ok(&tf);
    let uid = |sc: Option<tfsveltos::api::SveltosCluster>| sc.and_then(|sc| sc.metadata.uid);
    let before = uid(inv.sc(&ns, "p1").await);
    Api::<ConfigMap>::namespaced(inv.client.clone(), "default")
        .delete(&format!("sveltos-bridge-{ns}"), &Default::default())
        .await
        .expect("deleting the claim");
    tf.run_ok(&["state", "rm", "-no-color", ADDR]);
    let (ok, out) = run(&tf, &["import", "-input=false", "-no-color", ADDR, &ns]);
    assert!(
        ok && flat(&out).contains("Imported bridge configuration not restored"),
        "import without a claim warns:\n{out}"
    );
    assert_eq!(tf.plan(), 2, "the configuration shows as changes");
    apply_ok(&tf);
    assert!(
        claim(&inv, &ns).await.is_some(),
        "the apply writes a new claim"
    );
    assert_eq!(uid(inv.sc(&ns, "p1").await), before, "p1 was replaced");
    assert_eq!(tf.plan(), 0);
    tf.destroy();
}

/// Five clusters: changing `extra_annotations` of one override writes exactly one SveltosCluster, counted by
/// the API server (`apiserver_request_total`); changing `max_removals`, which changes no SveltosCluster,
/// writes none.
#[tokio::test(flavor = "multi_thread")]
async fn changing_one_override_writes_one_cluster() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "claims-writes").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    let names: Vec<String> = (0..5).map(|i| format!("c{i}")).collect();
    for n in &names {
        inv.profile_with_secret(&ns, n, &[], Json::Null, &kc).await;
    }
    let body = |value: &str, extra: &str| {
        bridge(
            &ns,
            &[&ns],
            &format!(
                "  overrides = {{\n    \"{ns}/c2\" = {{ extra_annotations = {{ \"example.com/note\" = \"{value}\" }} }}\n  }}\n{extra}"
            ),
        )
    };
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &body("one", ""));
    apply_ok(&tf);
    let versions = async || {
        let mut v = BTreeMap::new();
        for n in &names {
            v.insert(
                n.clone(),
                (
                    inv.sc_version(&ns, n).await,
                    inv.secret_version(&ns, &format!("{n}-sveltos-kubeconfig"))
                        .await,
                ),
            );
        }
        v
    };

    let _serial = SC_WRITERS.lock().await;
    let before = versions().await;
    let writes_before = request_total(SC_GROUP, "sveltosclusters", WRITE_VERBS);
    inv.rewrite(&tf, &body("two", ""));
    apply_ok(&tf);
    let writes = request_total(SC_GROUP, "sveltosclusters", WRITE_VERBS) - writes_before;
    support::inventory::report(&format!(
        "one override's extra_annotations changed on 5 clusters: {writes} SveltosCluster write(s)"
    ));
    let after = versions().await;
    let changed: Vec<&String> = names
        .iter()
        .filter(|n| before[*n].0 != after[*n].0)
        .collect();
    assert_eq!(changed, [&"c2".to_string()], "SveltosClusters rewritten");
    assert!(
        names.iter().all(|n| before[n].1 == after[n].1),
        "a Secret was rewritten"
    );
    let sc = inv.sc(&ns, "c2").await.unwrap();
    assert_eq!(
        sc.metadata
            .annotations
            .unwrap_or_default()
            .get("example.com/note")
            .map(String::as_str),
        Some("two")
    );
    assert_eq!(writes, 1, "SveltosCluster writes for one changed override");

    let writes_before = request_total(SC_GROUP, "sveltosclusters", WRITE_VERBS);
    inv.rewrite(&tf, &body("two", "  max_removals = 3"));
    apply_ok(&tf);
    let writes = request_total(SC_GROUP, "sveltosclusters", WRITE_VERBS) - writes_before;
    support::inventory::report(&format!(
        "max_removals changed on 5 clusters: {writes} SveltosCluster write(s)"
    ));
    assert_eq!(versions().await, after, "max_removals rewrote objects");
    assert_eq!(
        writes, 0,
        "SveltosCluster writes for a bridge-wide argument"
    );
    assert_eq!(tf.plan(), 0);
    drop(_serial);
    tf.destroy();
}

#[test]
fn metrics_sum_only_the_wanted_series() {
    let line = |code: &str, group: &str, resource: &str, sub: &str, verb: &str, n: u64| {
        format!(
            "apiserver_request_total{{code=\"{code}\",component=\"apiserver\",dry_run=\"\",group=\"{group}\",\
             resource=\"{resource}\",scope=\"resource\",subresource=\"{sub}\",verb=\"{verb}\",version=\"v1\"}} {n}\n"
        )
    };
    let text = format!(
        "# HELP apiserver_request_total x\n{}{}{}{}",
        line("200", SC_GROUP, "sveltosclusters", "", "APPLY", 7),
        line("201", SC_GROUP, "sveltosclusters", "", "APPLY", 2),
        line("200", SC_GROUP, "sveltosclusters", "status", "PATCH", 5),
        line("200", "", "secrets", "", "APPLY", 11),
    );
    assert_eq!(
        sum_requests(&text, SC_GROUP, "sveltosclusters", WRITE_VERBS),
        9
    );
    assert_eq!(sum_requests(&text, "", "secrets", &["APPLY"]), 11);
}

// ---------------------------------------------------------------------------------------------
// every string attribute: huge, empty, malformed
// ---------------------------------------------------------------------------------------------

/// What a value must lead to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    /// An error whose range is the attribute (the provider gave its path).
    Reject,
    /// No error, or an error at the attribute; never a crash.
    Either,
}
use Want::{Either, Reject};

/// How values of an attribute look.
#[derive(Clone, Copy)]
enum Shape {
    /// A Kubernetes name or label part.
    Name,
    /// A Go duration.
    Duration,
    /// `namespace/name` of a ClusterProfile.
    Ref,
    /// Anything else (selector, path, cron, ...): the malformed value is given.
    Other(&'static str),
}

const HUGE: usize = 100_000;

/// `(label, HCL inside the resource with `{v}` for the value, shape, wants for huge / empty / malformed)`.
type Row = (&'static str, &'static str, Shape, [Want; 3]);

fn rows() -> Vec<Row> {
    use Shape::*;
    let r3 = [Reject, Reject, Reject];
    vec![
        ("name", "name = {v}", Other("bad name!"), r3),
        ("namespaces", "namespaces = [{v}]", Name, r3),
        ("names", "names = [{v}]", Ref, r3),
        (
            "label_selector",
            "label_selector = {v}",
            Other("env in (a"),
            [Reject, Either, Reject],
        ),
        (
            "cluster_manager",
            "cluster_manager = {v}",
            Other("two words"),
            [Reject, Reject, Either],
        ),
        ("claim_namespace", "claim_namespace = {v}", Name, r3),
        ("unhealthy", "unhealthy = {v}", Other("delete"), r3),
        (
            "deregistration",
            "deregistration = {v}",
            Other("delete"),
            r3,
        ),
        (
            "deregistration_timeout",
            "deregistration_timeout = {v}",
            Duration,
            r3,
        ),
        (
            "credentials.consumer",
            "credentials {\n    consumer = {v}\n  }",
            Other("a b"),
            // Empty is valid: it turns consumer namespaces off.
            [Reject, Either, Reject],
        ),
        (
            "credentials.exec_providers_file",
            "credentials {\n    exec_providers_file = {v}\n  }",
            Other("does/not/exist.json"),
            [Either, Reject, Either],
        ),
        (
            "credentials.refresh_before",
            "credentials {\n    refresh_before = {v}\n  }",
            Duration,
            r3,
        ),
        (
            "credentials.secret_label",
            "credentials {\n    secret_label = {v}\n  }",
            Other("bad key!"),
            r3,
        ),
        (
            "credentials.kubeconfig_keys",
            "credentials {\n    kubeconfig_keys = [{v}]\n  }",
            Other("a/b"),
            r3,
        ),
        (
            "credentials.secret_namespaces",
            "credentials {\n    secret_namespaces = [{v}]\n  }",
            Name,
            r3,
        ),
        (
            "credentials.secret_reader_namespaces",
            "credentials {\n    secret_reader_namespaces = [{v}]\n  }",
            Name,
            r3,
        ),
        (
            "credentials.secret_reader_mode",
            "credentials {\n    secret_reader_mode = {v}\n  }",
            Other("whole"),
            r3,
        ),
        (
            "credentials.exec_allowed_servers",
            "credentials {\n    exec_allowed_servers = [{v}]\n  }",
            Other("http://x/"),
            r3,
        ),
        (
            "copy_labels.include",
            "copy_labels {\n    include = [{v}]\n  }",
            Other("bad key!"),
            r3,
        ),
        (
            "copy_labels.exclude",
            "copy_labels {\n    exclude = [{v}]\n  }",
            Other("bad key!"),
            r3,
        ),
        (
            "timeouts.create",
            "timeouts {\n    create = {v}\n  }",
            Duration,
            r3,
        ),
        (
            "timeouts.update",
            "timeouts {\n    update = {v}\n  }",
            Duration,
            r3,
        ),
        (
            "timeouts.delete",
            "timeouts {\n    delete = {v}\n  }",
            Duration,
            r3,
        ),
        (
            "token_renewal.interval",
            "token_renewal {\n    interval = {v}\n  }",
            Duration,
            r3,
        ),
        (
            "token_renewal.token_duration",
            "token_renewal {\n    interval = \"1h\"\n    token_duration = {v}\n  }",
            Duration,
            r3,
        ),
        (
            "token_renewal.service_account",
            "token_renewal {\n    interval = \"1h\"\n    service_account = {v}\n  }",
            Other("no-slash"),
            r3,
        ),
        (
            "overrides key",
            "overrides = {\n    {v} = { paused = true }\n  }",
            Ref,
            r3,
        ),
        (
            "overrides[k].token_renewal.interval",
            "overrides = {\n    \"ns/x\" = { token_renewal = { interval = {v} } }\n  }",
            Duration,
            r3,
        ),
        (
            "overrides[k].token_renewal.service_account",
            "overrides = {\n    \"ns/x\" = { token_renewal = { interval = \"1h\", service_account = {v} } }\n  }",
            Other("a/b/c"),
            r3,
        ),
        (
            "active_window.from",
            "active_window {\n    from = {v}\n    to = \"0 18 * * *\"\n  }",
            Other("not a cron"),
            [Either, Reject, Either],
        ),
        (
            "overrides[k].active_window.to",
            "overrides = {\n    \"ns/x\" = { active_window = { from = \"0 8 * * *\", to = {v} } }\n  }",
            Other("not a cron"),
            [Either, Reject, Either],
        ),
        (
            "extra_labels key",
            "extra_labels = {\n    {v} = \"x\"\n  }",
            Other("bad key!"),
            r3,
        ),
        (
            "extra_labels value",
            "extra_labels = {\n    \"k\" = {v}\n  }",
            Other("bad value!"),
            [Reject, Either, Reject],
        ),
        (
            "extra_annotations value",
            "extra_annotations = {\n    \"example.com/k\" = {v}\n  }",
            Other("any\ttext"),
            [Either, Either, Either],
        ),
    ]
}

fn values(shape: Shape) -> [String; 3] {
    match shape {
        Shape::Name => ["a".repeat(HUGE), String::new(), "Bad_NS".into()],
        // 100 KB of digits: overflows every integer type.
        Shape::Duration => [
            format!("{}h", "9".repeat(HUGE - 1)),
            String::new(),
            "5 minutes".into(),
        ],
        Shape::Ref => [
            format!("ns/{}", "a".repeat(HUGE)),
            String::new(),
            "Bad_NS/x".into(),
        ],
        Shape::Other(bad) => ["a".repeat(HUGE), String::new(), bad.into()],
    }
}

/// One case of the table, rendered as one resource.
struct Case {
    label: String,
    want: Want,
    /// Lines of the case's own HCL (the attribute under test), 1-based, inclusive.
    lines: (usize, usize),
    /// Lines of the whole resource block.
    block: (usize, usize),
    /// How many lines (`name`, `namespaces`) precede the case's own HCL in the block.
    defaults: usize,
    hcl: String,
}

fn cases(ns: &str) -> Vec<Case> {
    let mut out = Vec::new();
    for (label, template, shape, wants) in rows() {
        for ((variant, value), want) in ["huge", "empty", "malformed"]
            .into_iter()
            .zip(values(shape))
            .zip(wants)
        {
            let i = out.len();
            let own = template
                .replace("{v}", &fixtures::hcl_string(&value))
                .replace("ns/x", &format!("{ns}/x"));
            let mut hcl = format!("resource \"sveltos_cluster_inventory_bridge\" \"c{i}\" {{\n");
            let mut defaults = 0;
            if !own.starts_with("name =") {
                hcl += &format!("  name = \"{ns}-c{i}\"\n");
                defaults += 1;
            }
            if !own.starts_with("namespaces =") {
                hcl += &format!("  namespaces = [\"{ns}\"]\n");
                defaults += 1;
            }
            hcl += &format!("  {own}\n}}\n");
            out.push(Case {
                label: format!("{label} ({variant})"),
                want,
                lines: (0, 0),
                block: (0, 0),
                defaults,
                hcl,
            });
        }
    }
    out
}

/// Writes `cases` after the provider header; records each case's line ranges.
fn write_cases(inv: &Inv, tf: &Tf, cases: &mut [&mut Case]) {
    let header = fixtures::provider_header(&inv.kubeconfig, None);
    let mut text = header.clone();
    let mut line = header.lines().count() + 1;
    for c in cases.iter_mut() {
        let n = c.hcl.lines().count();
        c.block = (line, line + n - 1);
        // The case's own attribute: after the header and the default lines, before the closing brace.
        c.lines = (line + 1 + c.defaults, line + n - 2);
        text += &c.hcl;
        line += n;
    }
    tf.write_main(&text);
}

/// The diagnostics of `<cli> <args> -json`-style output (`validate -json`: one object; `plan -json`: one line
/// per message).
fn json_diagnostics(stdout: &str) -> Vec<Json> {
    if let Ok(v) = serde_json::from_str::<Json>(stdout) {
        return v["diagnostics"].as_array().cloned().unwrap_or_default();
    }
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Json>(l).ok())
        .filter(|m| m["type"] == "diagnostic")
        .map(|m| m["diagnostic"].clone())
        .collect()
}

fn assert_no_crash(what: &str, out: &str) {
    for sign in [
        "plugin crashed",
        "panicked",
        "Stack trace from",
        "Plugin did not respond",
        "unexpected EOF",
    ] {
        assert!(
            !out.contains(sign),
            "{what}: the provider crashed ({sign:?}):\n{}",
            &out[..out.len().min(20_000)]
        );
    }
}

/// Checks the errors that fell in each case's block; returns the labels of the cases with no error.
fn judge(
    stage: &str,
    cases: &[&mut Case],
    diags: &[Json],
    failures: &mut Vec<String>,
) -> Vec<String> {
    let mut accepted = Vec::new();
    for c in cases {
        let errors: Vec<&Json> = diags
            .iter()
            .filter(|d| d["severity"] == "error")
            .filter(|d| {
                d["range"]["start"]["line"]
                    .as_u64()
                    .is_some_and(|l| (c.block.0..=c.block.1).contains(&(l as usize)))
            })
            .collect();
        let summary = |d: &Json| {
            let s = format!("{}: {}", d["summary"], d["detail"]);
            s.chars().take(300).collect::<String>()
        };
        let off_path: Vec<String> = errors
            .iter()
            .filter(|d| {
                d["range"]["start"]["line"]
                    .as_u64()
                    .is_none_or(|l| !(c.lines.0..=c.lines.1).contains(&(l as usize)))
            })
            .map(|d| format!("line {}: {}", d["range"]["start"]["line"], summary(d)))
            .collect();
        if !off_path.is_empty() {
            failures.push(format!(
                "{stage}: {}: error without the attribute's path (attribute on lines {}-{}, block {}-{}): {off_path:?}",
                c.label, c.lines.0, c.lines.1, c.block.0, c.block.1
            ));
        }
        if errors.is_empty() {
            if c.want == Reject {
                failures.push(format!("{stage}: {}: accepted, want an error", c.label));
            }
            accepted.push(c.label.clone());
        }
    }
    accepted
}

/// Errors that fall in no case's block (no location, or the provider block): the provider lost the path.
fn unplaced(cases: &[&mut Case], diags: &[Json], failures: &mut Vec<String>) {
    for d in diags.iter().filter(|d| d["severity"] == "error") {
        let line = d["range"]["start"]["line"].as_u64().map(|l| l as usize);
        if !line.is_some_and(|l| cases.iter().any(|c| (c.block.0..=c.block.1).contains(&l))) {
            let s = format!("{}: {}", d["summary"], d["detail"]);
            failures.push(format!(
                "an error located in no case: {}",
                s.chars().take(300).collect::<String>()
            ));
        }
    }
}

/// Every string attribute of the resource with a 100 KB value, an empty string and a malformed value, in one
/// `tofu validate` (one resource per case), then one `tofu plan` of the cases validate accepted: each value is
/// an error located at its attribute, or accepted and planned (or refused at its attribute); the provider never
/// crashes.
#[tokio::test(flavor = "multi_thread")]
async fn every_string_attribute_with_huge_empty_and_malformed_values() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "claims-val").await;
    let cli = Cli::tofu();
    let tf = Tf::new(&cli);
    let mut all = cases(&ns);
    let mut failures = Vec::new();

    let mut refs: Vec<&mut Case> = all.iter_mut().collect();
    write_cases(&inv, &tf, &mut refs);
    let out = tf.run(&["validate", "-json", "-no-color"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_no_crash(
        "validate",
        &format!("{stdout}{}", String::from_utf8_lossy(&out.stderr)),
    );
    let diags = json_diagnostics(&stdout);
    assert!(
        !diags.is_empty(),
        "validate returned no diagnostics at all:\n{}",
        support::describe_output(&out)
    );
    let accepted = judge("validate", &refs, &diags, &mut failures);
    unplaced(&refs, &diags, &mut failures);
    support::inventory::report(&format!(
        "{} string-attribute cases: {} refused by validate, {} accepted",
        refs.len(),
        refs.len() - accepted.len(),
        accepted.len()
    ));

    // What validate accepted must plan, or fail at its attribute.
    let mut rest: Vec<&mut Case> = all
        .iter_mut()
        .filter(|c| accepted.contains(&c.label))
        .collect();
    if !rest.is_empty() {
        write_cases(&inv, &tf, &mut rest);
        let out = tf.run(&["plan", "-input=false", "-no-color", "-json"]);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_no_crash(
            "plan",
            &format!("{stdout}{}", String::from_utf8_lossy(&out.stderr)),
        );
        let diags = json_diagnostics(&stdout);
        judge("plan", &rest, &diags, &mut failures);
        unplaced(&rest, &diags, &mut failures);
    }
    assert!(
        failures.is_empty(),
        "{} case(s) misbehaved:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Nothing was written: no claim for any case.
    for i in 0..all.len() {
        assert!(claim(&inv, &format!("{ns}-c{i}")).await.is_none());
    }
}

/// Issue 15, trust boundary of the reads a refresh starts for the plan: they use only settings an apply of the
/// operator's configuration recorded. After an import the configuration in the state comes from the cluster
/// (the claim): someone who rewrote the claim's record to name another credential label must not make the next
/// plans list the Secrets carrying it, before or after the operator's apply.
#[tokio::test(flavor = "multi_thread")]
async fn reads_ahead_never_use_a_configuration_from_the_cluster() {
    let _serial = SC_WRITERS.lock().await;
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "claims-forged").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    inv.profile_with_secret(&ns, "p1", &[], Json::Null, &kc)
        .await;
    let victim = format!("victim-{ns}");
    inv.secret(
        &ns,
        "db",
        &[(victim.as_str(), "p1")],
        &[("password", "hunter2")],
    )
    .await;
    let cli = Cli::tofu();
    let body = bridge(&ns, &[&ns], "");
    let first = inv.tf(&cli, &body);
    apply_ok(&first);
    first.run_ok(&["state", "rm", "-no-color", ADDR]);

    // The claim's record now names the victim label.
    let claims = Api::<ConfigMap>::namespaced(inv.client.clone(), "default");
    let name = format!("sveltos-bridge-{ns}");
    let mut cm = claims.get(&name).await.expect("the claim");
    let data = cm.data.as_mut().expect("claim data");
    let mut record: Json = serde_json::from_str(&data["config"]).expect("config record");
    record["credentials"] = serde_json::json!({ "secret_label": victim });
    data.insert("config".into(), record.to_string());
    claims
        .replace(&name, &Default::default(), &cm)
        .await
        .expect("rewriting the claim");

    let second = inv.tf(&cli, &body);
    second.import(ADDR, &ns);
    let selects_victim = |uri: &str| {
        let uri = uri.replace("%2F", "/").replace("%3D", "=");
        uri.contains("labelSelector=") && uri.contains(&victim)
    };
    let victim_lists = || {
        support::inventory::secret_events_in_all()
            .iter()
            .filter(|e| e["verb"] == "list" && e["stage"] == "ResponseComplete")
            .filter(|e| selects_victim(e["requestURI"].as_str().unwrap_or_default()))
            .count()
    };
    // The imported state shows the record's label as a change to the operator's configuration.
    assert_eq!(second.plan(), 2, "the forged record shows as a change");
    assert_eq!(second.plan(), 2);
    apply_ok(&second);
    assert_eq!(second.plan(), 0);
    assert_eq!(
        victim_lists(),
        0,
        "a plan listed the Secrets of a label that came from the cluster"
    );
}

/// A bridge `x` named `ns` selecting namespace `ns`, with `extra` (no output: an imported state has none, and a
/// new output is a change to the plan).
fn bridge_only(ns: &str, extra: &str) -> String {
    format!(
        "resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name = \"{ns}\"\n  namespaces = [\"{ns}\"]\n{extra}\n}}\n"
    )
}

/// The `server` and `token` of the test environment's kubeconfig (the management cluster).
fn server_and_token(kubeconfig: &std::path::Path) -> (String, String) {
    let text = std::fs::read_to_string(kubeconfig).expect("kubeconfig");
    let field = |name: &str| {
        text.lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix(name)
                    .map(|v| v.trim().trim_matches('"').to_string())
            })
            .unwrap_or_else(|| panic!("no {name} in the test kubeconfig"))
    };
    (field("server:"), field("token:"))
}

/// Applies `body` in one state, moves the bridge out of it (`state rm`), then runs the commands of
/// `examples/resources/sveltos_cluster_inventory_bridge/import.sh` in a second state with the same
/// configuration: the plan right after is empty (`plan -detailed-exitcode` exits 0).
async fn import_round(inv: &Inv, cli: &Cli, ns: &str, body: &str, vars: &[(&str, &str)]) {
    let first = inv.tf(cli, body);
    let second = inv.tf(cli, body);
    let mut args: Vec<String> = Vec::new();
    for (k, v) in vars {
        args.push(format!("-var={k}={v}"));
    }
    let with = |base: &[&str]| -> Vec<String> {
        base.iter()
            .map(|s| s.to_string())
            .chain(args.iter().cloned())
            .collect()
    };
    let apply = with(APPLY);
    let apply: Vec<&str> = apply.iter().map(String::as_str).collect();
    let (ok, out) = run(&first, &apply);
    assert!(ok, "{}: apply:\n{out}", cli.name);
    first.run_ok(&["state", "rm", "-no-color", ADDR]);
    let import = with(&["import", "-input=false", "-no-color"]);
    let mut import: Vec<&str> = import.iter().map(String::as_str).collect();
    import.extend([ADDR, ns]);
    let (ok, out) = run(&second, &import);
    assert!(ok, "{}: import:\n{out}", cli.name);
    let plan = with(&["plan", "-input=false", "-no-color", "-detailed-exitcode"]);
    let plan: Vec<&str> = plan.iter().map(String::as_str).collect();
    let out = second.run(&plan);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}: the plan after import is not empty:\n{}{}",
        cli.name,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let destroy = with(&["destroy", "-input=false", "-no-color", "-auto-approve"]);
    let destroy: Vec<&str> = destroy.iter().map(String::as_str).collect();
    let (ok, out) = run(&second, &destroy);
    assert!(ok, "{}: destroy:\n{out}", cli.name);
}

/// Import restores `inventory` (without its secrets) and `timeouts` from the claim: with every CLI, a bridge
/// with an `inventory` block (`config_path`) and `timeouts` is moved between states with the commands of
/// `import.sh` and the next plan is empty; with the CLIs that have write-only attributes (not Terraform
/// 1.0.3), the same with a hub token in `inventory.token_wo`, which is never stored and so never a change.
#[tokio::test(flavor = "multi_thread")]
async fn import_restores_inventory_and_timeouts() {
    let _serial = SC_WRITERS.lock().await;
    let inv = Inv::new().await;
    let kc = fixtures::unreachable_kubeconfig("t");
    let (server, token) = server_and_token(&inv.kubeconfig);
    for cli in Cli::all() {
        let ns = unique_namespace(&inv.client, "claims-import").await;
        inv.profile_with_secret(&ns, "p1", &[], Json::Null, &kc)
            .await;
        let extra = format!(
            "  inventory {{\n    config_path = \"{}\"\n  }}\n  timeouts {{\n    create = \"10m\"\n    delete = \"20m\"\n  }}",
            inv.kubeconfig.display()
        );
        import_round(&inv, &cli, &ns, &bridge_only(&ns, &extra), &[]).await;
        if cli.name == "terraform-1.0.3" {
            continue;
        }
        let ns = unique_namespace(&inv.client, "claims-import-wo").await;
        inv.profile_with_secret(&ns, "p1", &[], Json::Null, &kc)
            .await;
        let extra = format!(
            "  inventory {{\n    host     = \"{server}\"\n    insecure = true\n    token_wo = var.hub_token\n  }}\n  timeouts {{\n    update = \"15m\"\n  }}"
        );
        let body = format!(
            "variable \"hub_token\" {{\n  type      = string\n  ephemeral = true\n}}\n{}",
            bridge_only(&ns, &extra)
        );
        import_round(&inv, &cli, &ns, &body, &[("hub_token", &token)]).await;
    }
}

/// The resource change of the bridge in a saved plan's `show -json`.
fn bridge_change(tf: &Tf) -> Json {
    let plan = tf.plan_json();
    plan["resource_changes"]
        .as_array()
        .and_then(|rc| rc.iter().find(|r| r["address"] == ADDR))
        .cloned()
        .unwrap_or_else(|| panic!("{}: no change of {ADDR} in the plan: {plan}", tf.cli.name))
}

/// Import restores `skipped` (a cluster kept as it is, one not registered) from the claim, so that the plan right
/// after is empty: with the CLI's `import` (every CLI), and with an `import` block (its plan imports and changes
/// nothing; not Terraform 1.0.3, which has no import blocks).
#[tokio::test(flavor = "multi_thread")]
async fn import_restores_skipped() {
    let _serial = SC_WRITERS.lock().await;
    let inv = Inv::new().await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for cli in Cli::all() {
        let ns = unique_namespace(&inv.client, "claims-skipped").await;
        for p in ["ok", "gone"] {
            inv.profile_with_secret(&ns, p, &[], Json::Null, &kc).await;
        }
        inv.profile(&ns, "none", &[], Json::Null).await;
        let body = bridge_only(&ns, "");
        let first = inv.tf(&cli, &body);
        apply_ok(&first);
        inv.delete_secret(&ns, "gone-src").await;
        apply_ok(&first);
        let recorded = first.state_resources()[ADDR]["values"]["skipped"].clone();
        assert_eq!(recorded[format!("{ns}/gone")]["kept"], true, "{recorded}");
        assert_eq!(recorded[format!("{ns}/none")]["kept"], false, "{recorded}");
        first.run_ok(&["state", "rm", "-no-color", ADDR]);

        let second = inv.tf(&cli, &body);
        second.import(ADDR, &ns);
        let restored = second.state_resources()[ADDR]["values"]["skipped"].clone();
        assert_eq!(restored, recorded, "{}: skipped after import", cli.name);
        assert_eq!(
            second.plan(),
            0,
            "{}: the plan after import is not empty",
            cli.name
        );
        if cli.name == "terraform-1.0.3" {
            second.destroy();
            continue;
        }
        second.run_ok(&["state", "rm", "-no-color", ADDR]);
        let block = format!("import {{\n  to = {ADDR}\n  id = \"{ns}\"\n}}\n{body}");
        let third = inv.tf(&cli, &block);
        let change = bridge_change(&third);
        assert!(
            change["change"]["actions"] == serde_json::json!(["no-op"])
                && change["change"]["importing"].is_object(),
            "{}: the import block's plan changes the bridge: {change}",
            cli.name
        );
        apply_ok(&third);
        assert_eq!(
            third.plan(),
            0,
            "{}: the plan after the import block",
            cli.name
        );
        third.destroy();
    }
}
