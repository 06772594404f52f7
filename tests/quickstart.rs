//! The quickstart example's `tofu test` (examples/quickstart/quickstart.tftest.hcl) runs against the local control
//! plane with an inventory in the demo's formats.

mod support;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use support::{Cli, TestEnv, Tf, fixtures, unique_namespace};
use tfsveltos::api::{ClusterProfile, keys};

#[tokio::test(flavor = "multi_thread")]
async fn quickstart_tofu_test_passes() {
    let env = TestEnv::get();
    let client = env.client().await;
    let a = unique_namespace(&client, "qsa").await;
    let b = unique_namespace(&client, "qsb").await;
    let member = std::fs::read(env.member_kubeconfig()).unwrap();
    for (ns, name) in [(&a, "cluster-1"), (&b, "cluster-2")] {
        let p = fixtures::cluster_profile(ns, name, "demo", &[]);
        Api::<ClusterProfile>::namespaced(client.clone(), ns)
            .create(&PostParams::default(), &p)
            .await
            .unwrap();
        let s = fixtures::secret(
            ns,
            &format!("{name}-kc"),
            &[(keys::CLUSTER_PROFILE_LABEL, name)],
            &[("Config", &member)],
        );
        Api::<Secret>::namespaced(client.clone(), ns)
            .create(&PostParams::default(), &s)
            .await
            .unwrap();
    }
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
