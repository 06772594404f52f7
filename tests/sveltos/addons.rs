//! Add-ons, end to end: a Sveltos `ClusterProfile` (group `config.projectsveltos.io`) selecting a label the bridge
//! copies from the inventory deploys its add-on to every bridged cluster, and to a cluster the bridge adds later.

use serde_json::Value as Json;
use support::inventory::{Inv, apply_ok, bridge};
use support::sveltos::{self, Addon, Sveltos, selecting};
use support::{Cli, unique_namespace};

use crate::ADDON_DEADLINE;

/// Label of the inventory's ClusterProfiles (copied onto the SveltosClusters) that the Sveltos profile selects.
pub const FLEET: &str = "fleet.tfsveltos.test/name";

/// Profiles `names` in `ns`, each labelled [`FLEET`]`=<ns>`, whose credential reaches the management cluster.
pub async fn fleet(sveltos: &Sveltos, inv: &Inv, ns: &str, names: &[&str]) {
    let kubeconfig = sveltos.member_kubeconfig();
    for name in names {
        inv.profile_with_secret(ns, name, &[(FLEET, ns)], Json::Null, &kubeconfig)
            .await;
    }
}

/// The add-on of a Sveltos profile selecting the clusters of [`fleet`] in `ns`.
pub async fn fleet_addon(inv: &Inv, ns: &str) -> Addon {
    Addon::deploy(&inv.client, ns, ns, selecting(FLEET, ns)).await
}

/// Waits until sveltoscluster-manager reports bridged cluster `ns/name` Ready, then until `addon` reaches it on
/// the member cluster.
pub async fn addon_reaches(sveltos: &Sveltos, inv: &Inv, addon: &Addon, ns: &str, name: &str) {
    let expected = format!("{ns}/{name}");
    sveltos
        .until(&format!("{expected} Ready"), ADDON_DEADLINE, || async {
            sveltos::ready(&inv.client, ns, name).await.then_some(())
        })
        .await;
    let found = sveltos
        .until(
            &format!("the add-on on {expected}"),
            ADDON_DEADLINE,
            || async { addon.on_member(&inv.client, name).await },
        )
        .await;
    assert_eq!(
        found, expected,
        "the add-on of {expected} was rendered for another cluster"
    );
}

/// Two bridged clusters get the add-on of a Sveltos profile selecting their copied inventory label; a third
/// profile added to the inventory is bridged by the next apply and gets it too; Sveltos' own writes (Ready,
/// `projectsveltos.io/k8s-version`) are no drift.
#[tokio::test(flavor = "multi_thread")]
async fn a_sveltos_profile_reaches_every_bridged_cluster_and_one_added_later() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let ns = unique_namespace(&inv.client, "addons").await;
    fleet(sveltos, &inv, &ns, &["c1", "c2"]).await;
    let addon = fleet_addon(&inv, &ns).await;
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
    apply_ok(&tf);
    for name in ["c1", "c2"] {
        addon_reaches(sveltos, &inv, &addon, &ns, name).await;
    }

    fleet(sveltos, &inv, &ns, &["c3"]).await;
    assert_eq!(addon.on_member(&inv.client, "c3").await, None);
    apply_ok(&tf);
    addon_reaches(sveltos, &inv, &addon, &ns, "c3").await;
    assert_eq!(tf.plan(), 0, "what Sveltos wrote shows as drift");
}
