//! The renewal heartbeat in `sveltos_clusters`, with the real sveltoscluster-manager renewing a cluster's token
//! (`token_renewal` with a ServiceAccount of the member cluster): `last_renewed_at` is the manager's
//! `status.lastReconciledTokenRequestAt`, `connection_failures` its count of failed connections, and the renewal is
//! no drift.

use std::time::Duration;

use k8s_openapi::api::core::v1::ServiceAccount;
use serde_json::Value as Json;
use support::inventory::{Inv, apply_ok, bridge};
use support::sveltos::Sveltos;
use support::{Cli, unique_namespace};

/// How long the first renewal may take: a hang guard, not a measurement (the manager renews once the interval,
/// here a minute, has passed since the SveltosCluster was created, at its next look, about once a minute).
const RENEWAL_DEADLINE: Duration = Duration::from_secs(360);

/// The bridge renewing through ServiceAccount `<ns>/renewer` every minute, and `sveltos_clusters` listing what it
/// owns.
fn config(ns: &str) -> String {
    let renewal = format!(
        "  token_renewal {{\n    interval = \"1m\"\n    service_account = \"{ns}/renewer\"\n  }}"
    );
    format!(
        "{}data \"sveltos_clusters\" \"renewals\" {{\n  bridge = \"{ns}\"\n  namespaces = [\"{ns}\"]\n  \
         depends_on = [sveltos_cluster_inventory_bridge.x]\n}}\noutput \"renewals\" {{\n  value = \
         data.sveltos_clusters.renewals.clusters\n}}\n",
        bridge(ns, &[ns], &renewal)
    )
}

/// Once the manager has renewed the token, the data source reports when (as the manager wrote it, that renewal or
/// a later one) and no failed connection; the plan stays empty.
#[tokio::test(flavor = "multi_thread")]
async fn the_data_source_shows_the_renewal_heartbeat() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let ns = unique_namespace(&inv.client, "renewal").await;
    let sa: ServiceAccount = serde_json::from_value(
        serde_json::json!({"metadata": {"name": "renewer", "namespace": ns}}),
    )
    .expect("a ServiceAccount");
    kube::Api::<ServiceAccount>::namespaced(inv.client.clone(), &ns)
        .create(&Default::default(), &sa)
        .await
        .unwrap_or_else(|e| panic!("creating ServiceAccount {ns}/renewer: {e}"));
    inv.profile_with_secret(&ns, "c1", &[], Json::Null, &sveltos.member_kubeconfig())
        .await;
    let tf = inv.tf(&Cli::tofu(), &config(&ns));
    apply_ok(&tf);
    let renewed = sveltos
        .until(
            "the manager renewing c1's token",
            RENEWAL_DEADLINE,
            || async {
                inv.sc(&ns, "c1")
                    .await?
                    .status?
                    .last_reconciled_token_request_at
            },
        )
        .await;
    apply_ok(&tf);
    let outputs = tf.outputs_json();
    let c1 = &outputs["renewals"]["value"][0];
    assert_eq!(c1["id"], format!("{ns}/c1"), "{outputs}");
    // The manager may have renewed again since (every minute): RFC 3339 times of one writer order as text.
    let shown = c1["last_renewed_at"].as_str().unwrap_or_default();
    assert!(
        shown >= renewed.as_str(),
        "{shown} before {renewed}: {outputs}"
    );
    assert_eq!(c1["connection_failures"], 0, "{outputs}");
    assert_eq!(c1["ready"], true, "{outputs}");
    assert_eq!(tf.plan(), 0, "the renewal shows as drift");
}
