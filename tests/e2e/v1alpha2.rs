//! Issue 37, item 3: the control plane serves `multicluster.x-k8s.io/v1alpha2` next to v1alpha1 (storage v1alpha1,
//! no conversion webhook), as upstream's CRD does. v1alpha2 has no `status.credentialProviders`: a read through it
//! drops the field, and kubectl (the preferred version) no longer shows it. The bridge reads v1alpha1, still uses a
//! provider offered only there, and warns naming the cluster, since current upstream consumers do not see it.
//!
//! On a control plane of its own (the shared one's CRD is never changed), the ClusterProfile CRD made to serve
//! v1alpha2 only: the bridge and the data source read the profiles through v1alpha2; then made to serve a version
//! the provider does not know only: the error names the versions served and those known. A CRD of the Multi-Cluster
//! Services API's kind serves the group's v1alpha1 all along, so the group's version list alone would mislead.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value as Json, json};
use support::inventory::{Inv, apply_ok, bridge, flat, health_status, one_diagnostic, run};
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

const GROUP: &str = "multicluster.x-k8s.io";

/// Whether `group/version` holds `plural` in the API server's discovery.
async fn discovered(client: &kube::Client, version: &str, plural: &str) -> bool {
    client
        .list_api_group_resources(&format!("{GROUP}/{version}"))
        .await
        .is_ok_and(|l| l.resources.iter().any(|r| r.name == plural))
}

/// Polls discovery until `want` holds for the served versions of ClusterProfiles (at most a minute).
async fn await_discovery(client: &kube::Client, want: &[(&str, bool)]) {
    for _ in 0..600 {
        let mut all = true;
        for (version, served) in want {
            all &= discovered(client, version, "clusterprofiles").await == *served;
        }
        if all {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("discovery never showed ClusterProfiles as {want:?}");
}

/// Sets the ClusterProfile CRD's versions to `(name, served, storage)`, each new one a copy of v1alpha2's schema.
async fn set_versions(client: &kube::Client, versions: &[(&str, bool, bool)]) {
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    let mut crd = crds
        .get("clusterprofiles.multicluster.x-k8s.io")
        .await
        .unwrap();
    let template = crd
        .spec
        .versions
        .iter()
        .find(|v| v.name == V1ALPHA2)
        .unwrap()
        .clone();
    let mut out = Vec::new();
    for (name, served, storage) in versions {
        let mut v = crd
            .spec
            .versions
            .iter()
            .find(|v| v.name == *name)
            .cloned()
            .unwrap_or_else(|| {
                let mut v = template.clone();
                v.name = name.to_string();
                v
            });
        (v.served, v.storage) = (*served, *storage);
        out.push(v);
    }
    crd.spec.versions = out;
    crd.metadata.managed_fields = None;
    crds.replace(
        &crd.metadata.name.clone().unwrap(),
        &PostParams::default(),
        &crd,
    )
    .await
    .expect("updating the ClusterProfile CRD");
}

/// A CRD of the group that serves v1alpha1 without ClusterProfiles, as the Multi-Cluster Services API's do.
async fn install_service_exports(client: &kube::Client) {
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "serviceexports.multicluster.x-k8s.io"},
        "spec": {"group": GROUP, "scope": "Namespaced",
            "names": {"plural": "serviceexports", "singular": "serviceexport", "kind": "ServiceExport"},
            "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    }))
    .unwrap();
    Api::<CustomResourceDefinition>::all(client.clone())
        .create(&PostParams::default(), &crd)
        .await
        .expect("creating the ServiceExport CRD");
    for _ in 0..600 {
        if discovered(client, "v1alpha1", "serviceexports").await {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the ServiceExport CRD is never served");
}

/// ClusterProfile `ns/name` created through v1alpha2, healthy, with a labelled kubeconfig Secret beside it.
async fn v1alpha2_profile(inv: &Inv, ns: &str, name: &str) {
    let profile = json!({"apiVersion": format!("{GROUP}/{V1ALPHA2}"), "kind": "ClusterProfile",
        "metadata": {"name": name, "namespace": ns}, "spec": {"clusterManager": {"name": "test"}}});
    let api = profiles_at(&inv.client, ns, V1ALPHA2);
    api.create(
        &PostParams::default(),
        &serde_json::from_value(profile).unwrap(),
    )
    .await
    .expect("creating a ClusterProfile through v1alpha2");
    let status = json!({"status": health_status(true)});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(status))
        .await
        .expect("patching its status through v1alpha2");
    let kc = fixtures::unreachable_kubeconfig("t");
    let label = [(tfsveltos::api::keys::CLUSTER_PROFILE_LABEL, name)];
    inv.secret(
        ns,
        &format!("{name}-src"),
        &label,
        &[("Config", kc.as_str())],
    )
    .await;
}

const PROFILES_DATA: &str = "data \"sveltos_clusterprofiles\" \"all\" {\n  namespaces = [\"NS\"]\n}\n\
    output \"ids\" {\n  value = [for p in data.sveltos_clusterprofiles.all.cluster_profiles : p.id]\n}\n";

/// The ephemeral credentials of profile `NS/a`, their host written to `host.txt` by a provisioner.
const EPHEMERAL_HOST: &str = "ephemeral \"sveltos_cluster_credentials\" \"a\" {\n  namespace = \"NS\"\n  name = \"a\"\n}\n\
    resource \"terraform_data\" \"host\" {\n  provisioner \"local-exec\" {\n    command = \"printf %s \\\"$HOST\\\" > host.txt\"\n    \
    environment = { HOST = ephemeral.sveltos_cluster_credentials.a.host }\n  }\n}\n";

#[tokio::test(flavor = "multi_thread")]
async fn clusterprofiles_are_read_through_a_served_version_the_provider_knows() {
    let env = TestEnv::start(false);
    let inv = Inv::of(&env).await;
    install_service_exports(&inv.client).await;
    set_versions(
        &inv.client,
        &[("v1alpha1", false, false), (V1ALPHA2, true, true)],
    )
    .await;
    await_discovery(&inv.client, &[("v1alpha1", false), (V1ALPHA2, true)]).await;

    // v1alpha2 only: the bridge registers the profiles created through it, and the data source lists them.
    let ns = unique_namespace(&inv.client, "v1alpha2-only").await;
    for name in ["a", "b"] {
        v1alpha2_profile(&inv, &ns, name).await;
    }
    let data = PROFILES_DATA.replace("NS", &ns);
    let ephemeral = EPHEMERAL_HOST.replace("NS", &ns);
    let tf = inv.tf(
        &Cli::tofu(),
        &format!("{}{data}{ephemeral}", bridge(&ns, &[&ns], "")),
    );
    apply_ok(&tf);
    for name in ["a", "b"] {
        assert!(inv.sc(&ns, name).await.is_some(), "{name} registered");
    }
    let ids = tf.outputs_json()["ids"]["value"].clone();
    assert_eq!(ids, json!([format!("{ns}/a"), format!("{ns}/b")]), "{ids}");
    let host = std::fs::read_to_string(tf.dir().join("host.txt"))
        .expect("the ephemeral resource was opened");
    assert_eq!(host, "https://127.0.0.1:1");

    // Neither v1alpha1 nor v1alpha2 served: the plan fails naming what is served and what the provider reads.
    set_versions(
        &inv.client,
        &[
            ("v1alpha1", false, false),
            (V1ALPHA2, false, false),
            ("v1beta9", true, true),
        ],
    )
    .await;
    await_discovery(&inv.client, &[(V1ALPHA2, false), ("v1beta9", true)]).await;
    let expected = "the API server serves ClusterProfiles only in v1beta9; the provider reads v1alpha1 or v1alpha2";
    let (ok, out) = run(&tf, &["plan", "-input=false", "-no-color"]);
    assert!(!ok, "{out}");
    assert!(flat(&out.replace('│', "")).contains(expected), "{out}");
    for alone in [data, ephemeral] {
        let (ok, out) = run(
            &inv.tf(&Cli::tofu(), &alone),
            &["plan", "-input=false", "-no-color"],
        );
        assert!(!ok, "{out}");
        assert!(flat(&out.replace('│', "")).contains(expected), "{out}");
    }
    env.down();
}
