//! `sveltos_cluster_inventory_bridge` end to end: a real kube-apiserver with our CRDs, driven by the real CLIs.
//! Covers the seed scenario, the Event Framework recipe's pitfalls, drift in plan, convergence on apply,
//! ownership safety, import, "changed since plan", and that credentials never leave Secrets.

use std::{collections::BTreeMap, path::Path};

use k8s_openapi::{ByteString, api::core::v1::Secret};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value as Json, json};
use support::{Cli, TestEnv, Tf, fixtures, unique_namespace};
use tfsveltos::api::{ClusterProfile, SveltosCluster, SveltosClusterSpec, keys};

const CANARY: &str = "canary-bridge-token-51d0e2";

struct Fx {
    client: kube::Client,
    kubeconfig: String,
}

impl Fx {
    async fn new() -> Self {
        let env = TestEnv::get();
        Fx {
            client: env.client().await,
            kubeconfig: env.kubeconfig.display().to_string(),
        }
    }

    async fn profile(&self, ns: &str, name: &str, labels: &[(&str, &str)], status: Json) {
        support::inventory::create_profile(&self.client, ns, name, "test", labels, status).await;
    }

    async fn delete_profile(&self, ns: &str, name: &str) {
        let api: Api<ClusterProfile> = Api::namespaced(self.client.clone(), ns);
        api.delete(name, &DeleteParams::default()).await.unwrap();
    }

    async fn secret(&self, ns: &str, name: &str, labels: &[(&str, &str)], data: &[(&str, &str)]) {
        let api: Api<Secret> = Api::namespaced(self.client.clone(), ns);
        let s = fixtures::secret(ns, name, labels, data);
        let pp = PatchParams::apply("test-setup").force();
        let mut body = serde_json::to_value(&s).unwrap();
        body["apiVersion"] = "v1".into();
        body["kind"] = "Secret".into();
        api.patch(name, &pp, &Patch::Apply(body)).await.unwrap();
    }

    async fn sc(&self, ns: &str, name: &str) -> Option<SveltosCluster> {
        Api::<SveltosCluster>::namespaced(self.client.clone(), ns)
            .get_opt(name)
            .await
            .unwrap()
    }

    async fn secret_data(&self, ns: &str, name: &str) -> Option<BTreeMap<String, ByteString>> {
        Api::<Secret>::namespaced(self.client.clone(), ns)
            .get_opt(name)
            .await
            .unwrap()
            .map(|s| s.data.unwrap_or_default())
    }

    fn tf(&self, cli: &Cli, body: &str) -> Tf {
        let tf = Tf::new(cli);
        tf.write_main(&format!(
            "{}{body}",
            fixtures::provider_header(Path::new(&self.kubeconfig), None)
        ));
        tf
    }
}

fn labels_of(sc: &SveltosCluster) -> BTreeMap<String, String> {
    sc.metadata.labels.clone().unwrap_or_default()
}

/// The seed scenario and the lifecycle (add, rotate, out-of-band edit and delete, remove, destroy) with one CLI.
async fn lifecycle(cli: Cli) {
    let fx = Fx::new().await;
    let a = unique_namespace(&fx.client, "bra").await;
    let b = unique_namespace(&fx.client, "brb").await;
    let creds = unique_namespace(&fx.client, "brc").await;
    let kc1 = fixtures::unreachable_kubeconfig("token-one");
    // Same profile name in two namespaces; label values that break unquoted templates.
    fx.profile(
        &a,
        "c1",
        &[("enabled", "true"), ("empty", ""), ("env", "prod")],
        Json::Null,
    )
    .await;
    fx.profile(&b, "c1", &[("env", "dev")], Json::Null).await;
    // Seed format: Secret next to the profile, key `config`.
    fx.secret(
        &a,
        "c1-kubeconfig",
        &[(keys::CLUSTER_PROFILE_LABEL, "c1")],
        &[("config", &kc1)],
    )
    .await;
    // KEP format: Secret in another namespace pointing back with the namespace label, key `Config`.
    fx.secret(
        &creds,
        "b-c1",
        &[
            (keys::CLUSTER_PROFILE_LABEL, "c1"),
            (keys::CLUSTER_PROFILE_NAMESPACE_LABEL, &b),
        ],
        &[("Config", &kc1)],
    )
    .await;
    let tf = fx.tf(
        &cli,
        &format!(
            "resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name = \"{a}\"\n  namespaces = [\"{a}\", \"{b}\"]\n  extra_labels = {{ bridged = \"yes\" }}\n  credentials {{\n    secret_namespaces = [\"{creds}\"]\n  }}\n}}\n"
        ),
    );
    // The sources this test never changes: the bridge only reads them, so their versions stay as they are.
    let source_versions = async || {
        let secret = Api::<Secret>::namespaced(fx.client.clone(), &creds)
            .get("b-c1")
            .await
            .unwrap();
        let profile = Api::<ClusterProfile>::namespaced(fx.client.clone(), &b)
            .get("c1")
            .await
            .unwrap();
        (
            secret.metadata.resource_version,
            profile.metadata.resource_version,
        )
    };
    let sources_before = source_versions().await;
    assert_eq!(tf.plan(), 2, "{}: first plan shows the clusters", cli.name);
    tf.apply();
    for ns in [&a, &b] {
        let sc = fx.sc(ns, "c1").await.expect("SveltosCluster written");
        assert_eq!(
            sc.spec.kubeconfig_name.as_deref(),
            Some("c1-sveltos-kubeconfig")
        );
        assert_eq!(sc.spec.kubeconfig_key_name.as_deref(), Some("kubeconfig"));
        assert_eq!(labels_of(&sc)[keys::BRIDGE_LABEL], a);
        assert_eq!(labels_of(&sc)["bridged"], "yes");
        // The Secret lives in the SveltosCluster's namespace, with identical bytes.
        let data = fx
            .secret_data(ns, "c1-sveltos-kubeconfig")
            .await
            .expect("Secret written");
        assert_eq!(data["kubeconfig"].0, fixtures::written(&kc1));
    }
    let sc = fx.sc(&a, "c1").await.unwrap();
    assert_eq!(labels_of(&sc)["enabled"], "true");
    assert_eq!(labels_of(&sc)["empty"], "");
    assert_eq!(tf.plan(), 0, "{}: second plan is empty", cli.name);

    // Sveltos writes its label and status: no diff.
    let scs: Api<SveltosCluster> = Api::namespaced(fx.client.clone(), &a);
    scs.patch(
        "c1",
        &PatchParams::default(),
        &Patch::Merge(
            json!({"metadata": {"labels": {keys::SVELTOS_K8S_VERSION_LABEL: "v1.37.2"}}}),
        ),
    )
    .await
    .unwrap();
    scs.patch_status(
        "c1",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"ready": true, "version": "v1.37.2"}})),
    )
    .await
    .unwrap();
    assert_eq!(
        tf.plan(),
        0,
        "{}: fields written by Sveltos never cause a diff",
        cli.name
    );

    // New profile shows up.
    fx.profile(&a, "c2", &[("env", "prod")], Json::Null).await;
    fx.secret(
        &a,
        "c2-kc",
        &[(keys::CLUSTER_PROFILE_LABEL, "c2")],
        &[("kubeconfig", &kc1)],
    )
    .await;
    assert_eq!(tf.plan(), 2, "{}: added profile", cli.name);
    tf.apply();
    assert!(fx.sc(&a, "c2").await.is_some());
    assert_eq!(tf.plan(), 0);

    // Rotation.
    let kc2 = fixtures::unreachable_kubeconfig("token-two");
    fx.secret(
        &a,
        "c1-kubeconfig",
        &[(keys::CLUSTER_PROFILE_LABEL, "c1")],
        &[("config", &kc2)],
    )
    .await;
    assert_eq!(tf.plan(), 2, "{}: rotated kubeconfig", cli.name);
    tf.apply();
    assert_eq!(
        fx.secret_data(&a, "c1-sveltos-kubeconfig").await.unwrap()["kubeconfig"].0,
        fixtures::written(&kc2)
    );
    assert_eq!(tf.plan(), 0);

    // Out-of-band edit of a label we own, and of the spec.
    scs.patch("c1", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"labels": {"env": "hacked"}}, "spec": {"kubeconfigName": "elsewhere", "paused": true}})))
        .await
        .unwrap();
    assert_eq!(tf.plan(), 2, "{}: out-of-band edit", cli.name);
    tf.apply();
    let sc = fx.sc(&a, "c1").await.unwrap();
    assert_eq!(labels_of(&sc)["env"], "prod");
    assert_eq!(
        sc.spec.kubeconfig_name.as_deref(),
        Some("c1-sveltos-kubeconfig")
    );
    assert_eq!(
        sc.spec.paused,
        Some(true),
        "a field the bridge does not manage is left to whoever set it"
    );
    assert_eq!(
        labels_of(&sc)[keys::SVELTOS_K8S_VERSION_LABEL],
        "v1.37.2",
        "Sveltos' label survives"
    );
    assert_eq!(tf.plan(), 0);

    // Out-of-band delete.
    Api::<SveltosCluster>::namespaced(fx.client.clone(), &b)
        .delete("c1", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(tf.plan(), 2, "{}: out-of-band delete", cli.name);
    tf.apply();
    assert!(fx.sc(&b, "c1").await.is_some());
    assert_eq!(tf.plan(), 0);

    // Removed profile.
    fx.delete_profile(&a, "c2").await;
    assert_eq!(tf.plan(), 2, "{}: removed profile", cli.name);
    tf.apply();
    assert!(fx.sc(&a, "c2").await.is_none());
    assert!(fx.secret_data(&a, "c2-sveltos-kubeconfig").await.is_none());
    assert_eq!(tf.plan(), 0);

    tf.destroy();
    for ns in [&a, &b] {
        assert!(fx.sc(ns, "c1").await.is_none());
        assert!(fx.secret_data(ns, "c1-sveltos-kubeconfig").await.is_none());
    }
    // Source objects untouched.
    assert!(fx.secret_data(&a, "c1-kubeconfig").await.is_some());
    assert_eq!(
        source_versions().await,
        sources_before,
        "{}: the bridge wrote to a source Secret or ClusterProfile",
        cli.name
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn lifecycle_tofu() {
    lifecycle(Cli::tofu()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn lifecycle_terraform_1_0_3() {
    lifecycle(Cli::terraform_1_0_3()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn lifecycle_terraform_on_path() {
    let Some(cli) = Cli::terraform_needed() else {
        return;
    };
    lifecycle(cli).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unmanaged_objects_are_never_touched_without_adopt() {
    let fx = Fx::new().await;
    let ns = unique_namespace(&fx.client, "own").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    fx.profile(&ns, "c1", &[], Json::Null).await;
    fx.profile(&ns, "mgmt", &[("tier", "gold")], Json::Null)
        .await;
    fx.secret(
        &ns,
        "s1",
        &[(keys::CLUSTER_PROFILE_LABEL, "c1")],
        &[("Config", &kc)],
    )
    .await;
    fx.secret(
        &ns,
        "s2",
        &[(keys::CLUSTER_PROFILE_LABEL, "mgmt")],
        &[("Config", &kc)],
    )
    .await;
    // Someone else's SveltosCluster with a colliding name, and an unrelated one.
    let api: Api<SveltosCluster> = Api::namespaced(fx.client.clone(), &ns);
    for name in ["mgmt", "unrelated"] {
        let mut sc = SveltosCluster::new(
            name,
            SveltosClusterSpec {
                kubeconfig_name: Some("theirs".into()),
                ..Default::default()
            },
        );
        sc.metadata.labels = Some(BTreeMap::from([
            ("owner".to_string(), "someone".to_string()),
            ("tier".to_string(), "gold".to_string()),
        ]));
        api.create(&PostParams::default(), &sc).await.unwrap();
    }
    let cli = Cli::tofu();
    let body = |adopt: bool| {
        format!(
            "resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name = \"own\"\n  namespaces = [\"{ns}\"]\n  adopt = {adopt}\n  strict = true\n}}\n"
        )
    };
    let tf = fx.tf(&cli, &body(false));
    let err = tf.run_err(&["apply", "-input=false", "-no-color", "-auto-approve"]);
    let err = support::inventory::flat(&err.replace('│', " "));
    assert!(
        err.contains(&format!(
            "SveltosCluster {ns}/mgmt was not created by this provider"
        )),
        "{err}"
    );
    assert!(err.contains("adopt"), "{err}");
    assert!(fx.sc(&ns, "c1").await.is_none(), "nothing written on error");
    assert!(
        fx.secret_data(&ns, "c1-sveltos-kubeconfig").await.is_none(),
        "nothing written on error"
    );
    assert_eq!(
        fx.sc(&ns, "mgmt")
            .await
            .unwrap()
            .spec
            .kubeconfig_name
            .as_deref(),
        Some("theirs")
    );
    // Adopt takes it over; the unrelated one stays untouched, also on destroy.
    let tf = fx.tf(&cli, &body(true));
    tf.apply();
    let mgmt = fx.sc(&ns, "mgmt").await.unwrap();
    assert_eq!(
        mgmt.spec.kubeconfig_name.as_deref(),
        Some("mgmt-sveltos-kubeconfig")
    );
    assert_eq!(labels_of(&mgmt)[keys::BRIDGE_LABEL], "own");
    assert_eq!(tf.plan(), 0);
    // After adoption the bridge alone owns what it sets: a label the profile drops is really removed.
    Api::<ClusterProfile>::namespaced(fx.client.clone(), &ns)
        .patch(
            "mgmt",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"tier": null}}})),
        )
        .await
        .unwrap();
    assert_eq!(tf.plan(), 2);
    tf.apply();
    assert!(!labels_of(&fx.sc(&ns, "mgmt").await.unwrap()).contains_key("tier"));
    assert_eq!(tf.plan(), 0);
    tf.destroy();
    assert!(fx.sc(&ns, "mgmt").await.is_none());
    let unrelated = fx.sc(&ns, "unrelated").await.expect("never deleted");
    assert_eq!(labels_of(&unrelated)["owner"], "someone");
}

/// Many profiles to bridge at once (more than the provider checks one GET at a time): collisions are found by
/// listing, for SveltosClusters and for Secrets, and adoption still takes the colliding objects over.
#[tokio::test(flavor = "multi_thread")]
async fn collisions_among_many_new_clusters_are_found() {
    let fx = Fx::new().await;
    let ns = unique_namespace(&fx.client, "many").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    let names: Vec<String> = (0..40).map(|i| format!("c{i:02}")).collect();
    for name in &names {
        fx.profile(&ns, name, &[], Json::Null).await;
        fx.secret(
            &ns,
            &format!("{name}-src"),
            &[(keys::CLUSTER_PROFILE_LABEL, name)],
            &[("Config", &kc)],
        )
        .await;
    }
    // Someone else's SveltosCluster at c07 and someone else's Secret at c31's bridged Secret name.
    Api::<SveltosCluster>::namespaced(fx.client.clone(), &ns)
        .create(
            &PostParams::default(),
            &SveltosCluster::new(
                "c07",
                SveltosClusterSpec {
                    kubeconfig_name: Some("theirs".into()),
                    ..Default::default()
                },
            ),
        )
        .await
        .unwrap();
    fx.secret(
        &ns,
        "c31-sveltos-kubeconfig",
        &[("owner", "someone")],
        &[("x", "y")],
    )
    .await;
    let cli = Cli::tofu();
    let body = |adopt: bool| {
        format!(
            "resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name = \"many\"\n  namespaces = [\"{ns}\"]\n  adopt = {adopt}\n  strict = true\n}}\n"
        )
    };
    let tf = fx.tf(&cli, &body(false));
    let err = tf.run_err(&["plan", "-input=false", "-no-color"]);
    let err = support::inventory::flat(&err.replace('│', " "));
    assert!(
        err.contains(&format!(
            "SveltosCluster {ns}/c07 was not created by this provider"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "Secret {ns}/c31-sveltos-kubeconfig was not created by this provider"
        )),
        "{err}"
    );
    let err = tf.run_err(&["apply", "-input=false", "-no-color", "-auto-approve"]);
    assert!(err.contains("adopt"), "{err}");
    assert!(
        fx.sc(&ns, "c00").await.is_none(),
        "nothing written on error"
    );
    assert_eq!(
        fx.secret_data(&ns, "c31-sveltos-kubeconfig").await.unwrap()["x"].0,
        b"y"
    );
    let tf = fx.tf(&cli, &body(true));
    tf.apply();
    assert_eq!(
        fx.sc(&ns, "c07")
            .await
            .unwrap()
            .spec
            .kubeconfig_name
            .as_deref(),
        Some("c07-sveltos-kubeconfig")
    );
    assert_eq!(
        fx.secret_data(&ns, "c31-sveltos-kubeconfig").await.unwrap()["kubeconfig"].0,
        fixtures::written(&kc)
    );
    assert_eq!(tf.plan(), 0);
    tf.destroy();
    assert!(fx.sc(&ns, "c07").await.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn credential_sources_and_consumer_filter() {
    let fx = Fx::new().await;
    let ns = unique_namespace(&fx.client, "src").await;
    let consumer_ns = unique_namespace(&fx.client, "cons").await;
    let other_ns = unique_namespace(&fx.client, "oth").await;
    Api::<k8s_openapi::api::core::v1::Namespace>::all(fx.client.clone())
        .patch(
            &consumer_ns,
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"labels": {keys::CONSUMER_NAMESPACE_LABEL: "sveltos"}}}),
            ),
        )
        .await
        .unwrap();
    let member = std::fs::read_to_string(TestEnv::get().member_kubeconfig()).unwrap();
    // KEP push model with a consumer: only the Secret in the consumer namespace counts.
    fx.profile(&ns, "kep", &[], Json::Null).await;
    fx.secret(
        &consumer_ns,
        "kep",
        &[
            (keys::CLUSTER_PROFILE_LABEL, "kep"),
            (keys::CLUSTER_PROFILE_NAMESPACE_LABEL, &ns),
        ],
        &[("Config", &member)],
    )
    .await;
    fx.secret(
        &other_ns,
        "kep-decoy",
        &[
            (keys::CLUSTER_PROFILE_LABEL, "kep"),
            (keys::CLUSTER_PROFILE_NAMESPACE_LABEL, &ns),
        ],
        &[("Config", &fixtures::unreachable_kubeconfig("decoy"))],
    )
    .await;
    // kubeconfig-secretreader access provider naming a Secret in the profile's namespace.
    fx.profile(
        &ns,
        "reader",
        &[],
        fixtures::secret_reader_status(&member, json!({"name": "reader-kc", "key": "value"})),
    )
    .await;
    fx.secret(&ns, "reader-kc", &[], &[("value", &member)])
        .await;
    let tf = fx.tf(
        &Cli::tofu(),
        &format!(
            "resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name = \"src\"\n  namespaces = [\"{ns}\"]\n  credentials {{\n    consumer = \"sveltos\"\n  }}\n}}\noutput \"clusters\" {{ value = sveltos_cluster_inventory_bridge.x.clusters }}\n"
        ),
    );
    tf.apply();
    for name in ["kep", "reader"] {
        let data = fx
            .secret_data(&ns, &format!("{name}-sveltos-kubeconfig"))
            .await
            .unwrap();
        assert_eq!(data["kubeconfig"].0, fixtures::written(&member), "{name}");
    }
    let out = tf.outputs_json();
    let clusters = &out["clusters"]["value"];
    assert_eq!(
        clusters[format!("{ns}/kep")]["credential_source"],
        format!("secret:{consumer_ns}/kep#Config")
    );
    assert_eq!(
        clusters[format!("{ns}/reader")]["credential_source"],
        format!("access-provider:kubeconfig-secretreader:{ns}/reader-kc#value")
    );
    // The bridged kubeconfig reaches the member cluster, which answers with its own identity.
    let data = fx.secret_data(&ns, "kep-sveltos-kubeconfig").await.unwrap();
    let path = tf.dir().join("member.kubeconfig");
    std::fs::write(&path, &data["kubeconfig"].0).unwrap();
    let env = TestEnv::get();
    let version = env.kubectl_at(&path, &["version", "-o", "json"]);
    assert!(version.contains("v1.37"), "{version}");
    assert_eq!(tf.plan(), 0);
    tf.destroy();
}

fn write_exec_plugin(dir: &Path, token: &str, expires_in_secs: i64) -> String {
    let script = dir.join("plugin.sh");
    support::write_executable(
        &script,
        &format!(
            "#!/bin/sh\nexp=$(date -u -d \"@$(( $(date +%s) + {expires_in_secs} ))\" +%Y-%m-%dT%H:%M:%SZ)\n\
             echo \"{{\\\"apiVersion\\\":\\\"client.authentication.k8s.io/v1\\\",\\\"kind\\\":\\\"ExecCredential\\\",\\\"status\\\":{{\\\"token\\\":\\\"{token}-$$\\\",\\\"expirationTimestamp\\\":\\\"$exp\\\"}}}}\"\n"
        ),
    );
    let providers = dir.join("providers.json");
    std::fs::write(
        &providers,
        json!({"providers": [{"name": "token-plugin", "execConfig": {"apiVersion": "client.authentication.k8s.io/v1",
            "command": script.display().to_string(), "provideClusterInfo": true}}]})
        .to_string(),
    )
    .unwrap();
    providers.display().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn exec_plugin_credentials_refresh_before_expiry() {
    let fx = Fx::new().await;
    let ns = unique_namespace(&fx.client, "exe").await;
    fx.profile(
        &ns,
        "c1",
        &[],
        json!({"accessProviders": [{"name": "token-plugin", "cluster": {"server": "https://127.0.0.1:6443"}}]}),
    )
    .await;
    let cli = Cli::tofu();
    let scratch = tempfile::tempdir().unwrap();
    let providers = write_exec_plugin(scratch.path(), CANARY, 3600);
    let body = |refresh: &str| {
        format!(
            "resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name = \"exe\"\n  namespaces = [\"{ns}\"]\n  credentials {{\n    exec_providers_file = \"{providers}\"\n    refresh_before = \"{refresh}\"\n    exec_providers = {{ \"token-plugin\" = {{ namespaces = [\"{ns}\"] }} }}\n  }}\n}}\n"
        )
    };
    let tf = fx.tf(&cli, &body("10m"));
    tf.apply();
    let data = fx.secret_data(&ns, "c1-sveltos-kubeconfig").await.unwrap();
    let kc = String::from_utf8(data["kubeconfig"].0.clone()).unwrap();
    assert!(
        kc.contains(CANARY) && kc.contains("https://127.0.0.1:6443"),
        "static kubeconfig from the plugin"
    );
    assert_eq!(
        tf.plan(),
        0,
        "a valid credential is reused, not re-minted on every plan"
    );
    // Expiring within refresh_before: plan shows a new credential, apply mints it.
    tf.write_main(
        &std::fs::read_to_string(tf.dir().join("main.tf"))
            .unwrap()
            .replace("\"10m\"", "\"2h\""),
    );
    assert_eq!(tf.plan(), 2);
    tf.apply();
    let data2 = fx.secret_data(&ns, "c1-sveltos-kubeconfig").await.unwrap();
    assert_ne!(
        data2["kubeconfig"].0, data["kubeconfig"].0,
        "a new token was minted"
    );
    // No credential in state.
    let state = std::fs::read_to_string(tf.dir().join("terraform.tfstate")).unwrap();
    assert!(!state.contains(CANARY), "token in state");
    tf.destroy();
}

#[tokio::test(flavor = "multi_thread")]
async fn canary_token_never_leaves_secrets() {
    let fx = Fx::new().await;
    let ns = unique_namespace(&fx.client, "can").await;
    let kc = fixtures::unreachable_kubeconfig(CANARY);
    fx.profile(&ns, "c1", &[("a", "b")], Json::Null).await;
    fx.secret(
        &ns,
        "src",
        &[(keys::CLUSTER_PROFILE_LABEL, "c1")],
        &[("Config", &kc)],
    )
    .await;
    let mut tf = fx.tf(
        &Cli::tofu(),
        &format!(
            "resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name = \"can\"\n  namespaces = [\"{ns}\"]\n}}\n"
        ),
    );
    tf.env("TF_LOG", "TRACE");
    let plan = tf.run(&["plan", "-input=false", "-no-color", "-out=tfplan"]);
    let apply = tf.run(&[
        "apply",
        "-input=false",
        "-no-color",
        "-auto-approve",
        "tfplan",
    ]);
    assert!(
        apply.status.success(),
        "{}",
        support::describe_output(&apply)
    );
    for out in [&plan, &apply] {
        let text = support::describe_output(out);
        assert!(
            text.contains("sveltos"),
            "TRACE logs include provider lines"
        );
        assert!(
            !text.contains(CANARY),
            "canary in CLI output or TF_LOG=TRACE logs"
        );
    }
    let plan_json = tf
        .json(&["show", "-json", "-no-color", "tfplan"])
        .to_string();
    assert!(!plan_json.contains(CANARY), "canary in plan JSON");
    let state = std::fs::read_to_string(tf.dir().join("terraform.tfstate")).unwrap();
    assert!(!state.contains(CANARY), "canary in state");
    let sc = TestEnv::get().kubectl(&["get", "sveltoscluster", "-n", &ns, "c1", "-o", "json"]);
    assert!(!sc.contains(CANARY), "canary in the SveltosCluster");
    let cms = TestEnv::get().kubectl(&["get", "configmaps,events", "-A", "-o", "json"]);
    assert!(!cms.contains(CANARY), "canary in a ConfigMap or Event");
    // Only in the bridged Secret (and the source).
    let data = fx.secret_data(&ns, "c1-sveltos-kubeconfig").await.unwrap();
    assert!(String::from_utf8_lossy(&data["kubeconfig"].0).contains(CANARY));
    tf.destroy();
}

#[tokio::test(flavor = "multi_thread")]
async fn import_then_plan_is_empty_and_apply_refuses_changes_since_plan() {
    let fx = Fx::new().await;
    let ns = unique_namespace(&fx.client, "imp").await;
    fx.profile(&ns, "c1", &[("x", "1")], Json::Null).await;
    fx.secret(
        &ns,
        "src",
        &[(keys::CLUSTER_PROFILE_LABEL, "c1")],
        &[("Config", &fixtures::unreachable_kubeconfig("a"))],
    )
    .await;
    let body = format!(
        "resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name = \"imp\"\n  namespaces = [\"{ns}\"]\n  extra_labels = {{ team = \"t\" }}\n  credentials {{\n    kubeconfig_keys = [\"Config\"]\n  }}\n}}\n"
    );
    let cli = Cli::tofu();
    let first = fx.tf(&cli, &body);
    first.apply();
    // A fresh working directory without state imports the bridge by name.
    let second = fx.tf(&cli, &body);
    second.import("sveltos_cluster_inventory_bridge.x", "imp");
    let out = second.run(&["plan", "-input=false", "-no-color", "-detailed-exitcode"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "import then plan is empty:\n{}",
        support::describe_output(&out)
    );
    // Plan, then the inventory changes, then apply of that plan stops without writing.
    second.run_ok(&["plan", "-input=false", "-no-color", "-out=tfplan"]);
    fx.secret(
        &ns,
        "src",
        &[(keys::CLUSTER_PROFILE_LABEL, "c1")],
        &[("Config", &fixtures::unreachable_kubeconfig("b"))],
    )
    .await;
    let before = fx.secret_data(&ns, "c1-sveltos-kubeconfig").await.unwrap();
    // The saved plan had no changes, so make one that has: add a profile, plan, then rotate before apply.
    fx.profile(&ns, "c2", &[], Json::Null).await;
    fx.secret(
        &ns,
        "src2",
        &[(keys::CLUSTER_PROFILE_LABEL, "c2")],
        &[("Config", &fixtures::unreachable_kubeconfig("c"))],
    )
    .await;
    second.run_ok(&["plan", "-input=false", "-no-color", "-out=tfplan2"]);
    fx.secret(
        &ns,
        "src2",
        &[(keys::CLUSTER_PROFILE_LABEL, "c2")],
        &[("Config", &fixtures::unreachable_kubeconfig("d"))],
    )
    .await;
    let err = second.run_err(&["apply", "-input=false", "-no-color", "tfplan2"]);
    // The CLI re-plans before apply and refuses the changed value (its "inconsistent final plan" check, naming
    // the cluster); should the change land after that re-plan, apply's own check reports "changed since plan".
    // Either way the cluster is named and nothing is written.
    assert!(
        err.contains(&format!("clusters[\"{ns}/c2\"]"))
            || err.contains(&format!("ClusterProfile {ns}/c2 changed since plan")),
        "{err}"
    );
    assert!(fx.sc(&ns, "c2").await.is_none(), "nothing written");
    assert_eq!(
        fx.secret_data(&ns, "c1-sveltos-kubeconfig").await.unwrap(),
        before
    );
    second.apply();
    assert_eq!(second.plan(), 0);
    second.destroy();
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_configuration_is_reported_with_attribute_paths() {
    let fx = Fx::new().await;
    let ns = unique_namespace(&fx.client, "bad").await;
    fx.profile(&ns, "c1", &[], Json::Null).await;
    fx.secret(
        &ns,
        "s1",
        &[(keys::CLUSTER_PROFILE_LABEL, "c1")],
        &[("Config", &fixtures::unreachable_kubeconfig("a"))],
    )
    .await;
    fx.secret(
        &ns,
        "s2",
        &[(keys::CLUSTER_PROFILE_LABEL, "c1")],
        &[("config", &fixtures::unreachable_kubeconfig("b"))],
    )
    .await;
    let cli = Cli::tofu();
    let tf = fx.tf(
        &cli,
        &format!(
            "resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name = \"bad\"\n  namespaces = [\"{ns}\"]\n  label_selector = \"env in prod\"\n  credentials {{\n    refresh_before = \"ten minutes\"\n  }}\n}}\n"
        ),
    );
    let err = tf.run_err(&["plan", "-input=false", "-no-color"]);
    assert!(
        err.contains("Invalid label selector") && err.contains("label_selector"),
        "{err}"
    );
    assert!(
        err.contains("Invalid duration") && err.contains("refresh_before"),
        "{err}"
    );
    let tf = fx.tf(
        &cli,
        &format!("resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name = \"bad\"\n  namespaces = [\"{ns}\"]\n  strict = true\n}}\n"),
    );
    let err = tf.run_err(&["plan", "-input=false", "-no-color"]);
    assert!(
        err.contains(&format!("{ns}/s1")) && err.contains(&format!("{ns}/s2")),
        "both Secrets named: {err}"
    );
    assert!(fx.sc(&ns, "c1").await.is_none());
}

/// The `kubeconfig-secretreader` extension's optional `context` member (upstream's semantics) selects the context
/// of the stored kubeconfig, whose user is the credential; without it, its current-context is used; a context that
/// does not exist is that profile's problem, named. The server is the access provider's, whatever the context.
#[tokio::test(flavor = "multi_thread")]
async fn secret_reader_context_selects_the_context() {
    let env = TestEnv::get();
    let inv = support::inventory::Inv::new().await;
    let ns = unique_namespace(&inv.client, "ctx").await;
    let member_text = std::fs::read_to_string(env.member_kubeconfig()).unwrap();
    let member: serde_json::Value = serde_saphyr::from_str(&member_text).unwrap();
    let stored = serde_json::json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [
            {"name": "m", "cluster": member["clusters"][0]["cluster"]},
            {"name": "d", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [
            {"name": "mu", "user": member["users"][0]["user"]},
            {"name": "du", "user": {"token": "decoy-token"}}],
        "contexts": [
            {"name": "decoy", "context": {"cluster": "d", "user": "du"}},
            {"name": "member", "context": {"cluster": "m", "user": "mu"}}],
        "current-context": "decoy",
    })
    .to_string();
    inv.secret(&ns, "stored", &[], &[("value", &stored)]).await;
    for (name, context) in [
        ("chosen", Some("member")),
        ("current", None),
        ("missing", Some("nope")),
    ] {
        let mut ext = serde_json::json!({"name": "stored", "key": "value"});
        if let Some(c) = context {
            ext["context"] = c.into();
        }
        let status = support::fixtures::secret_reader_status(&member_text, ext);
        inv.profile(&ns, name, &[], status).await;
    }
    let tf = inv.tf(&Cli::tofu(), &support::inventory::bridge(&ns, &[&ns], ""));
    let out = support::inventory::apply_ok(&tf);
    let written = |kc: &[u8]| -> serde_json::Value { serde_json::from_slice(kc).unwrap() };
    let member_server = member["clusters"][0]["cluster"]["server"].as_str().unwrap();
    let chosen = written(&inv.bridged_kubeconfig(&ns, "chosen").await.unwrap());
    assert_eq!(chosen["clusters"][0]["cluster"]["server"], member_server);
    assert_eq!(
        chosen["users"][0]["user"],
        written(&fixtures::written(&member_text))["users"][0]["user"]
    );
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("kc");
    std::fs::write(&f, chosen.to_string()).unwrap();
    env.kubectl_at(&f, &["get", "--raw", "/version"]);
    let current = written(&inv.bridged_kubeconfig(&ns, "current").await.unwrap());
    assert_eq!(current["users"][0]["user"]["token"], "decoy-token");
    assert_eq!(current["clusters"][0]["cluster"]["server"], member_server);
    assert!(inv.bridged_kubeconfig(&ns, "missing").await.is_none());
    let flat = support::inventory::flat(&out);
    assert!(
        flat.contains(&format!("{ns}/missing")) && flat.contains("no context of the name"),
        "{out}"
    );
    let clusters = support::inventory::state_clusters(&tf);
    assert_eq!(
        clusters[&format!("{ns}/chosen")]["credential_source"],
        "access-provider:kubeconfig-secretreader:".to_string() + &ns + "/stored#value@member"
    );
}
