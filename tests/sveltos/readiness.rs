//! `wait_for_ready` with the real sveltoscluster-manager: apply returns once the manager reports the clusters it
//! registered or changed Ready; a cluster the manager cannot reach (its kubeconfig points at a closed loopback
//! port) is a warning naming it with the manager's failure once `ready_timeout` has passed, an error with
//! `strict`, and every other cluster is applied either way.

use serde_json::Value as Json;
use support::inventory::{Inv, apply_ok, bridge, flat, one_diagnostic};
use support::sveltos::{Sveltos, ready};
use support::{Cli, unique_namespace};

use crate::unreachable;

/// The bridge's arguments for this test: the wait, and `extra` besides.
fn waiting(extra: &str) -> String {
    format!("  wait_for_ready = true\n  ready_timeout  = \"20s\"\n{extra}")
}

/// One reachable and one unreachable cluster: apply waits for the first (Ready when apply returns, read once, no
/// polling), and names the second in a warning with the manager's failure; with `strict` the same is an error,
/// and the reachable cluster is applied all the same (its new label written, an empty plan after).
#[tokio::test(flavor = "multi_thread")]
async fn apply_waits_for_ready_and_names_the_cluster_that_is_not() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let ns = unique_namespace(&inv.client, "ready").await;
    let member = sveltos.member_kubeconfig();
    inv.profile_with_secret(&ns, "up", &[], Json::Null, &member)
        .await;
    inv.profile_with_secret(&ns, "down", &[], Json::Null, &unreachable(&member))
        .await;
    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], &waiting("")));
    let out = apply_ok(&tf);
    assert!(
        ready(&inv.client, &ns, "up").await,
        "apply returned before the manager reported {ns}/up Ready:\n{out}\n{}",
        sveltos.logs()
    );
    let warning = flat(one_diagnostic(&out, "Warning", "is not Ready"));
    // The manager's failure as it reported it: the closed port, or (on a loaded machine, where the manager's
    // cache had not yet seen the Secret the bridge wrote just before the SveltosCluster) the Secret, until the
    // manager checks the cluster again.
    let secret_not_yet_seen = "Secret \"down-sveltos-kubeconfig\" not found";
    assert!(
        warning.contains(&format!("SveltosCluster {ns}/down is not Ready"))
            && warning.contains("within 20s")
            && (warning.contains("connection refused") || warning.contains(secret_not_yet_seen)),
        "{warning}"
    );
    assert!(!ready(&inv.client, &ns, "down").await);

    // Both written again (a new label): the unreachable one is an error with strict, the other applied.
    inv.rewrite(
        &tf,
        &bridge(
            &ns,
            &[&ns],
            &waiting("  strict = true\n  extra_labels = { round = \"2\" }"),
        ),
    );
    let failed = tf.run_err(&["apply", "-input=false", "-no-color", "-auto-approve"]);
    let error = flat(one_diagnostic(&failed, "Error", "is not Ready"));
    assert!(
        error.contains(&format!("SveltosCluster {ns}/down is not Ready"))
            && error.contains("strict = true makes this an error"),
        "{error}"
    );
    assert!(
        !failed.contains(&format!("{ns}/up is not Ready")),
        "{failed}"
    );
    let up = inv.sc(&ns, "up").await.expect("SveltosCluster up");
    assert_eq!(
        up.metadata
            .labels
            .unwrap_or_default()
            .get("round")
            .map(String::as_str),
        Some("2")
    );
    assert_eq!(tf.plan(), 0, "the state records what was written");
}
