//! Plans a reviewer can read at fleet scale (issue 36, item 5), judged by the real CLIs: what `plan` prints and
//! what `show -json` of a saved plan holds. Each updated cluster shows its managed SveltosCluster fields old -> new
//! (a label per key, an annotation, `paused`, `consecutive_failure_threshold`), a `Bridge plan:` warning counts
//! what the plan does, and `max_updates` stops a mass update unless raised.

use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value as Json, json};
use support::inventory::{Inv, apply_ok, bridge, clusters_change, flat, one_diagnostic, run};
use support::{Cli, Tf, fixtures, unique_namespace};
use tfsveltos::api::ClusterProfile;

const PLAN_OUT: &[&str] = &["plan", "-input=false", "-no-color", "-out=tfplan"];

/// Whether the human plan `out` has a line showing `field` going from `old` to `new` (`~ "tier" = "gold" ->
/// "silver"`, `~ paused = false -> true`).
fn shows(out: &str, field: &str, old: &str, new: &str) -> bool {
    out.lines()
        .map(str::trim)
        .any(|l| l.starts_with(&format!("~ {field} ")) && l.ends_with(&format!("= {old} -> {new}")))
}

/// The one `Bridge plan:` warning of `out`, flattened.
fn summary(out: &str) -> String {
    flat(one_diagnostic(out, "Warning", "Bridge plan:"))
}

/// Three clusters changed in their managed fields by two hands: one profile's label value (the inventory), and
/// every cluster's annotation, `paused` (false -> true) and `consecutive_failure_threshold` (3 -> 5) (the
/// configuration). With every CLI, the human plan and `show -json` show each field old -> new, the
/// summary counts 3 updates naming the fields, the apply writes them, and the plan after is empty. A state
/// written before the fields existed (their attributes missing) plans empty.
#[tokio::test(flavor = "multi_thread")]
async fn each_changed_field_shows_old_and_new() {
    let inv = Inv::new().await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for cli in Cli::all() {
        let ns = unique_namespace(&inv.client, "readable").await;
        for p in ["p0", "p1", "p2"] {
            inv.profile_with_secret(&ns, p, &[("env", "prod")], Json::Null, &kc)
                .await;
        }
        // Bridge-wide settings, not `overrides`: Terraform 1.0.3 crashes on a plan with `overrides` (its own check
        // of map nested attributes; later versions do not).
        let body = |team: &str, paused: bool, threshold: u32| {
            bridge(
                &ns,
                &[&ns],
                &format!(
                    "  extra_annotations = {{ team = \"{team}\" }}\n  paused = {paused}\n  \
                     consecutive_failure_threshold = {threshold}"
                ),
            )
        };
        let tf = inv.tf(&cli, &body("a", false, 3));
        let out = apply_ok(&tf);
        assert!(
            summary(&out)
                .contains("3 to register, 0 to update, 0 to deregister, 0 skipped, 0 unchanged"),
            "{}: {out}",
            cli.name
        );
        forget_the_readable_fields(&tf);
        assert_eq!(
            tf.plan(),
            0,
            "{}: a state without the readable fields",
            cli.name
        );

        Api::<ClusterProfile>::namespaced(inv.client.clone(), &ns)
            .patch(
                "p0",
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"env": "staging"}}})),
            )
            .await
            .unwrap();
        inv.rewrite(&tf, &body("b", true, 5));
        let (ok, out) = run(&tf, PLAN_OUT);
        assert!(ok, "{}: {out}", cli.name);
        let s = summary(&out);
        assert!(
            s.contains("0 to register, 3 to update, 0 to deregister, 0 skipped, 0 unchanged")
                && s.contains(&format!(
                    "To update: {ns}/p0 (labels, annotations, paused, consecutive_failure_threshold), {ns}/p1 \
                     (annotations, paused, consecutive_failure_threshold), {ns}/p2 (annotations, paused, \
                     consecutive_failure_threshold)."
                )),
            "{}: {s}",
            cli.name
        );
        assert!(
            shows(&out, "\"env\"", "\"prod\"", "\"staging\""),
            "{}: {out}",
            cli.name
        );
        assert!(
            shows(&out, "\"team\"", "\"a\"", "\"b\""),
            "{}: {out}",
            cli.name
        );
        assert!(
            shows(&out, "paused", "false", "true"),
            "{}: {out}",
            cli.name
        );
        assert!(
            shows(&out, "consecutive_failure_threshold", "3", "5"),
            "{}: {out}",
            cli.name
        );
        let (before, after) = clusters_change(&tf);
        let at = |v: &Json, p: &str, f: &str| v[format!("{ns}/{p}")][f].clone();
        assert_eq!(at(&before, "p0", "labels")["env"], "prod");
        assert_eq!(at(&after, "p0", "labels")["env"], "staging");
        assert_eq!(at(&after, "p1", "labels")["env"], "prod");
        for p in ["p0", "p1", "p2"] {
            assert_eq!(at(&before, p, "annotations")["team"], "a");
            assert_eq!(at(&after, p, "annotations")["team"], "b");
            assert_eq!(
                (at(&before, p, "paused"), at(&after, p, "paused")),
                (json!(false), json!(true))
            );
            let threshold = "consecutive_failure_threshold";
            assert_eq!(
                (at(&before, p, threshold), at(&after, p, threshold)),
                (json!(3), json!(5))
            );
        }
        tf.run_ok(&["apply", "-input=false", "-no-color", "tfplan"]);
        let p1 = inv.sc(&ns, "p1").await.unwrap();
        assert_eq!(p1.spec.paused, Some(true));
        let p0 = inv.sc(&ns, "p0").await.unwrap();
        assert_eq!(support::inventory::labels_of(&p0)["env"], "staging");
        assert_eq!(tf.plan(), 0, "{}: the plan after apply is empty", cli.name);
        tf.destroy();
    }
}

/// Removes the readable fields from every `clusters` entry of the local state, as a state written by an earlier
/// version holds it.
fn forget_the_readable_fields(tf: &Tf) {
    let path = tf.dir().join("terraform.tfstate");
    let mut state: Json = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let clusters = &mut state["resources"][0]["instances"][0]["attributes"]["clusters"];
    let entries = clusters.as_object_mut().expect("clusters in the state");
    for e in entries.values_mut() {
        let e = e.as_object_mut().unwrap();
        for f in [
            "annotations",
            "paused",
            "consecutive_failure_threshold",
            "active_window",
            "data",
        ] {
            assert!(e.remove(f).is_some(), "{f} not in the state: {e:?}");
        }
    }
    std::fs::write(&path, serde_json::to_vec_pretty(&state).unwrap()).unwrap();
}

/// The case: 60 clusters relabelled by one edit (`extra_labels`). Without `max_updates` the plan fails,
/// naming the count, the default limit (15: a quarter of 60) and how to raise it, and nothing is written; with
/// `max_updates = 60` the plan shows the label change of every cluster per key and counts 60 updates, and the
/// apply writes them. With every CLI.
#[tokio::test(flavor = "multi_thread")]
async fn a_sixty_cluster_relabel_is_shown_per_cluster_and_guarded() {
    const N: usize = 60;
    let inv = Inv::new().await;
    for cli in Cli::all() {
        let ns = unique_namespace(&inv.client, "relabel").await;
        inv.numbered_profiles(&ns, 0..N).await;
        let body = |tier: &str, extra: &str| {
            bridge(
                &ns,
                &[&ns],
                &format!("  extra_labels = {{ tier = \"{tier}\" }}\n{extra}"),
            )
        };
        let tf = inv.tf(&cli, &body("gold", ""));
        apply_ok(&tf);

        inv.rewrite(&tf, &body("silver", ""));
        let (ok, out) = run(&tf, PLAN_OUT);
        assert!(!ok, "{}: the relabel was not stopped:\n{out}", cli.name);
        let e = flat(one_diagnostic(&out, "Error", "update the SveltosClusters"));
        assert!(
            e.contains(&format!(
                "update the SveltosClusters of {N} of {N} clusters, more than the default limit of 15"
            )) && e.contains(&format!("set max_updates to at least {N} for this apply"))
                && e.contains(&format!("{ns}/c000 (labels)"))
                && e.contains("Nothing was written"),
            "{}: {e}",
            cli.name
        );
        let (ok, out) = run(
            &tf,
            &["apply", "-input=false", "-no-color", "-auto-approve"],
        );
        assert!(!ok, "{}: the relabel was applied:\n{out}", cli.name);
        let c000 = inv.sc(&ns, "c000").await.unwrap();
        assert_eq!(support::inventory::labels_of(&c000)["tier"], "gold");

        inv.rewrite(&tf, &body("silver", &format!("  max_updates = {N}")));
        let (ok, out) = run(&tf, PLAN_OUT);
        assert!(ok, "{}: {out}", cli.name);
        assert!(
            summary(&out).contains(&format!("0 to register, {N} to update, 0 to deregister")),
            "{}: {out}",
            cli.name
        );
        // The resource's change (Terraform 1.0.3 shows the `clusters` output's after it).
        let resource = out.split("\nPlan: ").next().unwrap_or_default();
        let per_key = resource
            .lines()
            .filter(|l| {
                l.trim().starts_with("~ \"tier\"") && l.trim().ends_with("= \"gold\" -> \"silver\"")
            })
            .count();
        // One per cluster, and one for `extra_labels` itself.
        assert_eq!(
            per_key,
            N + 1,
            "{}: one label line per cluster:\n{out}",
            cli.name
        );
        let (before, after) = clusters_change(&tf);
        for i in 0..N {
            let key = format!("{ns}/c{i:03}");
            assert_eq!(before[&key]["labels"]["tier"], "gold", "{key}");
            assert_eq!(after[&key]["labels"]["tier"], "silver", "{key}");
        }
        tf.run_ok(&["apply", "-input=false", "-no-color", "tfplan"]);
        let c059 = inv.sc(&ns, "c059").await.unwrap();
        assert_eq!(support::inventory::labels_of(&c059)["tier"], "silver");
        assert_eq!(tf.plan(), 0, "{}", cli.name);
        tf.destroy();
        assert!(inv.sc(&ns, "c000").await.is_none());
    }
}

/// A refresh asks for what the bridge owns in one page where it fits (`k8s::io::ReadBudget::first_page`): the API
/// server answers a LIST's first page from its cache and each page after it about four times slower per item, so
/// with 600 clusters (1,200 objects, more than a page of 500) the refresh lists the bridge's SveltosClusters and its
/// Secrets' metadata in one request each, asking for as many objects as its ledger records, and the plan shows no
/// change. The SveltosClusters and the Secrets are listed as soon as Terraform hands the state over
/// (`UpgradeResourceState`), before the refresh reads the claim; the refresh then sorts them with the ledger. Watched
/// through a proxy that records what the provider asks, in the order it asks (`support::fault_proxy`).
#[tokio::test(flavor = "multi_thread")]
async fn a_refresh_reads_what_the_bridge_owns_in_one_page() {
    use support::fault_proxy::FaultProxy;
    const N: usize = 600;
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "onepage").await;
    inv.numbered_profiles(&ns, 0..N).await;
    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], ""));
    apply_ok(&tf);

    let proxy = FaultProxy::start(inv.client.clone()).await;
    tf.write_main(&fixtures::main_with_host(
        &proxy.url(),
        &bridge(&ns, &[&ns], ""),
    ));
    assert_eq!(tf.plan(), 0, "the plan through the proxy shows a change");
    let answers = proxy.answers();
    let owned_lists = |resource: &str| -> Vec<&String> {
        answers
            .iter()
            .filter(|a| {
                a.starts_with("GET ")
                    && a.contains(&format!("/namespaces/{ns}/{resource}?"))
                    && a.contains("labelSelector=sveltos.clusterinventory.io%2Fbridge")
            })
            .collect()
    };
    for resource in ["sveltosclusters", "secrets"] {
        let lists = owned_lists(resource);
        assert_eq!(
            lists.len(),
            1,
            "{resource}: one LIST of what the bridge owns, in one page: {lists:#?}"
        );
        assert!(
            lists[0].contains(&format!("limit={}", 2 * N + 1)) && !lists[0].contains("continue="),
            "{resource}: {}",
            lists[0]
        );
    }
    // In the order asked: the SveltosClusters and the Secrets before anything the refresh reads (the claim first).
    let asked = proxy.asked();
    let first = |what: &dyn Fn(&String) -> bool| asked.iter().position(what);
    let clusters = first(&|a| a.contains("/sveltosclusters?")).expect("listed");
    let claim = first(&|a| a.contains("/configmaps/sveltos-bridge-")).expect("claim read");
    let secrets =
        first(&|a| a.contains("/secrets?") && a.contains("sveltos.clusterinventory.io%2Fbridge"))
            .expect("secrets listed");
    assert!(
        clusters < claim && secrets < claim,
        "asked: {:#?}",
        &asked[..asked.len().min(12)]
    );
}

/// A refresh and a plan of clusters the state already holds answer `clusters` with the bytes the CLI sent (the
/// plugin layer's debug log says so for each RPC), with every CLI: its bytes are the ones the provider sent for
/// those clusters at the apply. A state whose `clusters` was edited by hand is not answered as received: the
/// refresh answers what exists, and `plan -refresh-only` shows the edit undone.
#[tokio::test(flavor = "multi_thread")]
async fn unchanged_clusters_are_answered_with_the_bytes_received() {
    let inv = Inv::new().await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for cli in Cli::all() {
        let ns = unique_namespace(&inv.client, "as-received").await;
        for p in ["p0", "p1"] {
            inv.profile_with_secret(&ns, p, &[("env", "prod")], Json::Null, &kc)
                .await;
        }
        let mut tf = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
        apply_ok(&tf);
        tf.env("TF_LOG_PROVIDER", "DEBUG");
        // The provider's answers of `clusters` in a run of `args`: (RPC, line) of each.
        let answers = |tf: &mut Tf, label: &str, args: &[&str]| -> (String, Vec<String>) {
            let log = tf.dir().join(format!("{label}.log"));
            tf.env("TF_LOG_PATH", &log);
            let (ok, out) = run(tf, args);
            assert!(ok, "{} {label} failed:\n{out}", cli.name);
            let text = std::fs::read_to_string(&log).expect("TF_LOG_PATH written");
            let lines = text
                .lines()
                .filter(|l| l.contains("answered attributes as bytes"))
                .map(String::from)
                .collect();
            (out, lines)
        };
        let answered = |lines: &[String], rpc: &str, how: &str| {
            lines.iter().any(|l| {
                l.contains(&format!("tf_rpc={rpc}")) && l.contains(&format!("{how}=clusters"))
            })
        };
        let plan = ["plan", "-input=false", "-no-color"];
        let (out, lines) = answers(&mut tf, "unchanged", &plan);
        assert!(out.contains("No changes."), "{}:\n{out}", cli.name);
        for rpc in ["ReadResource", "PlanResourceChange"] {
            assert!(
                answered(&lines, rpc, "as_received"),
                "{}: {rpc} answers the clusters it received: {lines:#?}",
                cli.name
            );
        }

        // The state's record of p0 edited by hand, its private state (the record of the bytes) kept.
        let path = tf.dir().join("terraform.tfstate");
        let mut state: Json = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let clusters = &mut state["resources"][0]["instances"][0]["attributes"]["clusters"];
        let p0 = &mut clusters[format!("{ns}/p0")];
        let recorded = p0["config_sha256"].as_str().expect("recorded").to_string();
        p0["config_sha256"] = json!("0".repeat(64));
        std::fs::write(&path, serde_json::to_vec_pretty(&state).unwrap()).unwrap();
        let refresh_only = ["plan", "-refresh-only", "-input=false", "-no-color"];
        let (out, lines) = answers(&mut tf, "edited", &refresh_only);
        assert!(
            answered(&lines, "ReadResource", "encoded")
                && !answered(&lines, "ReadResource", "as_received"),
            "{}: the edited clusters are answered from what exists: {lines:#?}",
            cli.name
        );
        assert!(
            out.contains("changed outside of") && out.contains(&recorded),
            "{}: the refresh undoes the edit:\n{out}",
            cli.name
        );
    }
}
