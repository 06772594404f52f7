//! Deregistration when someone holds a bridged SveltosCluster (the security review's M3): a tenant that may patch
//! its own SveltosCluster adds a finalizer and deletes its ClusterProfile. That cluster's removal cannot finish,
//! and it is that cluster's problem only: the apply registers the rest of the fleet and succeeds with a warning
//! naming the held cluster (an error with `strict`), the next apply does not wait for it again, destroy removes
//! every other cluster, and once the finalizer is gone everything converges.

use serde_json::{Value as Json, json};
use support::inventory::{Inv, apply_ok, bridge, flat, one_diagnostic, run, state_clusters};
use support::{Cli, TestEnv, fixtures, unique_namespace};

const APPLY: &[&str] = &["apply", "-input=false", "-no-color", "-auto-approve"];
const HOLD: &str = "tenant.example.com/hold";

/// Gives user `tenant` (through impersonation) exactly the rights of the attack in `ns`: patch SveltosClusters,
/// delete ClusterProfiles.
fn tenant_rights(env: &TestEnv, ns: &str) -> String {
    env.tenant(
        ns,
        &[
            ("get,patch", "sveltosclusters.lib.projectsveltos.io"),
            ("delete", "clusterprofiles.multicluster.x-k8s.io"),
        ],
    )
}

/// `kubectl --as=USER ARGS` in `ns`.
fn as_tenant(env: &TestEnv, user: &str, ns: &str, args: &[&str]) {
    let mut all = vec!["--as", user, "-n", ns];
    all.extend_from_slice(args);
    env.kubectl(&all);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_held_finalizer_costs_the_rest_of_the_fleet_nothing() {
    let env = TestEnv::get();
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "held").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for name in ["t1", "a1", "a2"] {
        inv.profile_with_secret(&ns, name, &[], Json::Null, &kc)
            .await;
    }
    let cli = Cli::tofu();
    let settings = "  deregistration_timeout = \"2s\"";
    let tf = inv.tf(&cli, &bridge(&ns, &[&ns], settings));
    apply_ok(&tf);

    // The attack, with the tenant's rights only.
    let user = tenant_rights(env, &ns);
    let hold = json!({"metadata": {"finalizers": [HOLD]}}).to_string();
    as_tenant(
        env,
        &user,
        &ns,
        &["patch", "sveltoscluster", "t1", "--type=merge", "-p", &hold],
    );
    as_tenant(env, &user, &ns, &["delete", "clusterprofile", "t1"]);
    // Meanwhile the operator adds a cluster.
    inv.profile_with_secret(&ns, "b1", &[], Json::Null, &kc)
        .await;

    // strict: the held cluster is an error.
    inv.rewrite(
        &tf,
        &bridge(&ns, &[&ns], &format!("{settings}\n  strict = true")),
    );
    let (ok, out) = run(&tf, APPLY);
    assert!(!ok, "a strict apply with a held cluster succeeded:\n{out}");
    assert!(
        out.contains(&format!("SveltosCluster {ns}/t1 is still being deleted")),
        "{out}"
    );

    // Default: the apply succeeds, b1 is registered, the held cluster is a warning naming it, without a wait.
    inv.rewrite(&tf, &bridge(&ns, &[&ns], settings));
    let out = apply_ok(&tf);
    let warning = flat(one_diagnostic(
        &out,
        "Warning",
        &format!("SveltosCluster {ns}/t1 is still being deleted"),
    ));
    assert!(
        warning.contains("already being deleted when this run started")
            && warning.contains("finalizer"),
        "{warning}"
    );
    assert!(inv.sc(&ns, "b1").await.is_some(), "b1 was not registered");
    assert!(
        inv.get_secret(&ns, "t1-sveltos-kubeconfig").await.is_some(),
        "t1's Secret went before it"
    );
    let state = state_clusters(&tf);
    for name in ["a1", "a2", "b1"] {
        assert!(
            state.contains_key(&format!("{ns}/{name}")),
            "{name}: {:?}",
            state.keys()
        );
    }

    // Destroy removes every other cluster and fails naming the held one.
    let (ok, out) = run(
        &tf,
        &["destroy", "-auto-approve", "-input=false", "-no-color"],
    );
    assert!(!ok, "destroy with a held cluster succeeded:\n{out}");
    assert!(
        out.contains(&format!("SveltosCluster {ns}/t1 is still being deleted")),
        "{out}"
    );
    for name in ["a1", "a2", "b1"] {
        assert!(inv.sc(&ns, name).await.is_none(), "destroy left {name}");
        assert!(
            inv.get_secret(&ns, &format!("{name}-sveltos-kubeconfig"))
                .await
                .is_none()
        );
    }

    // The finalizer goes: the next destroy finishes.
    inv.patch_sc_metadata(&ns, "t1", json!({"finalizers": null}))
        .await;
    tf.destroy();
    assert!(inv.sc(&ns, "t1").await.is_none());
    assert!(inv.get_secret(&ns, "t1-sveltos-kubeconfig").await.is_none());
}
