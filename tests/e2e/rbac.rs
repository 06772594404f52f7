//! The minimal RBAC of the security guide (`examples/rbac/*.yaml`) is enough to run the bridge, and no more
//! than that: the manifests are applied as written (only the namespace names are changed), a ServiceAccount bound
//! by them gets a token from the TokenRequest API, and the bridge's whole lifecycle (plan, apply, a change, an
//! added and a removed cluster, destroy) and the data sources run with `tofu` under that identity, with every
//! credential source that needs a rule of its own (a labelled Secret with `consumer`, a `kubeconfig-secretreader`
//! Secret in `secret_reader_namespaces`). The same identity is then refused what the role does not grant.

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use serde_json::{Value as Json, json};
use support::{
    Cli, TestEnv, Tf, fixtures,
    inventory::{self, create_secret},
    unique_name, unique_namespace,
};
use tfsveltos::api::{ClusterProfile, SveltosCluster, SveltosClusterSpec, keys};

/// The example manifests, in the order they are applied.
const MANIFESTS: [&str; 5] = [
    "identity.yaml",
    "cluster-wide.yaml",
    "inventory-namespaces.yaml",
    "secret-reader-namespaces.yaml",
    "claim.yaml",
];

/// Namespaces of one run: where the identity lives, the two inventory namespaces, the secret-reader namespace,
/// and one the role says nothing about.
struct Names {
    identity: String,
    eu: String,
    us: String,
    vault: String,
    other: String,
}

/// `examples/rbac/<file>` with the example's namespace names replaced by this run's. Every name the example is
/// expected to use must be there (the test would otherwise silently grant something else).
fn manifest(file: &str, n: &Names) -> String {
    let path = support::repo_root().join("examples/rbac").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        text.contains("namespace: terraform\n"),
        "{file}: binds the ServiceAccount terraform/sveltos-bridge"
    );
    let mut out = text
        .replace(
            "namespace: terraform\n",
            &format!("namespace: {}\n", n.identity),
        )
        .replace("  name: terraform\n", &format!("  name: {}\n", n.identity));
    for (example, ours) in [
        ("fleet-eu", &n.eu),
        ("fleet-us", &n.us),
        ("cluster-credentials", &n.vault),
    ] {
        out = out.replace(
            &format!("namespace: {example}\n"),
            &format!("namespace: {ours}\n"),
        );
    }
    if file == "inventory-namespaces.yaml" {
        assert!(
            out.contains(&n.eu) && out.contains(&n.us),
            "{file}: binds fleet-eu and fleet-us"
        );
    }
    if file == "secret-reader-namespaces.yaml" {
        assert!(out.contains(&n.vault), "{file}: binds cluster-credentials");
    }
    out
}

async fn sveltos_cluster(admin: &kube::Client, ns: &str, name: &str) -> Option<SveltosCluster> {
    Api::<SveltosCluster>::namespaced(admin.clone(), ns)
        .get_opt(name)
        .await
        .unwrap()
}

async fn secret_bytes(admin: &kube::Client, ns: &str, name: &str, key: &str) -> Option<Vec<u8>> {
    Api::<Secret>::namespaced(admin.clone(), ns)
        .get_opt(name)
        .await
        .unwrap()
        .and_then(|s| s.data?.remove(key))
        .map(|b| b.0)
}

/// Asserts that `result` is the API server refusing the identity (HTTP 403).
fn assert_forbidden<T: std::fmt::Debug>(what: &str, result: Result<T, kube::Error>) {
    match result {
        Err(kube::Error::Api(s)) if s.code == 403 => {}
        other => panic!("{what}: expected HTTP 403 for the bridge's identity, got {other:?}"),
    }
}

fn credentials_block(vault: &str) -> String {
    format!(
        "  credentials {{\n    consumer                 = \"sveltos\"\n    secret_reader_namespaces = [\"{vault}\"]\n  }}\n"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_example_rbac_runs_the_whole_lifecycle_and_nothing_more() {
    let env = TestEnv::get();
    let admin = env.client().await;
    let n = Names {
        identity: unique_name("rbac-id"),
        eu: unique_namespace(&admin, "rbac-eu").await,
        us: unique_namespace(&admin, "rbac-us").await,
        vault: unique_namespace(&admin, "rbac-vault").await,
        other: unique_namespace(&admin, "rbac-other").await,
    };
    // The eu namespace is a consumer namespace: its labelled Secrets count with consumer = "sveltos".
    Api::<Namespace>::all(admin.clone())
        .patch(
            &n.eu,
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"labels": {keys::CONSUMER_NAMESPACE_LABEL: "sveltos"}}}),
            ),
        )
        .await
        .unwrap();

    // The example RBAC, applied with kubectl as an operator would.
    let tf = Tf::new(&Cli::tofu());
    for file in MANIFESTS {
        let path = tf.dir().join(file);
        std::fs::write(&path, manifest(file, &n)).unwrap();
        env.kubectl(&["apply", "-f", &path.display().to_string()]);
    }
    // A token for the ServiceAccount (TokenRequest API), and a kubeconfig that uses nothing else.
    let token = env.kubectl(&[
        "create",
        "token",
        "sveltos-bridge",
        "-n",
        &n.identity,
        "--duration",
        "1h",
    ]);
    let token = token.trim();
    assert!(!token.is_empty(), "kubectl create token printed no token");
    let kubeconfig = tf.dir().join("bridge.kubeconfig");
    std::fs::write(
        &kubeconfig,
        support::kubeconfig_with_token(&env.kubeconfig, token),
    )
    .unwrap();
    let bridge = support::client_for(&kubeconfig).await;

    // The inventory: a labelled Secret next to a profile in the consumer namespace; a kubeconfig-secretreader
    // provider naming a Secret in the secret-reader namespace.
    let kc_eu = fixtures::unreachable_kubeconfig("rbac-eu-token");
    let kc_us = fixtures::unreachable_kubeconfig("rbac-us-token");
    inventory::create_profile(&admin, &n.eu, "c1", "test", &[("env", "prod")], Json::Null).await;
    create_secret(
        &admin,
        &n.eu,
        "c1-kc",
        &[(keys::CLUSTER_PROFILE_LABEL, "c1")],
        &[("Config", &kc_eu)],
    )
    .await;
    inventory::create_profile(
        &admin,
        &n.us,
        "c2", "test",
        &[("env", "prod")],
        json!({"accessProviders": [{"name": keys::SECRET_READER_PROVIDER, "cluster": {"server": "https://127.0.0.1:1",
            "extensions": [{"name": keys::EXEC_EXTENSION, "extension": {"name": "c2-kc", "namespace": n.vault, "key": "value"}}]}}]}),
    )
    .await;
    create_secret(&admin, &n.vault, "c2-kc", &[], &[("value", &kc_us)]).await;
    create_secret(
        &admin,
        &n.other,
        "unrelated",
        &[],
        &[("password", "not for the bridge")],
    )
    .await;

    let bridge_name = unique_name("rbac");
    let creds = credentials_block(&n.vault);
    let (eu, us) = (&n.eu, &n.us);
    tf.write_main(&format!(
        "{header}\
resource \"sveltos_cluster_inventory_bridge\" \"fleet\" {{
  name         = \"{bridge_name}\"
  namespaces   = [\"{eu}\", \"{us}\"]
  extra_labels = {{ \"managed-by\" = \"terraform\" }}
{creds}}}

data \"sveltos_clusterprofiles\" \"all\" {{
  namespaces = [\"{eu}\", \"{us}\"]
{creds}}}

data \"sveltos_clusterprofile\" \"c1\" {{
  namespace = \"{eu}\"
  name      = \"c1\"
{creds}}}

data \"sveltos_clusters\" \"bridged\" {{
  bridge     = sveltos_cluster_inventory_bridge.fleet.name
  namespaces = [\"{eu}\", \"{us}\"]
}}

output \"sources\" {{
  value = {{ for p in data.sveltos_clusterprofiles.all.cluster_profiles : p.id => p.credential_source }}
}}

output \"c1_ready\" {{
  value = data.sveltos_clusterprofile.c1.ready_to_bridge
}}

output \"bridged\" {{
  value = [for c in data.sveltos_clusters.bridged.clusters : c.id if c.owned]
}}
",
        header = fixtures::provider_header(&kubeconfig, None)
    ));

    // Plan and apply: both clusters registered, each kubeconfig copied byte for byte.
    assert_eq!(tf.plan(), 2, "the first plan registers the clusters");
    tf.apply();
    for (ns, name, kc) in [(eu, "c1", &kc_eu), (us, "c2", &kc_us)] {
        let sc = sveltos_cluster(&admin, ns, name)
            .await
            .expect("SveltosCluster written");
        let labels = sc.metadata.labels.unwrap_or_default();
        assert_eq!(labels[keys::BRIDGE_LABEL], bridge_name);
        assert_eq!(labels["managed-by"], "terraform");
        let copied = secret_bytes(
            &admin,
            ns,
            &format!("{name}-sveltos-kubeconfig"),
            "kubeconfig",
        )
        .await;
        assert_eq!(copied, Some(fixtures::written(kc)), "{ns}/{name}");
    }
    let out = tf.outputs_json();
    assert_eq!(
        out["sources"]["value"][format!("{eu}/c1")],
        format!("secret:{eu}/c1-kc#Config")
    );
    assert_eq!(
        out["sources"]["value"][format!("{us}/c2")],
        format!(
            "access-provider:kubeconfig-secretreader:{}/c2-kc#value",
            n.vault
        )
    );
    assert_eq!(out["c1_ready"]["value"], true);
    let mut bridged: Vec<String> = serde_json::from_value(out["bridged"]["value"].clone()).unwrap();
    bridged.sort();
    assert_eq!(bridged, vec![format!("{eu}/c1"), format!("{us}/c2")]);
    assert_eq!(tf.plan(), 0, "a second plan is empty");

    // A change in the inventory: a label of c1.
    Api::<ClusterProfile>::namespaced(admin.clone(), eu)
        .patch(
            "c1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"env": "staging"}}})),
        )
        .await
        .unwrap();
    assert_eq!(tf.plan(), 2, "the label change shows in plan");
    tf.apply();
    let sc = sveltos_cluster(&admin, eu, "c1").await.unwrap();
    assert_eq!(sc.metadata.labels.unwrap_or_default()["env"], "staging");

    // A cluster added, then removed.
    inventory::create_profile(&admin, eu, "c3", "test", &[], Json::Null).await;
    create_secret(
        &admin,
        eu,
        "c3-kc",
        &[(keys::CLUSTER_PROFILE_LABEL, "c3")],
        &[("config", &kc_eu)],
    )
    .await;
    assert_eq!(tf.plan(), 2, "the added profile shows in plan");
    tf.apply();
    assert!(sveltos_cluster(&admin, eu, "c3").await.is_some());
    Api::<ClusterProfile>::namespaced(admin.clone(), eu)
        .delete("c3", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(tf.plan(), 2, "the removed profile shows in plan");
    tf.apply();
    assert!(sveltos_cluster(&admin, eu, "c3").await.is_none());
    assert!(
        secret_bytes(&admin, eu, "c3-sveltos-kubeconfig", "kubeconfig")
            .await
            .is_none()
    );
    assert_eq!(tf.plan(), 0);

    // Not admin: the same identity is refused what the role does not grant.
    assert_forbidden(
        "GET of a Secret by name outside the inventory and secret-reader namespaces",
        Api::<Secret>::namespaced(bridge.clone(), &n.other)
            .get("unrelated")
            .await,
    );
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("not-the-claim".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    assert_forbidden(
        "creating a ConfigMap in an inventory namespace",
        Api::<ConfigMap>::namespaced(bridge.clone(), eu)
            .create(&PostParams::default(), &cm)
            .await,
    );
    let mut foreign = SveltosCluster::new(
        "planted",
        SveltosClusterSpec {
            kubeconfig_name: Some("planted".into()),
            ..Default::default()
        },
    );
    foreign.metadata.namespace = Some(n.other.clone());
    assert_forbidden(
        "creating a SveltosCluster outside the inventory namespaces",
        Api::<SveltosCluster>::namespaced(bridge.clone(), &n.other)
            .create(&PostParams::default(), &foreign)
            .await,
    );
    assert_forbidden(
        "writing the inventory (a ClusterProfile)",
        Api::<ClusterProfile>::namespaced(bridge.clone(), eu)
            .patch(
                "c1",
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
            )
            .await,
    );
    assert_forbidden(
        "deleting a Secret the bridge did not write",
        Api::<Secret>::namespaced(bridge.clone(), &n.vault)
            .delete("c2-kc", &DeleteParams::default())
            .await,
    );
    assert_forbidden(
        "reading RBAC objects",
        Api::<k8s_openapi::api::rbac::v1::ClusterRole>::all(bridge.clone())
            .list(&Default::default())
            .await,
    );

    // A profile in a namespace without the inventory RoleBinding: plan stops with the API server's refusal,
    // naming the object, and nothing is written there.
    inventory::create_profile(&admin, &n.other, "c9", "test", &[], Json::Null).await;
    create_secret(
        &admin,
        &n.other,
        "c9-kc",
        &[(keys::CLUSTER_PROFILE_LABEL, "c9")],
        &[("config", &kc_eu)],
    )
    .await;
    let unbound = Tf::new(&Cli::tofu());
    unbound.write_main(&format!(
        "{}resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name       = \"{}\"\n  namespaces = [\"{}\"]\n}}\n",
        fixtures::provider_header(&kubeconfig, None),
        unique_name("rbac-unbound"),
        n.other
    ));
    let err = unbound.run_err(&["apply", "-input=false", "-no-color", "-auto-approve"]);
    assert!(
        err.contains("HTTP 403") && err.contains(&format!("{}/c9", n.other)),
        "{err}"
    );
    assert!(sveltos_cluster(&admin, &n.other, "c9").await.is_none());

    // Destroy: everything the bridge wrote is gone; the sources are untouched.
    tf.destroy();
    for (ns, name) in [(eu, "c1"), (us, "c2")] {
        assert!(
            sveltos_cluster(&admin, ns, name).await.is_none(),
            "{ns}/{name}"
        );
        assert!(
            secret_bytes(
                &admin,
                ns,
                &format!("{name}-sveltos-kubeconfig"),
                "kubeconfig"
            )
            .await
            .is_none(),
            "{ns}/{name}"
        );
    }
    assert!(secret_bytes(&admin, eu, "c1-kc", "Config").await.is_some());
    assert!(
        secret_bytes(&admin, &n.vault, "c2-kc", "value")
            .await
            .is_some()
    );
}
