//! Issue 13 end to end: one bad profile, a health blip or a typo never deregisters the fleet. Each test runs the
//! real `tofu` (and Terraform 1.0.3 where cheap) against the shared control plane and checks, object by object,
//! what was written, kept and deleted.

use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};
use support::fault_proxy::FaultProxy;
use support::inventory::{
    Inv, Plugin, alias_bomb, apply_ok, bridge, diagnostics, entry, exec_status, flat,
    health_status, labels_of, one_diagnostic, owned_lists, plan_clusters, run, state_clusters,
};
use support::{Cli, Tf, fixtures, unique_namespace};
use tfsveltos::api::{SveltosCluster, keys};

const APPLY: &[&str] = &["apply", "-input=false", "-no-color", "-auto-approve"];
const PLAN: &[&str] = &["plan", "-input=false", "-no-color"];

/// Only a guard against a run that hangs: no test here judges how long anything took.
const HANG: Duration = Duration::from_secs(300);

/// `a` (two candidate Secrets, bridged before the second appeared), `b` (name taken by a foreign
/// SveltosCluster), `c` (no credentials) and 20 good profiles: with `strict = true` the plan fails and nothing
/// is written; without, one apply registers the 20, leaves `a`'s objects untouched, writes nothing for `b` and
/// `c`, and prints one diagnostic per cause.
#[tokio::test(flavor = "multi_thread")]
async fn one_bad_profile_never_blocks_the_fleet() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "fleet").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    inv.profile_with_secret(&ns, "a", &[], Json::Null, &kc)
        .await;
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
    apply_ok(&tf);
    let a_versions = async || {
        (
            inv.sc_version(&ns, "a").await,
            inv.secret_version(&ns, "a-sveltos-kubeconfig").await,
        )
    };
    let a_before = a_versions().await;
    assert!(a_before.0.is_some() && a_before.1.is_some());

    inv.secret(
        &ns,
        "a-second",
        &[(keys::CLUSTER_PROFILE_LABEL, "a")],
        &[("Config", &fixtures::unreachable_kubeconfig("other"))],
    )
    .await;
    inv.profile_with_secret(&ns, "b", &[], Json::Null, &kc)
        .await;
    inv.foreign_sveltos_cluster(&ns, "b", &[("owner", "someone")])
        .await;
    let b_before = inv.sc_version(&ns, "b").await;
    inv.profile(&ns, "c", &[], Json::Null).await;
    let good: Vec<String> = (0..20).map(|i| format!("h{i:02}")).collect();
    for name in &good {
        inv.profile_with_secret(&ns, name, &[], Json::Null, &kc)
            .await;
    }

    // strict: the plan fails and nothing is written.
    inv.rewrite(&tf, &bridge(&ns, &[&ns], "  strict = true"));
    let (ok, out) = run(&tf, APPLY);
    assert!(!ok, "strict apply succeeded:\n{out}");
    assert!(
        out.contains("two or more candidate") && out.contains(&format!("{ns}/a-second")),
        "{out}"
    );
    for name in &good {
        assert!(inv.sc(&ns, name).await.is_none(), "strict wrote {name}");
    }
    assert_eq!(a_versions().await, a_before);

    // Default: per-cluster isolation.
    inv.rewrite(&tf, &bridge(&ns, &[&ns], ""));
    let out = apply_ok(&tf);
    for name in &good {
        assert_eq!(
            inv.bridged_kubeconfig(&ns, name).await,
            Some(fixtures::written(&kc)),
            "{name}"
        );
        assert!(inv.sc(&ns, name).await.is_some(), "{name}");
    }
    assert_eq!(a_versions().await, a_before, "a's objects were rewritten");
    assert_eq!(
        inv.sc_version(&ns, "b").await,
        b_before,
        "the foreign SveltosCluster b was written"
    );
    assert!(inv.get_secret(&ns, "b-sveltos-kubeconfig").await.is_none());
    assert!(inv.sc(&ns, "c").await.is_none());
    assert!(inv.get_secret(&ns, "c-sveltos-kubeconfig").await.is_none());
    let ambiguous = one_diagnostic(&out, "Warning", "two or more candidate kubeconfig Secrets");
    let a_entry = entry(ambiguous, &format!("{ns}/a"));
    assert!(
        a_entry.contains("kept as it is")
            && a_entry.contains(&format!("{ns}/a-src"))
            && a_entry.contains(&format!("{ns}/a-second")),
        "both Secrets named:\n{ambiguous}"
    );
    let collision = one_diagnostic(&out, "Warning", "has the name it would write");
    assert!(
        entry(collision, &format!("{ns}/b")).contains(&format!("SveltosCluster {ns}/b")),
        "{collision}"
    );
    let missing = one_diagnostic(&out, "Warning", "no usable credentials");
    assert!(
        entry(missing, &format!("{ns}/c")).contains("not registered"),
        "{missing}"
    );
    let state = state_clusters(&tf);
    assert_eq!(state.len(), 21, "a kept plus the 20: {:?}", state.keys());
    assert!(state.contains_key(&format!("{ns}/a")));
    tf.destroy();
}

/// `require_healthy` with a bridged profile turning unhealthy, under each `unhealthy` policy.
async fn health_flip(policy: &str) {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, &format!("health-{policy}")).await;
    let kc = fixtures::unreachable_kubeconfig("t");
    inv.profile_with_secret(&ns, "p", &[], health_status(true), &kc)
        .await;
    inv.profile_with_secret(&ns, "steady", &[], health_status(true), &kc)
        .await;
    let cli = Cli::tofu();
    let body = format!("  require_healthy = true\n  unhealthy = \"{policy}\"");
    let tf = inv.tf(&cli, &bridge(&ns, &[&ns], &body));
    apply_ok(&tf);
    assert!(inv.sc(&ns, "p").await.is_some());
    let before = (
        inv.sc_version(&ns, "p").await,
        inv.secret_version(&ns, "p-sveltos-kubeconfig").await,
    );
    inv.set_healthy(&ns, "p", false).await;
    // A new profile that is not healthy is not registered, whatever the policy.
    inv.profile_with_secret(&ns, "newcomer", &[], health_status(false), &kc)
        .await;
    let out = apply_ok(&tf);
    assert!(inv.sc(&ns, "newcomer").await.is_none());
    assert!(inv.sc(&ns, "steady").await.is_some());
    match policy {
        "keep" => {
            let now = (
                inv.sc_version(&ns, "p").await,
                inv.secret_version(&ns, "p-sveltos-kubeconfig").await,
            );
            assert_eq!(now, before, "kept exactly as it was");
            let w = one_diagnostic(&out, "Warning", "is not healthy");
            assert!(entry(w, &format!("{ns}/p")).contains("kept"), "{w}");
        }
        "pause" => {
            let sc = inv.sc(&ns, "p").await.expect("still registered");
            assert_eq!(sc.spec.paused, Some(true), "paused while unhealthy");
            assert!(inv.bridged_kubeconfig(&ns, "p").await.is_some());
            let w = one_diagnostic(&out, "Warning", "is not healthy");
            assert!(entry(w, &format!("{ns}/p")).contains("paused"), "{w}");
            inv.set_healthy(&ns, "p", true).await;
            apply_ok(&tf);
            let sc = inv.sc(&ns, "p").await.unwrap();
            assert_ne!(sc.spec.paused, Some(true), "unpaused once healthy again");
        }
        "remove" => {
            assert!(inv.sc(&ns, "p").await.is_none(), "deregistered");
            assert!(inv.get_secret(&ns, "p-sveltos-kubeconfig").await.is_none());
            let w = one_diagnostic(&out, "Warning", "deregisters 1 cluster");
            assert!(w.contains(&format!("{ns}/p")), "{w}");
        }
        other => panic!("unknown policy {other}"),
    }
    tf.destroy();
}

#[tokio::test(flavor = "multi_thread")]
async fn unhealthy_keep_leaves_the_cluster_registered() {
    health_flip("keep").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unhealthy_pause_pauses_until_healthy_again() {
    health_flip("pause").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unhealthy_remove_deregisters() {
    health_flip("remove").await;
}

/// A selector change that drops 3 of 6 clusters: `max_removals = 2` fails the plan naming 3 and the attribute,
/// and nothing is deleted; `max_removals = 3` removes them with a warning listing them.
#[tokio::test(flavor = "multi_thread")]
async fn max_removals_guards_against_a_typo() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "guard").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    let (a, b) = (["a1", "a2", "a3"], ["b1", "b2", "b3"]);
    for n in a {
        inv.profile_with_secret(&ns, n, &[("grp", "a")], Json::Null, &kc)
            .await;
    }
    for n in b {
        inv.profile_with_secret(&ns, n, &[("grp", "b")], Json::Null, &kc)
            .await;
    }
    let cli = Cli::tofu();
    let body = |selector: &str, max: u32| {
        bridge(
            &ns,
            &[&ns],
            &format!("  label_selector = \"{selector}\"\n  max_removals = {max}"),
        )
    };
    let tf = inv.tf(&cli, &body("grp in (a,b)", 2));
    apply_ok(&tf);
    for n in a.iter().chain(&b) {
        assert!(inv.sc(&ns, n).await.is_some(), "{n}");
    }
    inv.rewrite(&tf, &body("grp=a", 2));
    let (ok, out) = run(&tf, PLAN);
    assert!(!ok, "plan succeeded:\n{out}");
    let e = one_diagnostic(&out, "Error", "max_removals");
    assert!(flat(e).contains("deregister 3 clusters"), "{e}");
    for n in b {
        assert!(e.contains(&format!("{ns}/{n}")), "{n} not named: {e}");
    }
    let (ok, out) = run(&tf, APPLY);
    assert!(!ok, "apply succeeded:\n{out}");
    for n in a.iter().chain(&b) {
        assert!(inv.sc(&ns, n).await.is_some(), "{n} deleted");
        assert!(
            inv.get_secret(&ns, &format!("{n}-sveltos-kubeconfig"))
                .await
                .is_some(),
            "{n}'s Secret deleted"
        );
    }
    inv.rewrite(&tf, &body("grp=a", 3));
    let out = apply_ok(&tf);
    let w = one_diagnostic(&out, "Warning", "deregisters 3 cluster");
    for n in b {
        assert!(w.contains(&format!("{ns}/{n}")), "{n} not listed: {w}");
        assert!(inv.sc(&ns, n).await.is_none(), "{n}");
        assert!(
            inv.get_secret(&ns, &format!("{n}-sveltos-kubeconfig"))
                .await
                .is_none()
        );
    }
    for n in a {
        assert!(inv.sc(&ns, n).await.is_some(), "{n}");
    }
    tf.destroy();
}

/// Registration and deregistration in Sveltos' order, watched through a proxy that records what the provider asks
/// (`support::fault_proxy`): the first apply writes each Secret before its SveltosCluster. With a finalizer on the SveltosCluster, the provider deletes it and reads it back
/// until it is gone: once it has read it back twice (still terminating), the test removes the finalizer; the
/// Secret outlives the SveltosCluster (both polled) and its delete is sent only after the finalizer went. With a
/// finalizer that stays and `deregistration_timeout = "5s"`, apply reads the SveltosCluster back while it waits, then
/// warns naming the cluster and the timeout and keeps the Secret; the next apply finishes once the finalizer is
/// gone.
#[tokio::test(flavor = "multi_thread")]
async fn secret_is_deleted_only_after_the_sveltos_cluster_is_gone() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "fin").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for n in ["p", "q"] {
        inv.profile_with_secret(&ns, n, &[], Json::Null, &kc).await;
    }
    let proxy = FaultProxy::start(inv.client.clone()).await;
    let tf = Tf::new(&Cli::tofu());
    let body = |extra: &str| fixtures::main_with_host(&proxy.url(), &bridge(&ns, &[&ns], extra));
    tf.write_main(&body("  deregistration_timeout = \"2m\""));
    apply_ok(&tf);
    // Registration in the same order the other way round: each Secret is written (answered) before its
    // SveltosCluster is, so Sveltos never sees a SveltosCluster whose Secret is missing.
    let answers = proxy.answers();
    for n in ["p", "q"] {
        let (sc_path, secret_path) = object_paths(&ns, n);
        let first = |path: &str| answers.iter().position(|a| answered(a, "PATCH", path));
        let (secret, sc) = (first(&secret_path), first(&sc_path));
        assert!(
            secret.is_some() && sc.is_some() && secret < sc,
            "{n}: the SveltosCluster was written before its Secret: {answers:#?}"
        );
    }
    let hold = json!({"finalizers": ["e2e.test/hold"]});
    finalizer_removed_while_waited_for(&inv, &proxy, &tf, &ns, &hold).await;
    tf.write_main(&body("  deregistration_timeout = \"5s\""));
    finalizer_that_stays(&inv, &proxy, &tf, &ns, &hold).await;
}

/// The API paths of the SveltosCluster and of the bridged Secret of profile `ns/name`.
fn object_paths(ns: &str, name: &str) -> (String, String) {
    use kube::Resource;
    (
        format!("{}/{name}", SveltosCluster::url_path(&(), Some(ns))),
        format!("/api/v1/namespaces/{ns}/secrets/{name}-sveltos-kubeconfig"),
    )
}

/// Whether the proxy's `answer` is `method` on the object at `path`.
fn answered(answer: &str, method: &str, path: &str) -> bool {
    answer
        .strip_prefix(method)
        .and_then(|r| r.strip_prefix(' '))
        .and_then(|r| r.strip_prefix(path))
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('?'))
}

/// How many times `answers` read the object at `path` back after its first delete.
fn reads_after_delete(answers: &[String], path: &str) -> usize {
    answers
        .iter()
        .skip_while(|a| !answered(a, "DELETE", path))
        .filter(|a| answered(a, "GET", path))
        .count()
}

/// Profile `p` is removed while its SveltosCluster holds a finalizer; the test removes the finalizer once the
/// provider has read the SveltosCluster back twice after deleting it (it is waiting for it).
async fn finalizer_removed_while_waited_for(
    inv: &Inv,
    proxy: &FaultProxy,
    tf: &Tf,
    ns: &str,
    hold: &Json,
) {
    let (sc_path, secret_path) = object_paths(ns, "p");
    inv.patch_sc_metadata(ns, "p", hold.clone()).await;
    inv.delete_profile(ns, "p").await;
    let mut child = tf
        .command(APPLY)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let hang_guard = Instant::now() + HANG;
    let (mut released_at, mut samples) = (None, 0u32);
    loop {
        let sc = inv.sc(ns, "p").await;
        let secret = inv.get_secret(ns, "p-sveltos-kubeconfig").await;
        samples += 1;
        match &sc {
            Some(_) => assert!(
                secret.is_some(),
                "the Secret was deleted while the SveltosCluster still existed"
            ),
            None => assert!(
                released_at.is_some(),
                "the SveltosCluster went while its finalizer held it"
            ),
        }
        if released_at.is_none() && reads_after_delete(&proxy.answers(), &sc_path) >= 2 {
            assert!(
                sc.as_ref()
                    .is_some_and(|s| s.metadata.deletion_timestamp.is_some()),
                "the SveltosCluster the provider waits for is terminating, held by the finalizer"
            );
            assert!(secret.is_some(), "the Secret is kept while it terminates");
            released_at = Some(proxy.answers().len());
            inv.patch_sc_metadata(ns, "p", json!({"finalizers": null}))
                .await;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(Instant::now() < hang_guard, "apply did not finish");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", support::inventory::text(&out));
    let answers = proxy.answers();
    let released_at = released_at.unwrap_or_else(|| {
        panic!("apply finished without reading the SveltosCluster back twice: {answers:#?}")
    });
    let secret_deleted = |a: &String| answered(a, "DELETE", &secret_path);
    assert!(
        !answers[..released_at].iter().any(secret_deleted)
            && answers[released_at..].iter().any(secret_deleted),
        "the Secret's delete was not sent after the finalizer went: {answers:#?}"
    );
    assert!(inv.sc(ns, "p").await.is_none());
    assert!(inv.get_secret(ns, "p-sveltos-kubeconfig").await.is_none());
    support::inventory::report(&format!(
        "finalizer: {samples} samples, the SveltosCluster read back {} times after its delete, the Secret \
         deleted only after the finalizer went",
        reads_after_delete(&answers, &sc_path)
    ));
}

/// Profile `q` is removed while its SveltosCluster holds a finalizer that stays: `deregistration_timeout` (5 s) bounds
/// the wait.
async fn finalizer_that_stays(inv: &Inv, proxy: &FaultProxy, tf: &Tf, ns: &str, hold: &Json) {
    let (sc_path, secret_path) = object_paths(ns, "q");
    inv.patch_sc_metadata(ns, "q", hold.clone()).await;
    inv.delete_profile(ns, "q").await;
    let from = proxy.answers().len();
    // The held cluster is that cluster's problem: the apply succeeds with a warning naming it (e2e/deregistration.rs
    // has the strict and destroy sides).
    let out = apply_ok(tf);
    let warning = one_diagnostic(&out, "Warning", &format!("SveltosCluster {ns}/q is still"));
    assert!(
        flat(warning).contains("deregistration_timeout (5s)"),
        "the warning names the timeout it waited: {warning}"
    );
    let answers = proxy.answers().split_off(from);
    assert!(
        reads_after_delete(&answers, &sc_path) >= 2,
        "the provider gave up without waiting for the SveltosCluster: {answers:#?}"
    );
    assert!(
        !answers.iter().any(|a| answered(a, "DELETE", &secret_path)),
        "the Secret's delete was sent: {answers:#?}"
    );
    assert!(
        inv.get_secret(ns, "q-sveltos-kubeconfig").await.is_some(),
        "the Secret was deleted before the SveltosCluster was gone"
    );
    inv.patch_sc_metadata(ns, "q", json!({"finalizers": null}))
        .await;
    apply_ok(tf);
    assert!(inv.sc(ns, "q").await.is_none());
    assert!(inv.get_secret(ns, "q-sveltos-kubeconfig").await.is_none());
    assert!(state_clusters(tf).is_empty());
}

/// How far beyond `refresh_before` (10 min) the plugin's credentials expire, in seconds, tried in turn: the saved
/// plan must be made before the credential enters `refresh_before`, and its apply waits until it has (as long as
/// the margin). A machine too slow to plan within one margin gets the next.
const AGING_MARGINS: [i64; 3] = [10, 30, 90];

/// A saved plan made while an exec credential was fresh applies cleanly, doing what it showed (the renewal),
/// after the credential entered `refresh_before` (still unexpired).
async fn saved_plan_survives_credential_aging(cli: Cli) {
    let inv = Inv::new().await;
    for margin in AGING_MARGINS {
        match saved_plan_across_refresh_before(&inv, &cli, margin).await {
            Ok(()) => return,
            Err(late) => println!("{}: {late}; again with a longer margin", cli.name),
        }
    }
    panic!(
        "{}: no saved plan was made before its credential entered refresh_before (margins {AGING_MARGINS:?} s)",
        cli.name
    );
}

/// One attempt of [`saved_plan_survives_credential_aging`] with credentials expiring `margin` seconds beyond
/// `refresh_before`; `Err` when the saved plan was made too late to prove anything.
async fn saved_plan_across_refresh_before(inv: &Inv, cli: &Cli, margin: i64) -> Result<(), String> {
    let ns = unique_namespace(&inv.client, "aging").await;
    let scratch = tempfile::tempdir().unwrap();
    let plugin = Plugin::write(scratch.path(), 600 + margin, &[("tok", None)]);
    inv.profile(
        &ns,
        "p",
        &[],
        exec_status("tok", "https://127.0.0.1:6443", json!([])),
    )
    .await;
    let body = |team: &str| {
        bridge(
            &ns,
            &[&ns],
            &format!(
                "  extra_labels = {{ team = \"{team}\" }}\n  credentials {{\n    exec_providers_file = \"{}\"\n    refresh_before = \"10m\"\n    \
                 exec_providers = {{ tok = {{ namespaces = [\"{ns}\"] }} }}\n  }}",
                plugin.providers_file.display()
            ),
        )
    };
    let tf = inv.tf(cli, &body("one"));
    apply_ok(&tf);
    let minted = inv.bridged_kubeconfig(&ns, "p").await.unwrap();
    let expires = state_clusters(&tf)[&format!("{ns}/p")]["credential_expires_at"]
        .as_str()
        .unwrap()
        .parse::<jiff::Timestamp>()
        .unwrap();
    inv.rewrite(&tf, &body("two"));
    let (ok, out) = run(&tf, &["plan", "-input=false", "-no-color", "-out=tfplan"]);
    assert!(ok, "{out}");
    // The credential enters refresh_before at `window`, read from what the provider recorded.
    let window = expires - jiff::SignedDuration::from_secs(600);
    let planned = jiff::Timestamp::now();
    if planned >= window {
        tf.destroy();
        return Err(format!(
            "the plan was made {:#} after the credential entered refresh_before",
            planned.duration_since(window)
        ));
    }
    while jiff::Timestamp::now() <= window {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(jiff::Timestamp::now() < expires);
    let (ok, out) = run(&tf, &["apply", "-input=false", "-no-color", "tfplan"]);
    assert!(ok, "{}: the saved plan did not apply:\n{out}", cli.name);
    assert_eq!(
        labels_of(&inv.sc(&ns, "p").await.unwrap())["team"],
        "two",
        "planned change applied"
    );
    // The first plan renews credentials that expire within twice refresh_before, so the saved plan showed the
    // renewal ("known after apply"), and apply did as planned.
    assert_ne!(
        inv.bridged_kubeconfig(&ns, "p").await.unwrap(),
        minted,
        "renewed as the saved plan showed"
    );
    assert_eq!(plugin.runs().len(), 2, "{:?}", plugin.runs());
    // A fresh plan shows the renewal again (the new credential also expires within twice refresh_before).
    assert_eq!(tf.plan(), 2);
    tf.destroy();
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn saved_plan_survives_credential_aging_tofu() {
    saved_plan_survives_credential_aging(Cli::tofu()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn saved_plan_survives_credential_aging_terraform_1_0_3() {
    saved_plan_survives_credential_aging(Cli::terraform_1_0_3()).await;
}

/// Destroy does not depend on the inventory: with an ambiguous profile, an alias-bomb Secret and an impostor
/// present, `destroy` removes exactly what the bridge owns.
#[tokio::test(flavor = "multi_thread")]
async fn destroy_with_a_hostile_inventory_removes_exactly_what_the_bridge_owns() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "hostile").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for n in ["c1", "c2"] {
        inv.profile_with_secret(&ns, n, &[], Json::Null, &kc).await;
    }
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
    apply_ok(&tf);
    // The inventory turns hostile.
    inv.secret(
        &ns,
        "c1-second",
        &[(keys::CLUSTER_PROFILE_LABEL, "c1")],
        &[("Config", &kc)],
    )
    .await;
    let bomb = alias_bomb();
    inv.secret(
        &ns,
        "c2-src",
        &[(keys::CLUSTER_PROFILE_LABEL, "c2")],
        &[("Config", &bomb)],
    )
    .await;
    inv.foreign_sveltos_cluster(&ns, "impostor", &[(keys::BRIDGE_LABEL, ns.as_str())])
        .await;
    let impostor = inv.sc_version(&ns, "impostor").await;
    let (ok, out) = run(
        &tf,
        &["destroy", "-input=false", "-no-color", "-auto-approve"],
    );
    assert!(ok, "destroy failed:\n{out}");
    for n in ["c1", "c2"] {
        assert!(inv.sc(&ns, n).await.is_none(), "{n}");
        assert!(
            inv.get_secret(&ns, &format!("{n}-sveltos-kubeconfig"))
                .await
                .is_none(),
            "{n}"
        );
    }
    assert_eq!(inv.sc_version(&ns, "impostor").await, impostor);
    for s in ["c1-src", "c1-second", "c2-src"] {
        assert!(inv.get_secret(&ns, s).await.is_some(), "source {s} deleted");
    }
    assert!(diagnostics(&out, "Error", "").is_empty(), "{out}");
}

/// Issue 15: a plan lists what the bridge owns once, in its refresh (from a listing started when Terraform hands
/// the state over), and plans from that reading (as Terraform plans from the refreshed state); a plan without
/// refresh lists it itself (the listing started ahead then serves nothing); and drift between two plans is still
/// seen, since every refresh reads afresh.
#[tokio::test(flavor = "multi_thread")]
async fn a_plan_lists_owned_objects_once() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "onelist").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for p in ["p1", "p2"] {
        inv.profile_with_secret(&ns, p, &[], Json::Null, &kc).await;
    }
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
    apply_ok(&tf);
    let lists = || owned_lists(&ns);
    let code = |args: &[&str]| tf.run(args).status.code();
    let plan = [PLAN, &["-detailed-exitcode"]].concat();

    let before = lists();
    assert_eq!(code(&plan), Some(0), "no change after apply");
    assert_eq!(
        lists() - before,
        1,
        "the refresh lists the owned Secrets, the plan reuses that reading"
    );

    // Without a refresh the plan lists them itself; the listing started ahead when Terraform handed the state over
    // serves no refresh and is cancelled by the plan, once it was sent or before (ADR 0003).
    let before = lists();
    let no_refresh = [plan.as_slice(), &["-refresh=false"]].concat();
    assert_eq!(code(&no_refresh), Some(0));
    let listed = lists() - before;
    assert!(
        matches!(listed, 1 | 2),
        "without a refresh, the plan lists the owned Secrets itself: {listed} LISTs"
    );

    // Someone deletes a bridged Secret: the next plan's refresh sees it and the plan puts it back.
    let secrets =
        kube::Api::<k8s_openapi::api::core::v1::Secret>::namespaced(inv.client.clone(), &ns);
    secrets
        .delete("p1-sveltos-kubeconfig", &Default::default())
        .await
        .expect("deleting the bridged Secret");
    let before = lists();
    let out = tf.run(&plan);
    assert_eq!(
        out.status.code(),
        Some(2),
        "the deleted Secret shows as a change"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("{ns}/p1")),
        "the change names p1"
    );
    assert_eq!(lists() - before, 1);
    apply_ok(&tf);
    assert!(
        inv.get_secret(&ns, "p1-sveltos-kubeconfig").await.is_some(),
        "apply restores it"
    );
    assert_eq!(code(&plan), Some(0));
}

/// Issue 15: the inventory reads a refresh starts for the plan after it are made with the configuration last
/// applied; a plan whose namespaces or `credentials` options changed since reads for itself, so it sees the
/// new namespace's profile and the Secrets the new label selects, never the ones read ahead.
#[tokio::test(flavor = "multi_thread")]
async fn a_changed_configuration_plans_from_its_own_reads() {
    let inv = Inv::new().await;
    let one = unique_namespace(&inv.client, "pre-a").await;
    let two = unique_namespace(&inv.client, "pre-b").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    inv.profile_with_secret(&one, "p1", &[], Json::Null, &kc)
        .await;
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &bridge(&one, &[&one], ""));
    apply_ok(&tf);
    inv.profile_with_secret(&two, "p2", &[], Json::Null, &kc)
        .await;

    inv.rewrite(&tf, &bridge(&one, &[&one, &two], ""));
    let (_, clusters) = plan_clusters(&tf);
    let keys: Vec<&String> = clusters.keys().collect();
    assert_eq!(
        keys,
        [&format!("{one}/p1"), &format!("{two}/p2")],
        "the added namespace is read"
    );

    // A credential label only p1's new Secret carries: the plan resolves p1 from it, and p2 has none.
    let other = fixtures::unreachable_kubeconfig("other");
    inv.secret(
        &one,
        "p1-relabelled",
        &[("relabelled-creds", "p1")],
        &[("Config", &other)],
    )
    .await;
    inv.rewrite(
        &tf,
        &bridge(
            &one,
            &[&one, &two],
            "  credentials {\n    secret_label = \"relabelled-creds\"\n  }",
        ),
    );
    let (out, clusters) = plan_clusters(&tf);
    assert!(
        clusters[&format!("{one}/p1")]["credential_source"]
            .as_str()
            .is_some_and(|s| s.contains("p1-relabelled")),
        "p1 uses the Secret the new label selects: {clusters:?}\n{out}"
    );
}

/// The plan right after the refresh of an unchanged configuration reads neither the inventory nor what the bridge
/// owns for itself: the refresh read the one and started reading the other ahead (`runtime::refresh`), as the
/// provider's debug log of the plan's reads says; a plan whose namespaces changed reads the inventory itself.
#[tokio::test(flavor = "multi_thread")]
async fn an_unchanged_configuration_plans_from_what_its_refresh_read() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "ahead").await;
    let added = unique_namespace(&inv.client, "ahead-b").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    inv.profile_with_secret(&ns, "p1", &[], Json::Null, &kc)
        .await;
    let mut tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], ""));
    apply_ok(&tf);
    tf.env("TF_LOG_PROVIDER", "DEBUG");
    let plan_reads = |tf: &mut Tf, label: &str| -> String {
        let log = tf.dir().join(format!("{label}.log"));
        tf.env("TF_LOG_PATH", &log);
        let (ok, out) = run(tf, PLAN);
        assert!(ok, "plan failed:\n{out}");
        let text = std::fs::read_to_string(&log).expect("TF_LOG_PATH written");
        let reads = text
            .lines()
            .find(|l| l.contains("read the claim, the inventory and what exists"));
        reads
            .unwrap_or_else(|| panic!("the plan's reads are not logged:\n{text}"))
            .to_string()
    };
    let line = plan_reads(&mut tf, "unchanged");
    assert!(
        line.contains("read_ahead=true") && line.contains("reused_refresh=true"),
        "the plan used what its refresh read: {line}"
    );
    inv.rewrite(&tf, &bridge(&ns, &[&ns, &added], ""));
    let line = plan_reads(&mut tf, "changed");
    assert!(
        line.contains("read_ahead=false") && line.contains("reused_refresh=true"),
        "a plan with other namespaces reads the inventory itself: {line}"
    );
}

/// `tofu destroy` refreshes and plans the whole configuration before its destroy plan, so with `strict = true` a
/// broken profile (here a credential Secret deleted) stops `destroy` with the same error as `plan`, naming the
/// cluster; `destroy -refresh=false` skips that plan and removes everything the bridge owns.
#[tokio::test(flavor = "multi_thread")]
async fn a_strict_bridge_with_a_broken_profile_is_destroyed_without_refresh() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "strict-destroy").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for n in ["s1", "s2", "s3"] {
        inv.profile_with_secret(&ns, n, &[], Json::Null, &kc).await;
    }
    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], "  strict = true"));
    apply_ok(&tf);
    inv.delete_secret(&ns, "s2-src").await;
    let destroy = ["destroy", "-input=false", "-no-color", "-auto-approve"];
    let (ok, out) = run(&tf, &destroy);
    assert!(!ok, "destroy succeeded:\n{out}");
    assert!(flat(&out).contains(&format!("{ns}/s2")), "{out}");
    assert!(
        flat(&out).contains("A destroy stopped by this error runs with -refresh=false"),
        "the error says how to destroy regardless: {out}"
    );
    for n in ["s1", "s2", "s3"] {
        assert!(
            inv.sc(&ns, n).await.is_some(),
            "{n} deleted by a failed destroy"
        );
    }
    let (ok, out) = run(&tf, &[&destroy[..], &["-refresh=false"]].concat());
    assert!(ok, "destroy -refresh=false failed:\n{out}");
    for n in ["s1", "s2", "s3"] {
        assert!(inv.sc(&ns, n).await.is_none(), "{n} left");
        assert!(
            inv.get_secret(&ns, &format!("{n}-sveltos-kubeconfig"))
                .await
                .is_none(),
            "{n}'s Secret left"
        );
    }
}

/// Problems as data: a cluster left out is in the bridge's `skipped` attribute (cause, kept), so a `check` block
/// reports it and a `postcondition` fails the run (alternatives to `fail_on_skipped` in
/// docs/guides/running-in-ci.md); a newly
/// skipped cluster makes `plan -detailed-exitcode` return 2, and the next plan after recording it is empty.
#[tokio::test(flavor = "multi_thread")]
async fn skipped_clusters_are_data_a_check_and_a_pipeline_can_fail_on() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "skipped").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for p in ["ok-1", "ok-2"] {
        inv.profile_with_secret(&ns, p, &[], Json::Null, &kc).await;
    }
    inv.profile(&ns, "no-creds", &[], Json::Null).await;
    let bridge_name = ns.clone();
    let check = "check \"every_cluster_bridged\" {\n  assert {\n    condition     = \
         length(sveltos_cluster_inventory_bridge.x.skipped) == 0\n    error_message = \"Left out: \
         ${join(\", \", keys(sveltos_cluster_inventory_bridge.x.skipped))}\"\n  }\n}\n\
         output \"skipped\" {\n  value = sveltos_cluster_inventory_bridge.x.skipped\n}\n";
    let cli = Cli::tofu();
    let tf = inv.tf(
        &cli,
        &format!("{}{check}", bridge(&bridge_name, &[&ns], "")),
    );
    let out = apply_ok(&tf);
    assert!(
        out.contains(&format!("Left out: {ns}/no-creds")),
        "the check names the skipped cluster:\n{out}"
    );
    let skipped = tf.json(&["output", "-json", "skipped"]);
    let entry = &skipped[format!("{ns}/no-creds")];
    assert_eq!(entry["kept"], Json::Bool(false), "{skipped}");
    assert!(
        entry["cause"].as_str().is_some_and(|c| !c.is_empty()),
        "{skipped}"
    );
    assert_eq!(skipped.as_object().map(|o| o.len()), Some(1), "{skipped}");
    assert_eq!(tf.plan(), 0, "a recorded skip is no change");

    // A bridged cluster loses its credentials: a change in plan (exit code 2), kept as it is.
    inv.delete_secret(&ns, "ok-2-src").await;
    assert_eq!(tf.plan(), 2, "a newly skipped cluster is a change");
    apply_ok(&tf);
    let skipped = tf.json(&["output", "-json", "skipped"]);
    assert_eq!(
        skipped[format!("{ns}/ok-2")]["kept"],
        Json::Bool(true),
        "{skipped}"
    );
    assert_eq!(tf.plan(), 0);

    // A postcondition turns it into a failed run for a pipeline, at plan (`skipped` is known there): a new
    // profile the same run would register is not registered.
    inv.profile_with_secret(&ns, "ok-3", &[], Json::Null, &kc)
        .await;
    inv.rewrite(
        &tf,
        &bridge(
            &bridge_name,
            &[&ns],
            "  lifecycle {\n    postcondition {\n      condition     = length(self.skipped) == 0\n      \
             error_message = \"clusters left out\"\n    }\n  }",
        ),
    );
    let (ok, out) = run(&tf, APPLY);
    assert!(!ok && out.contains("clusters left out"), "{out}");
    assert!(
        inv.sc(&ns, "ok-3").await.is_none(),
        "the postcondition failed after the apply registered ok-3:\n{out}"
    );
}

/// The security review's L1: a tenant's ClusterProfile with 1,500 labels (the API server bounds neither their
/// number nor their size) used to grow the state by 600 KB. It is now that cluster's problem: a warning naming it at
/// `copy_labels`, not registered, every other cluster applied, the state small.
#[tokio::test(flavor = "multi_thread")]
async fn a_profile_with_unbounded_labels_is_its_clusters_problem() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "labels").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    let many: Vec<(String, String)> = (0..1500)
        .map(|i| {
            (
                format!("{}.example.com/l{i}", "p".repeat(200)),
                "v".repeat(63),
            )
        })
        .collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    inv.profile_with_secret(&ns, "big", &many, Json::Null, &kc)
        .await;
    inv.profile_with_secret(&ns, "ok", &[("env", "prod")], Json::Null, &kc)
        .await;
    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], ""));
    let out = apply_ok(&tf);
    let warning = one_diagnostic(
        &out,
        "Warning",
        "more labels to copy than the bridge copies",
    );
    assert!(
        entry(warning, &format!("{ns}/big")).contains("1500 labels"),
        "{warning}"
    );
    assert!(inv.sc(&ns, "ok").await.is_some());
    assert!(inv.sc(&ns, "big").await.is_none());
    let state = std::fs::read(tf.dir().join("terraform.tfstate")).expect("reading the state");
    assert!(state.len() < 32 * 1024, "state of {} bytes", state.len());
    tf.destroy();
}

/// The requests a recording proxy answered, with the test's namespace written `NS` and each query elided (object
/// names kept): `GET /api/v1/namespaces/NS/secrets?…` and so on, sorted.
fn request_shapes(answers: &[String], ns: &str) -> Vec<String> {
    let mut shapes: Vec<String> = answers
        .iter()
        .map(|a| {
            let (what, query) = a.split_once('?').unwrap_or((a, ""));
            let what = what.replace(&format!("/namespaces/{ns}/"), "/namespaces/NS/");
            let kind = |q: &str| if q.is_empty() { "" } else { "?…" };
            format!("{what}{}", kind(query))
        })
        .collect();
    shapes.sort();
    shapes
}

/// `n` profiles (`c000`, ...) in a fresh namespace `<prefix>-*` and a tofu configuration of a bridge of it (named
/// after the namespace) whose provider talks to the API server through a recording proxy (not yet applied).
async fn bridged_through_a_proxy(prefix: &str, n: usize) -> (Inv, String, FaultProxy, Tf) {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, prefix).await;
    inv.numbered_profiles(&ns, 0..n).await;
    let proxy = FaultProxy::start(inv.client.clone()).await;
    let tf = Tf::new(&Cli::tofu());
    tf.write_main(&fixtures::main_with_host(
        &proxy.url(),
        &bridge(&ns, &[&ns], ""),
    ));
    (inv, ns, proxy, tf)
}

/// A no-change plan makes the same requests, LIST for LIST, with 20 clusters and with 60: the cost does not grow with
/// the number of profiles once a namespace holds more than 16 (`bodies::GET_AT_MOST`: up to that, the bodies are
/// read one by one), below one page of 500 objects per LIST (above, the paged LISTs take one request a page).
#[tokio::test(flavor = "multi_thread")]
async fn a_no_change_plan_makes_the_same_requests_for_20_and_60_clusters() {
    let (inv, ns, proxy, tf) = bridged_through_a_proxy("plan-cost", 20).await;
    let no_change_plan = |tf: &Tf| {
        apply_ok(tf);
        let from = proxy.answers().len();
        assert_eq!(tf.plan(), 0, "a plan right after apply");
        request_shapes(&proxy.answers()[from..], &ns)
    };
    let twenty = no_change_plan(&tf);
    inv.numbered_profiles(&ns, 20..60).await;
    let sixty = no_change_plan(&tf);
    assert_eq!(state_clusters(&tf).len(), 60);
    assert!(twenty.len() >= 5, "a no-change plan reads: {twenty:#?}");
    assert_eq!(
        twenty, sixty,
        "the requests of a no-change plan grew with the fleet"
    );
    tf.destroy();
}

/// The credential Secrets of more profiles than a page of 500 holds are listed in one request: their metadata LIST
/// asks for one per profile in its first page (`io::list_metadata_expecting`), which the API server answers from its
/// cache, where each page after the first would be read from etcd (docs/benchmarks.md has what that costs it).
#[tokio::test(flavor = "multi_thread")]
async fn the_credential_secrets_of_more_profiles_than_a_page_are_listed_in_one_request() {
    let (_inv, ns, proxy, tf) = bridged_through_a_proxy("cred-page", 520).await;
    assert_eq!(tf.plan(), 2, "a plan of a new bridge of 520 clusters");
    let secrets = format!("/namespaces/{ns}/secrets?");
    let listed = proxy.answers_with(&[
        &secrets,
        "labelSelector=x-k8s.io%2Fcluster-profile",
        "limit=",
    ]);
    assert_eq!(listed.len(), 1, "one metadata LIST: {listed:#?}");
    assert!(listed[0].contains("limit=521"), "{listed:#?}");
}

/// The bridge's own Secrets in a plan: listed as metadata, and the body of one read only when it was written since
/// the bridge wrote it (its `resourceVersion` is no longer the one the bridge's write was answered with). Nothing
/// is read twice in a no-change plan; kubeconfigs a tenant swapped are read (20 of 60 in one namespace: one LIST of
/// it, the 40 known without their bodies taking no room a LIST may carry), show as changes and are written back,
/// and the plan after that reads no body again.
#[tokio::test(flavor = "multi_thread")]
async fn a_plan_reads_the_body_of_only_the_bridged_secrets_written_since() {
    let (inv, ns, proxy, tf) = bridged_through_a_proxy("bodies", 60).await;
    apply_ok(&tf);
    // The reads of the bridge's Secrets (selected by its label) since answer `from`.
    let secret_reads = |from: usize| -> Vec<String> {
        let label = format!("bridge%3D{ns}");
        proxy.answers()[from..]
            .iter()
            .filter(|a| a.contains("/secrets?") && a.contains(&label))
            .cloned()
            .collect()
    };
    let from = proxy.answers().len();
    assert_eq!(tf.plan(), 0, "a plan right after apply");
    let reads = secret_reads(from);
    assert_eq!(reads.len(), 1, "one metadata LIST, no body: {reads:#?}");

    // A tenant swaps the kubeconfigs of c000..c019.
    let secrets =
        kube::Api::<k8s_openapi::api::core::v1::Secret>::namespaced(inv.client.clone(), &ns);
    let name = |i: usize| format!("c{i:03}-sveltos-kubeconfig");
    let original = secrets.get(&name(0)).await.expect("reading c000's Secret");
    let swapped = json!({ "data": { "kubeconfig": "c3dhcHBlZA==" } });
    for i in 0..20 {
        secrets
            .patch(
                &name(i),
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(&swapped),
            )
            .await
            .expect("swapping a kubeconfig");
    }
    let from = proxy.answers().len();
    assert_eq!(tf.plan(), 2, "the swapped kubeconfigs are changes");
    let reads = secret_reads(from);
    assert_eq!(
        reads.len(),
        2,
        "the metadata LIST and one LIST of the bodies: {reads:#?}"
    );
    let out = apply_ok(&tf);
    assert!(flat(&out).contains("20 to update"), "{out}");
    let written = secrets.get(&name(0)).await.expect("reading c000's Secret");
    assert_eq!(
        written.data, original.data,
        "the kubeconfig is written back"
    );
    let from = proxy.answers().len();
    assert_eq!(tf.plan(), 0, "a plan after writing them back");
    let reads = secret_reads(from);
    assert_eq!(
        reads.len(),
        1,
        "no body read after the write-back: {reads:#?}"
    );
    tf.destroy();
}
