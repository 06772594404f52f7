//! Issue 37, item 4: one member cluster in two inventories. Two ClusterProfiles in two namespaces carrying one
//! `multicluster.x-k8s.io/inventory-member-id` are one member cluster: by default the bridge registers both and the
//! plan warns, naming both; with `duplicate_members = "register_one"` one SveltosCluster is left (the first in the
//! order of `namespaces`), the other is deregistered and listed in `skipped` with a cause naming the one kept.

use serde_json::Value as Json;
use support::inventory::{Inv, apply_ok, bridge, diagnostics, flat, one_diagnostic};
use support::{Cli, fixtures, unique_namespace};
use tfsveltos::api::keys::INVENTORY_MEMBER_ID_LABEL as MEMBER_ID;

const DUPLICATES: &str = "member cluster(s) are described by more than one ClusterProfile";

#[tokio::test(flavor = "multi_thread")]
async fn one_member_id_in_two_namespaces_warns_naming_both_then_register_one_keeps_one() {
    let inv = Inv::new().await;
    let cli = Cli::tofu();
    let first = unique_namespace(&inv.client, "member-b").await;
    let second = unique_namespace(&inv.client, "member-a").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    // The member id is the inventory writer's: any label value, here one unique to the test.
    let id = format!("cluster-{first}");
    for ns in [&first, &second] {
        inv.profile_with_secret(ns, "shared", &[(MEMBER_ID, &id)], Json::Null, &kc)
            .await;
    }
    inv.profile_with_secret(&second, "solo", &[], Json::Null, &kc)
        .await;
    // `first` comes first in `namespaces`, although its name sorts after `second`'s.
    let namespaces = [first.as_str(), second.as_str()];
    let tf = inv.tf(&cli, &bridge(&first, &namespaces, ""));

    // Default: both registered, one warning naming both.
    let out = apply_ok(&tf).replace('│', "");
    let warning = flat(one_diagnostic(&out, "Warning", DUPLICATES));
    assert!(
        warning.contains(&format!("{first}/shared, {second}/shared"))
            && warning.contains(&format!("{MEMBER_ID} \"{id}\"")),
        "{warning}"
    );
    for ns in [&first, &second] {
        assert!(inv.sc(ns, "shared").await.is_some(), "{ns}/shared");
    }

    // register_one: the first namespace's is kept, the other deregistered and skipped, naming the kept one.
    let one = bridge(
        &first,
        &namespaces,
        "  duplicate_members = \"register_one\"",
    );
    inv.rewrite(&tf, &one);
    let out = apply_ok(&tf).replace('│', "");
    assert!(diagnostics(&out, "Warning", DUPLICATES).is_empty(), "{out}");
    assert!(inv.sc(&first, "shared").await.is_some(), "the kept one");
    assert!(
        inv.sc(&second, "shared").await.is_none(),
        "the duplicate is deregistered"
    );
    assert!(inv.sc(&second, "solo").await.is_some(), "others are kept");
    let values = tf.state_resources()["sveltos_cluster_inventory_bridge.x"]["values"].clone();
    let skipped = &values["skipped"][format!("{second}/shared")];
    let cause = skipped["cause"].as_str().unwrap_or_default();
    assert!(
        cause.contains(&format!("{first}/shared is registered")) && skipped["kept"] == false,
        "{values}"
    );
    assert_eq!(
        values["skipped"].as_object().map(|m| m.len()),
        Some(1),
        "{values}"
    );
    assert_eq!(tf.plan(), 0, "the plan after register_one is empty");
    tf.destroy();
}
