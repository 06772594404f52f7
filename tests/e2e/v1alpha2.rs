//! Issue 37, item 3: the control plane serves `multicluster.x-k8s.io/v1alpha2` next to v1alpha1 (storage v1alpha1,
//! no conversion webhook), as upstream's CRD does. v1alpha2 has no `status.credentialProviders`: a read through it
//! drops the field, and kubectl (the preferred version) no longer shows it. The bridge reads v1alpha1, still uses a
//! provider offered only there, and warns naming the cluster, since current upstream consumers do not see it.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use serde_json::{Value as Json, json};
use support::inventory::{Inv, apply_ok, bridge, flat, one_diagnostic};
use support::{Cli, TestEnv, fixtures, unique_namespace};
use tfsveltos::api::v1alpha2::V1ALPHA2;

const WARNING: &str =
    "offer their access provider only in the deprecated status.credentialProviders";

fn profiles_at(client: &kube::Client, ns: &str, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("multicluster.x-k8s.io", version, "ClusterProfile");
    let ar = ApiResource::from_gvk_with_plural(&gvk, "clusterprofiles");
    Api::namespaced_with(client.clone(), ns, &ar)
}

#[tokio::test(flavor = "multi_thread")]
async fn both_versions_are_served_and_the_bridge_warns_about_credential_providers_only() {
    let inv = Inv::new().await;
    let crd = Api::<CustomResourceDefinition>::all(inv.client.clone())
        .get("clusterprofiles.multicluster.x-k8s.io")
        .await
        .expect("the ClusterProfile CRD");
    let versions: Vec<(String, bool, bool)> = crd
        .spec
        .versions
        .iter()
        .map(|v| (v.name.clone(), v.served, v.storage))
        .collect();
    assert_eq!(
        versions,
        [
            ("v1alpha1".to_string(), true, true),
            (V1ALPHA2.to_string(), true, false)
        ]
    );

    // A profile whose secretreader provider is offered only in credentialProviders.
    let ns = unique_namespace(&inv.client, "v1alpha2").await;
    let provider = json!({"name": "kubeconfig-secretreader", "cluster": {"server": "https://127.0.0.1:1",
        "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": {"name": "old-kc", "key": "value"}}]}});
    inv.profile(
        &ns,
        "old",
        &[],
        json!({ "credentialProviders": [provider] }),
    )
    .await;
    let kc = fixtures::unreachable_kubeconfig("t");
    inv.secret(&ns, "old-kc", &[], &[("value", kc.as_str())])
        .await;

    // Through v1alpha2 the field is gone; through v1alpha1 (what the bridge reads) it is there.
    let status = |o: &DynamicObject| o.data["status"].clone();
    let v2 = profiles_at(&inv.client, &ns, V1ALPHA2)
        .get("old")
        .await
        .unwrap();
    assert_eq!(status(&v2).get("credentialProviders"), None, "{v2:?}");
    let v1 = profiles_at(&inv.client, &ns, "v1alpha1")
        .get("old")
        .await
        .unwrap();
    assert_eq!(
        status(&v1)["credentialProviders"][0]["name"],
        "kubeconfig-secretreader"
    );
    // kubectl, like a client asking for the preferred version, reads v1alpha2.
    let out = TestEnv::get().kubectl(&[
        "get",
        "clusterprofiles.multicluster.x-k8s.io",
        "old",
        "-n",
        &ns,
        "-o",
        "json",
    ]);
    let got: Json = serde_json::from_str(&out).unwrap();
    assert_eq!(
        got["apiVersion"],
        format!("multicluster.x-k8s.io/{V1ALPHA2}")
    );

    // The bridge registers the cluster with that provider and warns, naming it.
    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], ""));
    let out = apply_ok(&tf).replace('│', "");
    let warning = flat(one_diagnostic(&out, "Warning", WARNING));
    assert!(
        warning.contains(&format!(
            "- {ns}/old (provider \"kubeconfig-secretreader\")"
        )),
        "{warning}"
    );
    assert!(inv.sc(&ns, "old").await.is_some(), "registered");
    tf.destroy();
}
