//! Inventory facts into Sveltos, judged by the real addon-controller: a Sveltos `ClusterProfile` selecting the label
//! the bridge writes for a ClusterProfile's property (`copy_properties`), whose template reads the property from
//! `.Cluster.spec.data`, deploys the property's value to the member cluster; when the property changes, one apply
//! moves the cluster to the add-on selecting the new value, rendered with it, and the old one is withdrawn.

use serde_json::{Value as Json, json};
use support::inventory::{Inv, apply_ok, bridge};
use support::sveltos::{Addon, Sveltos, ready, selecting};
use support::{Cli, unique_namespace};

use crate::ADDON_DEADLINE;

/// The label the bridge writes for property `location` (the default `label_prefix`).
const LOCATION: &str = "property.clusterinventory.io/location";

/// A ClusterProfile status reporting `location`.
fn located(location: &str) -> Json {
    json!({"properties": [{"name": "location", "value": location}]})
}

/// An add-on selecting the clusters whose `location` property is `location`, deploying that cluster's
/// `spec.data.location`.
async fn addon_for(inv: &Inv, ns: &str, name: &str, location: &str) -> Addon {
    let value = "{{ .Cluster.spec.data.location }}";
    Addon::deploy_with(&inv.client, name, ns, selecting(LOCATION, location), value).await
}

/// The add-on selecting a property's label reaches the cluster with the property's value read from `spec.data`;
/// a changed property moves the cluster from one add-on to the other in one apply, and the plan after is empty.
#[tokio::test(flavor = "multi_thread")]
async fn an_addon_selects_a_property_label_and_deploys_the_property_from_spec_data() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let ns = unique_namespace(&inv.client, "props").await;
    let kubeconfig = sveltos.member_kubeconfig();
    inv.profile_with_secret(&ns, "c1", &[], located("eu-west-1"), &kubeconfig)
        .await;
    let west = addon_for(&inv, &ns, &format!("{ns}-west"), "eu-west-1").await;
    let central = addon_for(&inv, &ns, &format!("{ns}-central"), "eu-central-1").await;
    let body = bridge(
        &ns,
        &[&ns],
        "  copy_properties {\n    names = [\"location\"]\n  }",
    );
    let tf = inv.tf(&Cli::tofu(), &body);
    apply_ok(&tf);
    sveltos
        .until(&format!("{ns}/c1 Ready"), ADDON_DEADLINE, || async {
            ready(&inv.client, &ns, "c1").await.then_some(())
        })
        .await;
    let deployed = sveltos
        .until("the eu-west-1 add-on on c1", ADDON_DEADLINE, || async {
            west.on_member(&inv.client, "c1").await
        })
        .await;
    assert_eq!(
        deployed, "eu-west-1",
        "the template read spec.data.location"
    );
    assert_eq!(central.on_member(&inv.client, "c1").await, None);

    inv.profile_status(&ns, "c1", located("eu-central-1")).await;
    apply_ok(&tf);
    let deployed = sveltos
        .until("the eu-central-1 add-on on c1", ADDON_DEADLINE, || async {
            central.on_member(&inv.client, "c1").await
        })
        .await;
    assert_eq!(deployed, "eu-central-1", "rendered with the new value");
    sveltos
        .until("the eu-west-1 add-on withdrawn", ADDON_DEADLINE, || async {
            west.on_member(&inv.client, "c1")
                .await
                .is_none()
                .then_some(())
        })
        .await;
    assert_eq!(tf.plan(), 0, "what Sveltos wrote shows as drift");
}
