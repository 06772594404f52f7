//! Deregistration is a choice, and does what it says, judged by the real addon-controller: with `deregistration =
//! "withdraw"` (the default) a removed cluster's add-ons are gone from the member cluster before the bridge deletes
//! its SveltosCluster and kubeconfig Secret, destroy included; with `"orphan"` they stay there, managed by no one;
//! add-ons that cannot be withdrawn (a Sveltos profile listing the cluster by `clusterRefs`) keep that cluster
//! registered with a warning naming it, while every other cluster is applied.

use support::inventory::{Inv, apply_ok, bridge, flat, one_diagnostic};
use support::sveltos::{Addon, Sveltos, cluster_summaries, listing};
use support::{Cli, Tf, unique_namespace};

use crate::ADDON_DEADLINE;
use crate::addons::{addon_reaches, fleet, fleet_addon};

/// A bridge over clusters `c1` and `c2` of a fresh namespace, with `extra` lines, and the add-on of a Sveltos profile
/// selecting them, once it has reached both.
async fn two_clusters_with_addon(
    sveltos: &Sveltos,
    inv: &Inv,
    prefix: &str,
    extra: &str,
) -> (String, Addon, Tf) {
    let ns = unique_namespace(&inv.client, prefix).await;
    fleet(sveltos, inv, &ns, &["c1", "c2"]).await;
    let addon = fleet_addon(inv, &ns).await;
    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], extra));
    apply_ok(&tf);
    for name in ["c1", "c2"] {
        addon_reaches(sveltos, inv, &addon, &ns, name).await;
    }
    (ns, addon, tf)
}

/// Whether the bridged objects of cluster `ns/name` (SveltosCluster, kubeconfig Secret) exist.
async fn bridged(inv: &Inv, ns: &str, name: &str) -> (bool, bool) {
    (
        inv.sc(ns, name).await.is_some(),
        inv.get_secret(ns, &format!("{name}-sveltos-kubeconfig"))
            .await
            .is_some(),
    )
}

/// Default `withdraw`: when apply deregisters `c2` its add-on is already gone from the member cluster (the bridge
/// waited for addon-controller, which needs the kubeconfig Secret to take it off), and so are its SveltosCluster
/// and Secret; `c1` keeps its add-on. Destroy withdraws `c1`'s the same way.
#[tokio::test(flavor = "multi_thread")]
async fn withdraw_takes_the_addons_off_before_the_cluster_goes() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let (ns, addon, tf) = two_clusters_with_addon(sveltos, &inv, "withdraw", "").await;

    inv.delete_profile(&ns, "c2").await;
    let out = flat(&apply_ok(&tf));
    assert!(
        out.contains("This plan deregisters 1 cluster(s)")
            && out.contains("add-ons are withdrawn first"),
        "{out}"
    );
    assert_eq!(bridged(&inv, &ns, "c2").await, (false, false));
    assert_eq!(
        addon.on_member(&inv.client, "c2").await,
        None,
        "c2 was deregistered with its add-on still on the member cluster"
    );
    assert_eq!(
        addon.on_member(&inv.client, "c1").await,
        Some(format!("{ns}/c1"))
    );

    tf.destroy();
    assert_eq!(bridged(&inv, &ns, "c1").await, (false, false));
    assert_eq!(
        addon.on_member(&inv.client, "c1").await,
        None,
        "destroy left c1's add-on on the member cluster"
    );
}

/// `orphan`: apply deletes `c2`'s SveltosCluster and Secret at once; addon-controller then drops its
/// ClusterSummary without withdrawing anything, and the add-on stays on the member cluster, managed by no one.
#[tokio::test(flavor = "multi_thread")]
async fn orphan_leaves_the_addons_behind() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let extra = "  deregistration = \"orphan\"";
    let (ns, addon, tf) = two_clusters_with_addon(sveltos, &inv, "orphan", extra).await;

    inv.delete_profile(&ns, "c2").await;
    let out = flat(&apply_ok(&tf));
    assert!(out.contains("managed by no one"), "{out}");
    assert_eq!(bridged(&inv, &ns, "c2").await, (false, false));
    sveltos
        .until(
            "addon-controller dropping c2's ClusterSummary",
            ADDON_DEADLINE,
            || async {
                cluster_summaries(&inv.client, &ns, "c2")
                    .await
                    .is_empty()
                    .then_some(())
            },
        )
        .await;
    assert_eq!(
        addon.on_member(&inv.client, "c2").await,
        Some(format!("{ns}/c2")),
        "orphan: the add-on should stay on the member cluster"
    );
}

/// A second Sveltos profile lists `c2` by `clusterRefs`, which no label removal undoes: deregistering `c2` withdraws
/// the label-selected add-on but keeps the cluster (SveltosCluster and Secret) with a warning naming it and the
/// ClusterSummary that holds it, while the rest of the plan is applied; the next apply looks again without waiting;
/// once that profile is gone, apply finishes the removal.
#[tokio::test(flavor = "multi_thread")]
async fn addons_that_cannot_be_withdrawn_keep_the_cluster_with_a_warning() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let extra = "  deregistration_timeout = \"5s\"";
    let (ns, addon, tf) = two_clusters_with_addon(sveltos, &inv, "held", extra).await;
    let pinned = Addon::deploy(&inv.client, &format!("{ns}-refs"), &ns, listing(&ns, "c2")).await;
    addon_reaches(sveltos, &inv, &pinned, &ns, "c2").await;
    let holder = format!("{}-sveltos-c2", pinned.name);
    assert!(
        cluster_summaries(&inv.client, &ns, "c2")
            .await
            .contains(&holder)
    );

    inv.delete_profile(&ns, "c2").await;
    fleet(sveltos, &inv, &ns, &["c3"]).await;
    let out = apply_ok(&tf);
    let warning = flat(one_diagnostic(
        &out,
        "Warning",
        &format!("Add-ons of SveltosCluster {ns}/c2 not withdrawn"),
    ));
    assert!(
        warning.contains(&holder) && warning.contains("deregistration_timeout (5s)"),
        "{warning}"
    );
    assert_eq!(
        bridged(&inv, &ns, "c2").await,
        (true, true),
        "c2 was removed with add-ons left"
    );
    assert!(
        inv.sc(&ns, "c3").await.is_some(),
        "the rest of the plan was not applied"
    );
    assert_eq!(
        pinned.on_member(&inv.client, "c2").await,
        Some(format!("{ns}/c2"))
    );
    let sc = inv.sc(&ns, "c2").await.expect("c2 kept");
    assert!(
        !sc.metadata
            .labels
            .unwrap_or_default()
            .contains_key(crate::addons::FLEET),
        "the labels the bridge wrote on c2 are still there"
    );

    let again = apply_ok(&tf);
    let warning = flat(one_diagnostic(
        &again,
        "Warning",
        &format!("Add-ons of SveltosCluster {ns}/c2 not withdrawn"),
    ));
    assert!(warning.contains("so this run did not wait"), "{warning}");

    pinned.delete(&inv.client).await;
    sveltos
        .until(
            "the pinned add-on withdrawn from c2",
            ADDON_DEADLINE,
            || async {
                cluster_summaries(&inv.client, &ns, "c2")
                    .await
                    .is_empty()
                    .then_some(())
            },
        )
        .await;
    let last = apply_ok(&tf);
    assert!(!last.contains("not withdrawn"), "{last}");
    assert_eq!(bridged(&inv, &ns, "c2").await, (false, false));
    assert_eq!(addon.on_member(&inv.client, "c2").await, None);
    assert_eq!(pinned.on_member(&inv.client, "c2").await, None);
}
