//! The quickstart example's `tofu test` (examples/quickstart/quickstart.tftest.hcl) runs against the local control
//! plane with the demo's inventory (scripts/demo): a Secret next to its profile in the seed format (key `config`),
//! a KEP push-format Secret (key `Config`) in a namespace labelled as the `sveltos` consumer's, and a
//! `kubeconfig-secretreader` access provider naming a Secret. The quickstart sets no `credentials` block, so this
//! is also the test of the defaults a new user gets. (scripts/test also runs scripts/demo itself.)

use serde_json::json;
use support::{Cli, TestEnv, Tf, inventory::Inv, unique_namespace};
use tfsveltos::api::keys;

#[tokio::test(flavor = "multi_thread")]
async fn quickstart_tofu_test_passes_on_the_demo_inventory() {
    let env = TestEnv::get();
    let inv = Inv::new().await;
    let a = unique_namespace(&inv.client, "qsa").await;
    let b = unique_namespace(&inv.client, "qsb").await;
    let consumer_ns = unique_namespace(&inv.client, "qsinv").await;
    inv.label_namespace(&consumer_ns, keys::CONSUMER_NAMESPACE_LABEL, "sveltos")
        .await;
    let member = String::from_utf8(std::fs::read(env.member_kubeconfig()).unwrap()).unwrap();

    // team-a/cluster-1: seed format, next to its profile.
    inv.profile(&a, "cluster-1", &[("env", "prod")], json!(null))
        .await;
    inv.secret(
        &a,
        "cluster-1-kubeconfig",
        &[(keys::CLUSTER_PROFILE_LABEL, "cluster-1")],
        &[("config", &member)],
    )
    .await;
    // team-b/cluster-2: KEP push format, in the consumer namespace.
    inv.profile(&b, "cluster-2", &[("env", "staging")], json!(null))
        .await;
    inv.secret(
        &consumer_ns,
        &format!("{b}-cluster-2"),
        &[
            (keys::CLUSTER_PROFILE_LABEL, "cluster-2"),
            (keys::CLUSTER_PROFILE_NAMESPACE_LABEL, &b),
        ],
        &[("Config", &member)],
    )
    .await;
    // team-b/cluster-3: a kubeconfig-secretreader access provider.
    inv.secret(&b, "cluster-3-access", &[], &[("value", &member)])
        .await;
    inv.profile(
        &b,
        "cluster-3",
        &[("env", "prod")],
        json!({"accessProviders": [{"name": "kubeconfig-secretreader", "cluster": {
            "server": "https://127.0.0.1:1",
            "extensions": [{"name": "client.authentication.k8s.io/exec",
                            "extension": {"name": "cluster-3-access", "key": "value"}}]}}]}),
    )
    .await;

    let tf = Tf::new(&Cli::tofu());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/quickstart");
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".tf") || name.ends_with(".tftest.hcl") {
            tf.write_file(&name, &std::fs::read_to_string(e.path()).unwrap());
        }
    }
    let out = tf.run_ok(&[
        "test",
        "-no-color",
        &format!("-var=kubeconfig={}", env.kubeconfig.display()),
        &format!("-var=namespaces=[\"{a}\",\"{b}\"]"),
    ]);
    assert!(out.contains("2 passed, 0 failed"), "{out}");
    // `tofu test` destroys what it applied.
    let left = env.kubectl(&[
        "get",
        "sveltoscluster",
        "-A",
        "-l",
        "sveltos.clusterinventory.io/bridge=quickstart",
        "-o",
        "name",
    ]);
    assert!(left.trim().is_empty(), "left behind: {left}");
}
