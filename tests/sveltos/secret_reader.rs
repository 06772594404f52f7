//! `kubeconfig-secretreader` judged by the real sveltoscluster-manager: under each `secret_reader_mode`, a cluster
//! whose ClusterProfile and Secret name different endpoints is registered against the one that convention takes,
//! and Sveltos reaches it there (the SveltosCluster becomes Ready).

use serde_json::{Value as Json, json};
use support::inventory::{Inv, apply_ok};
use support::sveltos::{self, Sveltos};
use support::{Cli, fixtures, unique_namespace};

use crate::ADDON_DEADLINE;

/// `kubeconfig` with its first cluster's server replaced by `server`.
fn with_server(kubeconfig: &str, server: &str) -> String {
    let mut kc: Json = serde_saphyr::from_str(kubeconfig).unwrap();
    kc["clusters"][0]["cluster"]["server"] = server.into();
    kc.to_string()
}

/// Profile `<ns>/c`: the access provider names `profile_kc`'s server and CA, the Secret holds `secret_kc`.
async fn profile(inv: &Inv, ns: &str, profile_kc: &str, secret_kc: &str) {
    inv.secret(ns, "c-access", &[], &[("value", secret_kc)])
        .await;
    let status =
        fixtures::secret_reader_status(profile_kc, json!({"name": "c-access", "key": "value"}));
    inv.profile(ns, "c", &[], status).await;
}

/// With the default mode, the ClusterProfile names the API server and the Secret a placeholder endpoint (where
/// nothing listens): Sveltos reaches the cluster. With `whole_kubeconfig`, the other way round (the placeholder in
/// the ClusterProfile, as clusterinventory-controller's inventories often have it): Sveltos reaches it too.
#[tokio::test(flavor = "multi_thread")]
async fn each_mode_registers_the_endpoint_sveltos_reaches() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let real = sveltos.member_kubeconfig();
    let placeholder = with_server(&real, "https://127.0.0.1:1");
    let upstream = unique_namespace(&inv.client, "reader-upstream").await;
    profile(&inv, &upstream, &real, &placeholder).await;
    let whole = unique_namespace(&inv.client, "reader-whole").await;
    profile(&inv, &whole, &placeholder, &real).await;
    let hcl = format!(
        "resource \"sveltos_cluster_inventory_bridge\" \"upstream\" {{\n  name = \"{upstream}\"\n  \
         namespaces = [\"{upstream}\"]\n}}\n\
         resource \"sveltos_cluster_inventory_bridge\" \"whole\" {{\n  name = \"{whole}\"\n  \
         namespaces = [\"{whole}\"]\n  credentials {{\n    secret_reader_mode = \"whole_kubeconfig\"\n  }}\n}}\n"
    );
    let tf = inv.tf(&Cli::tofu(), &hcl);
    apply_ok(&tf);
    for ns in [&upstream, &whole] {
        sveltos
            .until(&format!("{ns}/c Ready"), ADDON_DEADLINE, || async {
                sveltos::ready(&inv.client, ns, "c").await.then_some(())
            })
            .await;
    }
    tf.destroy();
}
