//! Issue 37, item 4, its last part: `skip_cluster_api_clusters`. Sveltos manages Cluster API clusters natively
//! (addon-controller's cluster type `Capi`), so a ClusterProfile with a Cluster API `Cluster` of the same namespace
//! and name would register that member cluster a second time. Off (the default), such a profile is registered as
//! any other; on, it is skipped with a warning naming it and its Cluster (a bridged one deregistered), every other
//! profile registered. The Clusters are listed through the version the API server prefers (v1beta2 here), and
//! through v1beta1 once only that is served. An identity that may not list Clusters gets an error naming the
//! setting and the permission, nothing written. Where Cluster API is not installed the setting changes nothing.
//!
//! The Cluster CRD is a fixture of ours, the smallest one the API server takes for `cluster.x-k8s.io`'s `Cluster`
//! (metadata and an open spec, served in v1beta2 and v1beta1 as current Cluster API serves it), installed on a
//! control plane of this test's own so that the shared one never serves the group.
//!
//! With an `inventory` block, the Clusters looked for are those of the management cluster (the provider's own
//! connection, where the SveltosClusters are written and Sveltos would see the member twice), never the hub's: a
//! Cluster on the hub at a profile's namespace and name is not managed by this Sveltos and skips nothing.

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde_json::{Value as Json, json};
use support::inventory::{Inv, apply_ok, bridge, diagnostics, flat, one_diagnostic, run};
use support::{Cli, TestEnv, Tf, fixtures, unique_namespace};

const GROUP: &str = "cluster.x-k8s.io";
const SKIPPED: &str = "a Cluster API Cluster of the same namespace and name exists";
const ON: &str = "  skip_cluster_api_clusters = true";

/// The fixture CRD: `Cluster` of `cluster.x-k8s.io`, served in `(version, storage)`.
fn cluster_crd(versions: &[(&str, bool)]) -> CustomResourceDefinition {
    let versions: Vec<Json> = versions
        .iter()
        .map(|(name, storage)| {
            json!({"name": name, "served": true, "storage": storage,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}})
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("clusters.{GROUP}")},
        "spec": {"group": GROUP, "scope": "Namespaced",
            "names": {"plural": "clusters", "singular": "cluster", "kind": "Cluster", "listKind": "ClusterList"},
            "versions": versions}
    }))
    .unwrap()
}

/// Whether discovery shows `clusters` in `GROUP/version`.
async fn discovered(client: &kube::Client, version: &str) -> bool {
    client
        .list_api_group_resources(&format!("{GROUP}/{version}"))
        .await
        .is_ok_and(|l| l.resources.iter().any(|r| r.name == "clusters"))
}

/// Polls discovery until each `(version, served)` holds (at most a minute).
async fn await_discovery(client: &kube::Client, want: &[(&str, bool)]) {
    for _ in 0..600 {
        let mut all = true;
        for (version, served) in want {
            all &= discovered(client, version).await == *served;
        }
        if all {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("discovery never showed Clusters as {want:?}");
}

/// Creates Cluster API Cluster `ns/name` through `version`.
async fn cluster(client: &kube::Client, ns: &str, name: &str, version: &str) {
    let gvk = GroupVersionKind::gvk(GROUP, version, "Cluster");
    let ar = ApiResource::from_gvk_with_plural(&gvk, "clusters");
    let obj = json!({"apiVersion": format!("{GROUP}/{version}"), "kind": "Cluster",
        "metadata": {"name": name, "namespace": ns}, "spec": {"paused": false}});
    Api::<DynamicObject>::namespaced_with(client.clone(), ns, &ar)
        .create(
            &PostParams::default(),
            &serde_json::from_value(obj).unwrap(),
        )
        .await
        .expect("creating a Cluster");
}

/// A kubeconfig for a ServiceAccount of the cluster of `admin` (a kubeconfig, and `client` built from it) that may
/// do anything with the inventory, Sveltos and core objects, and nothing with Cluster API.
async fn no_cluster_api_identity(
    env: &TestEnv,
    admin: &std::path::Path,
    client: &kube::Client,
    dir: &std::path::Path,
) -> std::path::PathBuf {
    let ns = unique_namespace(client, "capi-id").await;
    let sa: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "bridge", "namespace": ns}})).unwrap();
    Api::<ServiceAccount>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &sa)
        .await
        .unwrap();
    let groups = [
        "",
        "multicluster.x-k8s.io",
        "lib.projectsveltos.io",
        "config.projectsveltos.io",
    ];
    let role: ClusterRole =
        serde_json::from_value(json!({"metadata": {"name": format!("{ns}-bridge")},
        "rules": [{"apiGroups": groups, "resources": ["*"], "verbs": ["*"]}]}))
        .unwrap();
    Api::<ClusterRole>::all(client.clone())
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(json!({"metadata": {"name": format!("{ns}-bridge")},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": format!("{ns}-bridge")},
        "subjects": [{"kind": "ServiceAccount", "name": "bridge", "namespace": ns}]}))
    .unwrap();
    Api::<ClusterRoleBinding>::all(client.clone())
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    let token = env.kubectl_at(
        admin,
        &["create", "token", "bridge", "-n", &ns, "--duration", "1h"],
    );
    let path = dir.join(format!("no-capi-{ns}.kubeconfig"));
    std::fs::write(&path, support::kubeconfig_with_token(admin, token.trim())).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn a_profile_with_a_cluster_api_cluster_is_skipped_when_asked_through_the_preferred_version()
{
    let env = TestEnv::start(false);
    let inv = Inv::of(&env).await;
    let crds = Api::<CustomResourceDefinition>::all(inv.client.clone());
    crds.create(
        &PostParams::default(),
        &cluster_crd(&[("v1beta1", false), ("v1beta2", true)]),
    )
    .await
    .expect("creating the Cluster CRD");
    await_discovery(&inv.client, &[("v1beta1", true), ("v1beta2", true)]).await;

    let ns = unique_namespace(&inv.client, "capi").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for name in ["capi", "plain"] {
        inv.profile_with_secret(&ns, name, &[], Json::Null, &kc)
            .await;
    }
    cluster(&inv.client, &ns, "capi", "v1beta2").await;
    // A Cluster with no ClusterProfile of its name, and one in a namespace the bridge does not read.
    cluster(&inv.client, &ns, "lonely", "v1beta2").await;
    let other = unique_namespace(&inv.client, "capi-other").await;
    cluster(&inv.client, &other, "plain", "v1beta2").await;

    // Off (the default): both registered, no warning.
    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], ""));
    let out = apply_ok(&tf).replace('│', "");
    assert!(diagnostics(&out, "Warning", SKIPPED).is_empty(), "{out}");
    for name in ["capi", "plain"] {
        assert!(inv.sc(&ns, name).await.is_some(), "{name} registered");
    }

    // On: the profile with a Cluster is skipped, named with its Cluster, and deregistered; the other stays.
    inv.rewrite(&tf, &bridge(&ns, &[&ns], ON));
    let out = apply_ok(&tf).replace('│', "");
    let warning = flat(one_diagnostic(&out, "Warning", SKIPPED));
    assert!(
        warning.contains(&format!(
            "- {ns}/capi (not registered): Cluster {ns}/capi (cluster.x-k8s.io)"
        )),
        "{warning}"
    );
    assert!(
        !warning.contains(&format!("{ns}/plain (")) && !warning.contains("lonely"),
        "{warning}"
    );
    assert!(inv.sc(&ns, "capi").await.is_none(), "deregistered");
    assert!(inv.sc(&ns, "plain").await.is_some(), "the other kept");
    let values = tf.state_resources()["sveltos_cluster_inventory_bridge.x"]["values"].clone();
    let skipped = &values["skipped"][format!("{ns}/capi")];
    assert!(
        skipped["kept"] == false
            && skipped["cause"]
                .as_str()
                .is_some_and(|c| c.contains(&format!("Cluster {ns}/capi"))),
        "{values}"
    );
    assert_eq!(tf.plan(), 0, "the plan after the skip is empty");

    // Only v1beta1 served: read through it, the same plan.
    let mut crd = crds.get(&format!("clusters.{GROUP}")).await.unwrap();
    for v in &mut crd.spec.versions {
        (v.served, v.storage) = (v.name == "v1beta1", v.name == "v1beta1");
    }
    crd.metadata.managed_fields = None;
    crds.replace(&format!("clusters.{GROUP}"), &PostParams::default(), &crd)
        .await
        .expect("serving v1beta1 only");
    await_discovery(&inv.client, &[("v1beta1", true), ("v1beta2", false)]).await;
    assert_eq!(tf.plan(), 0, "still skipped, read through v1beta1");

    // An identity that may not list Clusters: an error naming the setting and the permission, nothing written.
    let kubeconfig = no_cluster_api_identity(&env, &env.kubeconfig, &inv.client, tf.dir()).await;
    inv.profile_with_secret(&ns, "new", &[], Json::Null, &kc)
        .await;
    let header = fixtures::provider_header(&kubeconfig, None);
    tf.write_main(&format!("{header}{}", bridge(&ns, &[&ns], ON)));
    let (ok, out) = run(
        &tf,
        &["apply", "-input=false", "-no-color", "-auto-approve"],
    );
    assert!(!ok, "{out}");
    let error = flat(&out.replace('│', ""));
    assert!(
        error.contains("forbidden (HTTP 403)")
            && error.contains(
                "skip_cluster_api_clusters = true lists Cluster API Clusters on the management cluster: grant the \
                 identity of the provider's connection (not the inventory block's) `list` on clusters.cluster.x-k8s.io"
            ),
        "{error}"
    );
    assert!(inv.sc(&ns, "new").await.is_none(), "nothing written");
    env.down();
}

#[tokio::test(flavor = "multi_thread")]
async fn without_cluster_api_the_setting_changes_nothing() {
    let inv = Inv::new().await;
    assert!(
        inv.client
            .list_api_group_resources(&format!("{GROUP}/v1beta2"))
            .await
            .is_err()
            && inv
                .client
                .list_api_group_resources(&format!("{GROUP}/v1beta1"))
                .await
                .is_err(),
        "the shared control plane serves no Cluster API"
    );
    let ns = unique_namespace(&inv.client, "no-capi").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    inv.profile_with_secret(&ns, "capi", &[], Json::Null, &kc)
        .await;
    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], ON));
    let out = apply_ok(&tf).replace('│', "");
    assert!(diagnostics(&out, "Warning", SKIPPED).is_empty(), "{out}");
    assert!(inv.sc(&ns, "capi").await.is_some(), "registered");
    assert_eq!(tf.plan(), 0);
    tf.destroy();
}

/// With an `inventory` block, only a Cluster on the management cluster skips a profile; one on the hub does not,
/// and the hub's identity needs no right on Cluster API (the inventory block's is one without any).
#[tokio::test(flavor = "multi_thread")]
async fn with_an_inventory_block_the_management_clusters_clusters_are_looked_for() {
    let env = TestEnv::start(true);
    support::hub::install_crd_on(&env);
    let mgmt = Inv::of(&env).await;
    let hub = Inv {
        client: env.member_client().await,
        kubeconfig: env.member_kubeconfig().to_path_buf(),
    };
    for client in [&mgmt.client, &hub.client] {
        Api::<CustomResourceDefinition>::all(client.clone())
            .create(&PostParams::default(), &cluster_crd(&[("v1beta2", true)]))
            .await
            .expect("creating the Cluster CRD");
        await_discovery(client, &[("v1beta2", true)]).await;
    }
    // The profiles' namespace exists on both clusters: SveltosClusters go to the profile's namespace.
    let ns = unique_namespace(&hub.client, "capi-hub").await;
    support::create_namespace(&mgmt.client, &ns, &[]).await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for name in ["on-hub", "on-mgmt"] {
        hub.profile_with_secret(&ns, name, &[], Json::Null, &kc)
            .await;
    }
    cluster(&hub.client, &ns, "on-hub", "v1beta2").await;
    cluster(&mgmt.client, &ns, "on-mgmt", "v1beta2").await;

    let tf = Tf::new(&Cli::tofu());
    let reader = no_cluster_api_identity(&env, &hub.kubeconfig, &hub.client, tf.dir()).await;
    let inventory = format!(
        "{ON}\n  inventory {{\n    config_path = {}\n  }}",
        fixtures::hcl_string(&reader.display().to_string())
    );
    mgmt.rewrite(&tf, &bridge(&ns, &[&ns], &inventory));
    let out = apply_ok(&tf).replace('│', "");
    let warning = flat(one_diagnostic(&out, "Warning", SKIPPED));
    assert!(
        warning.contains(&format!(
            "- {ns}/on-mgmt (not registered): Cluster {ns}/on-mgmt (cluster.x-k8s.io)"
        )) && !warning.contains(&format!("{ns}/on-hub (")),
        "{warning}"
    );
    assert!(
        mgmt.sc(&ns, "on-hub").await.is_some(),
        "a hub Cluster skips nothing"
    );
    assert!(mgmt.sc(&ns, "on-mgmt").await.is_none(), "skipped");
    assert_eq!(tf.plan(), 0, "the plan after the skip is empty");
    env.down();
}
