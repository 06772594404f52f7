//! The `sveltos_clusters` data source against a real control plane, driven by the real CLIs: the status a test
//! sets through the status subresource is reported, selection by bridge, namespaces and label selector, `owned`
//! by the bridge's own rule (a copied label, a copied mark or a recreated object is not ownership; the claim in
//! `claim_namespace` is read), the recorded credential expiry, the `check {}` example
//! failing (a warning) on a not-ready cluster and passing otherwise, configuration known only at apply, and the
//! error diagnostics (invalid filters, an unreachable cluster).

use std::collections::BTreeMap;

use k8s_openapi::{
    ByteString, api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value as Json, json};
use support::{Cli, TestEnv, Tf, unique_namespace};
use tfsveltos::api::{
    ClusterManager, ClusterProfile, ClusterProfileSpec, SveltosCluster, SveltosClusterSpec, keys,
};

const EXPIRY: &str = "2031-05-06T07:08:09Z";
const FAILURE: &str = "dial tcp 127.0.0.1:1: connect: connection refused";

fn kubeconfig() -> String {
    "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n\
     users:\n- name: u\n  user:\n    token: not-a-secret\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\n\
     current-context: c\n"
        .to_string()
}

fn header(env: &TestEnv) -> String {
    format!(
        "terraform {{\n  required_providers {{\n    sveltos = {{ source = \"{}\" }}\n  }}\n}}\n\
         provider \"sveltos\" {{\n  config_path = \"{}\"\n}}\n",
        support::PROVIDER_SOURCE,
        env.kubeconfig.display()
    )
}

/// CLIs that understand `check` blocks (Terraform >= 1.5, OpenTofu).
fn check_capable() -> Vec<Cli> {
    Cli::all()
        .into_iter()
        .filter(|c| c.name != "terraform-1.0.3")
        .collect()
}

async fn profile(client: &kube::Client, ns: &str, name: &str, labels: &[(&str, &str)]) {
    let mut p = ClusterProfile::new(
        name,
        ClusterProfileSpec {
            display_name: None,
            cluster_manager: ClusterManager {
                name: "test".into(),
            },
        },
    );
    p.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    Api::<ClusterProfile>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &p)
        .await
        .unwrap_or_else(|e| panic!("creating ClusterProfile {ns}/{name}: {e}"));
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(format!("{name}-kc")),
            labels: Some(BTreeMap::from([(
                keys::CLUSTER_PROFILE_LABEL.to_string(),
                name.to_string(),
            )])),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(
            "Config".to_string(),
            ByteString(kubeconfig().into_bytes()),
        )])),
        ..Default::default()
    };
    Api::<Secret>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap_or_else(|e| panic!("creating Secret {ns}/{name}-kc: {e}"));
}

/// A SveltosCluster not written by the bridge under test.
async fn foreign_cluster(client: &kube::Client, ns: &str, name: &str, labels: &[(&str, &str)]) {
    let mut sc = SveltosCluster::new(
        name,
        SveltosClusterSpec {
            kubeconfig_name: Some(format!("{name}-sveltos-kubeconfig")),
            kubeconfig_key_name: Some("kubeconfig".into()),
            paused: Some(true),
            ..Default::default()
        },
    );
    sc.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    Api::<SveltosCluster>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &sc)
        .await
        .unwrap_or_else(|e| panic!("creating SveltosCluster {ns}/{name}: {e}"));
}

/// Writes `status` through the status subresource, as sveltoscluster-manager does.
async fn set_status(client: &kube::Client, ns: &str, name: &str, status: Json) {
    Api::<SveltosCluster>::namespaced(client.clone(), ns)
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await
        .unwrap_or_else(|e| panic!("patching status of SveltosCluster {ns}/{name}: {e}"));
}

/// The shared control plane seeded (see [`seed`]) in fresh namespaces `<prefix>-…` and `<prefix>-other-…` for a
/// bridge named after the first: `(env, namespace, other namespace, bridge)`.
async fn seeded(prefix: &str) -> (&'static TestEnv, String, String, String) {
    let env = TestEnv::get();
    let client = env.client().await;
    let ns = unique_namespace(&client, prefix).await;
    let other = unique_namespace(&client, &format!("{prefix}-other")).await;
    let bridge = ns.clone();
    seed(env, &client, &ns, &other, &bridge).await;
    (env, ns, other, bridge)
}

/// Bridges `c1` (env=prod) and `c2` (env=dev) of `ns` with bridge `bridge` (using tofu), records an expiry on
/// `c1`'s Secret, and adds `ns/foreign` (env=prod, another bridge's label) and `other/plain` (no label).
async fn seed(env: &TestEnv, client: &kube::Client, ns: &str, other: &str, bridge: &str) {
    profile(client, ns, "c1", &[("env", "prod")]).await;
    profile(client, ns, "c2", &[("env", "dev")]).await;
    let tf = Tf::new(&Cli::tofu());
    tf.write_main(&format!(
        "{}\nresource \"sveltos_cluster_inventory_bridge\" \"b\" {{\n  name       = \"{bridge}\"\n  \
         namespaces = [\"{ns}\"]\n}}\n",
        header(env)
    ));
    tf.apply();
    // The bridge records an expiry for exec credentials; this records one on its Secret the same way.
    Api::<Secret>::namespaced(client.clone(), ns)
        .patch(
            "c1-sveltos-kubeconfig",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {keys::EXPIRES_ANNOTATION: EXPIRY}}})),
        )
        .await
        .expect("annotating the bridged Secret");
    foreign_cluster(
        client,
        ns,
        "foreign",
        &[(keys::BRIDGE_LABEL, "another-bridge"), ("env", "prod")],
    )
    .await;
    foreign_cluster(client, other, "plain", &[]).await;
    set_status(
        client,
        ns,
        "c1",
        json!({"ready": true, "connectionStatus": "Healthy", "version": "v1.37.2"}),
    )
    .await;
    set_status(
        client,
        ns,
        "c2",
        json!({"ready": false, "connectionStatus": "Down", "failureMessage": FAILURE, "connectionFailures": 3}),
    )
    .await;
}

fn by_id(list: &Json) -> BTreeMap<String, Json> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|c| (c["id"].as_str().unwrap_or_default().to_string(), c.clone()))
        .collect()
}

fn ids(list: &Json) -> Vec<String> {
    by_id(list).into_keys().collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn sveltos_clusters_reports_status_selection_and_ownership() {
    let (env, ns, other, bridge) = seeded("scl").await;

    let config = format!(
        r#"{header}
data "sveltos_clusters" "owned" {{
  bridge = "{bridge}"
}}

data "sveltos_clusters" "all" {{
  bridge     = "{bridge}"
  owned_only = false
  namespaces = ["{ns}", "{other}"]
}}

data "sveltos_clusters" "prod" {{
  bridge         = "{bridge}"
  owned_only     = false
  namespaces     = ["{ns}"]
  label_selector = "env=prod"
}}

data "sveltos_clusters" "anonymous" {{
  namespaces = ["{other}"]
}}

data "sveltos_clusters" "other_bridge" {{
  bridge     = "another-bridge"
  namespaces = ["{ns}", "{other}"]
}}

output "owned" {{
  value = data.sveltos_clusters.owned.clusters
}}

output "all" {{
  value = data.sveltos_clusters.all.clusters
}}

output "prod" {{
  value = data.sveltos_clusters.prod.clusters
}}

output "anonymous" {{
  value = data.sveltos_clusters.anonymous.clusters
}}

output "other_bridge" {{
  value = [for c in data.sveltos_clusters.other_bridge.clusters : c.id]
}}

output "id" {{
  value = data.sveltos_clusters.prod.id
}}
"#,
        header = header(env)
    );

    for cli in Cli::all() {
        let name = cli.name.clone();
        let tf = Tf::new(&cli);
        tf.write_main(&config);
        tf.apply();
        let out = tf.outputs_json();
        let get = |k: &str| out[k]["value"].clone();

        // By bridge name, in all namespaces: exactly the bridge's two clusters, with the status that was set.
        let owned = by_id(&get("owned"));
        assert_eq!(
            owned.keys().cloned().collect::<Vec<_>>(),
            vec![format!("{ns}/c1"), format!("{ns}/c2")],
            "{name}: selection by bridge"
        );
        let c1 = &owned[&format!("{ns}/c1")];
        assert_eq!(c1["name"], "c1", "{name}: {c1}");
        assert_eq!(c1["namespace"], ns.as_str());
        assert_eq!(c1["ready"], true, "{name}: {c1}");
        assert_eq!(c1["connection_status"], "Healthy");
        assert_eq!(c1["version"], "v1.37.2");
        assert_eq!(c1["failure_message"], Json::Null);
        assert_eq!(c1["paused"], false);
        assert_eq!(c1["owned"], true);
        assert_eq!(c1["credential_expires_at"], EXPIRY, "{name}: {c1}");
        assert_eq!(c1["labels"]["env"], "prod");
        assert_eq!(c1["labels"][keys::BRIDGE_LABEL], bridge.as_str());
        let c2 = &owned[&format!("{ns}/c2")];
        assert_eq!(c2["ready"], false, "{name}: {c2}");
        assert_eq!(c2["connection_status"], "Down");
        assert_eq!(c2["failure_message"], FAILURE);
        assert_eq!(c2["version"], Json::Null);
        assert_eq!(
            c2["credential_expires_at"],
            Json::Null,
            "{name}: no expiry recorded"
        );

        // owned_only = false over two namespaces: the foreign and the unlabelled cluster too, not owned.
        let all = by_id(&get("all"));
        let mut want = vec![
            format!("{ns}/c1"),
            format!("{ns}/c2"),
            format!("{ns}/foreign"),
            format!("{other}/plain"),
        ];
        want.sort();
        assert_eq!(all.keys().cloned().collect::<Vec<_>>(), want, "{name}");
        let foreign = &all[&format!("{ns}/foreign")];
        assert_eq!(
            foreign["owned"], false,
            "{name}: another bridge's label: {foreign}"
        );
        assert_eq!(foreign["ready"], false, "{name}: no status yet");
        assert_eq!(foreign["connection_status"], Json::Null);
        assert_eq!(foreign["paused"], true);
        assert_eq!(foreign["credential_expires_at"], Json::Null);
        assert_eq!(all[&format!("{other}/plain")]["owned"], false);
        assert_eq!(all[&format!("{ns}/c1")]["owned"], true);

        // Label selector.
        assert_eq!(
            ids(&get("prod")),
            vec![format!("{ns}/c1"), format!("{ns}/foreign")],
            "{name}: label_selector env=prod"
        );
        assert_eq!(
            get("id"),
            json!(format!(
                "bridge={bridge};owned_only=false;namespaces={ns};label_selector=env=prod"
            ))
        );

        // Without a bridge, ownership and expiry are not reported.
        let anonymous = get("anonymous");
        assert_eq!(ids(&anonymous), vec![format!("{other}/plain")], "{name}");
        assert_eq!(anonymous[0]["owned"], Json::Null);

        // A label is not ownership: no bridge named `another-bridge` ever applied (it has no claim), so it owns
        // nothing, not even the cluster carrying its label (nor anything of ours).
        assert_eq!(get("other_bridge"), json!([]), "{name}");

        assert_eq!(tf.plan(), 0, "{name}: reading again changes nothing");
    }
}

fn combined(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

const ASSERTION_FAILED: &str = "Check block assertion failed";

/// The attack: a tenant who can create SveltosClusters in the inventory's namespaces copies the bridge's label (and
/// the run mark of a bridged cluster) onto a cluster of its own, and deletes and recreates a bridged cluster with
/// the same labels and annotations. `sveltos_clusters` (and so a `check` built on it) reports neither as the
/// bridge's; the bridge's claim is read from its `claim_namespace`.
#[tokio::test(flavor = "multi_thread")]
async fn a_copied_label_or_mark_is_not_ownership() {
    let env = TestEnv::get();
    let client = env.client().await;
    let ns = unique_namespace(&client, "scl-forge").await;
    let claims = unique_namespace(&client, "scl-forge-claims").await;
    let bridge = ns.clone();
    for c in ["c1", "c2", "c3"] {
        profile(&client, &ns, c, &[]).await;
    }
    let tf = Tf::new(&Cli::tofu());
    tf.write_main(&format!(
        "{}\nresource \"sveltos_cluster_inventory_bridge\" \"b\" {{\n  name            = \"{bridge}\"\n  \
         namespaces      = [\"{ns}\"]\n  claim_namespace = \"{claims}\"\n}}\n",
        header(env)
    ));
    tf.apply();

    let api = Api::<SveltosCluster>::namespaced(client.clone(), &ns);
    let c1 = api.get("c1").await.expect("bridged c1");
    // A cluster of the tenant's, with c1's labels and annotations (its run mark included).
    let mut forged = SveltosCluster::new("forged", c1.spec.clone());
    forged.metadata.labels = c1.metadata.labels.clone();
    forged.metadata.annotations = c1.metadata.annotations.clone();
    api.create(&PostParams::default(), &forged)
        .await
        .expect("creating the forged cluster");
    // c2 deleted and recreated at its name with everything it carried.
    let c2 = api.get("c2").await.expect("bridged c2");
    recreate(&api, &c2).await;
    let recreated = api.get("c2").await.expect("recreated c2");
    assert_ne!(recreated.metadata.uid, c2.metadata.uid, "another object");

    let instance =
        tf.state_resources()["sveltos_cluster_inventory_bridge.b"]["values"]["instance_id"]
            .as_str()
            .expect("the bridge's instance id")
            .to_string();
    // Pinned to another instance, or to a namespace holding no claim: an error, not an empty list.
    let pinned = Tf::new(&Cli::tofu());
    for (claim_ns, id) in [(claims.as_str(), "0123"), ("default", instance.as_str())] {
        pinned.write_main(&format!(
            "{}\ndata \"sveltos_clusters\" \"p\" {{\n  bridge = \"{bridge}\"\n  claim_namespace = \"{claim_ns}\"\n  \
             instance_id = \"{id}\"\n}}\n",
            header(env)
        ));
        let err = pinned.run_err(&["plan", "-input=false", "-no-color"]);
        assert!(err.contains("Not this bridge's claim"), "{err}");
    }

    let reader = Tf::new(&Cli::tofu());
    reader.write_main(&format!(
        r#"{header}
data "sveltos_clusters" "owned" {{
  bridge          = "{bridge}"
  claim_namespace = "{claims}"
  instance_id     = "{instance}"
}}

data "sveltos_clusters" "all" {{
  bridge          = "{bridge}"
  claim_namespace = "{claims}"
  owned_only      = false
  namespaces      = ["{ns}"]
}}

data "sveltos_clusters" "wrong_claim_namespace" {{
  bridge     = "{bridge}"
  namespaces = ["{ns}"]
}}

output "owned" {{
  value = [for c in data.sveltos_clusters.owned.clusters : c.id]
}}

output "all" {{
  value = {{ for c in data.sveltos_clusters.all.clusters : c.id => c.owned }}
}}

output "wrong_claim_namespace" {{
  value = [for c in data.sveltos_clusters.wrong_claim_namespace.clusters : c.id]
}}
"#,
        header = header(env)
    ));
    let applied = reader.apply();
    assert!(
        applied.contains("No claim for this bridge"),
        "the wrong namespace is warned about:\n{applied}"
    );
    let out = reader.outputs_json();
    assert_eq!(
        out["owned"]["value"],
        json!([format!("{ns}/c1"), format!("{ns}/c3")]),
        "only what the bridge created and still exists as it created it"
    );
    assert_eq!(
        out["all"]["value"],
        json!({
            format!("{ns}/c1"): true,
            format!("{ns}/c2"): false,
            format!("{ns}/c3"): true,
            format!("{ns}/forged"): false,
        })
    );
    assert_eq!(
        out["wrong_claim_namespace"]["value"],
        json!([]),
        "no claim of that bridge in `default`: it owns nothing there"
    );

    // The bridge itself never takes the recreated c2 for its own, however many refreshes follow (its ledger
    // keeps a tombstone at the name), and a cluster it deregistered and a tenant recreated with the copied mark
    // is neither deleted nor reported as owned.
    let c3 = api.get("c3").await.expect("bridged c3");
    Api::<ClusterProfile>::namespaced(client.clone(), &ns)
        .delete("c3", &Default::default())
        .await
        .expect("deleting profile c3");
    tf.apply();
    recreate(&api, &c3).await;
    let tenants = |name: &str| {
        let api = api.clone();
        let name = name.to_string();
        async move {
            let sc = api.get(&name).await.expect("the tenant's cluster");
            (sc.metadata.uid, sc.metadata.resource_version)
        }
    };
    let before = (tenants("c2").await, tenants("c3").await);
    for _ in 0..2 {
        tf.apply();
    }
    assert_eq!(
        (tenants("c2").await, tenants("c3").await),
        before,
        "the tenant's objects are untouched"
    );
    let clusters =
        tf.state_resources()["sveltos_cluster_inventory_bridge.b"]["values"]["clusters"].clone();
    for c in ["c2", "c3"] {
        // (c2's Secret is still the bridge's; its SveltosCluster is not.)
        assert!(
            clusters
                .get(format!("{ns}/{c}"))
                .is_none_or(|e| e["sveltos_cluster"].is_null()),
            "{c}'s SveltosCluster is not the bridge's: {clusters}"
        );
    }
    assert!(clusters.get(format!("{ns}/c1")).is_some(), "{clusters}");
    reader.apply();
    let out = reader.outputs_json();
    assert_eq!(
        out["all"]["value"],
        json!({
            format!("{ns}/c1"): true,
            format!("{ns}/c2"): false,
            format!("{ns}/c3"): false,
            format!("{ns}/forged"): false,
        })
    );
}

/// Recreates `sc` (deleted by the bridge, or to be deleted here) at its name with its labels and annotations,
/// as a tenant who copied them would.
async fn recreate(api: &Api<SveltosCluster>, sc: &SveltosCluster) {
    let name = sc.metadata.name.clone().expect("a name");
    let _ = api.delete(&name, &Default::default()).await;
    let mut again = SveltosCluster::new(&name, sc.spec.clone());
    again.metadata.labels = sc.metadata.labels.clone();
    again.metadata.annotations = sc.metadata.annotations.clone();
    for _ in 0..50 {
        match api.create(&PostParams::default(), &again).await {
            Ok(_) => return,
            // The delete may not be finished yet.
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
    panic!("recreating {name}");
}

#[tokio::test(flavor = "multi_thread")]
async fn check_example_warns_on_a_not_ready_cluster_and_passes_otherwise() {
    let (env, ns, _, bridge) = seeded("scl-check").await;
    let client = env.client().await;
    let example = std::fs::read_to_string(
        support::repo_root().join("examples/data-sources/sveltos_clusters/check.tf.example"),
    )
    .expect("the check example");
    let tfvars = format!("bridge     = \"{bridge}\"\nnamespaces = [\"{ns}\"]\n");
    let clis = check_capable();
    assert!(!clis.is_empty(), "tofu is always there");

    for cli in &clis {
        let tf = Tf::new(cli);
        tf.write_main(&header(env));
        tf.write_file("check.tf", &example);
        tf.write_file("terraform.tfvars", &tfvars);
        for args in [
            &["plan", "-input=false", "-no-color"][..],
            &["apply", "-input=false", "-no-color", "-auto-approve"][..],
        ] {
            let out = tf.run(args);
            let text = combined(&out);
            let cmd = args[0];
            assert!(out.status.success(), "{}: {cmd}:\n{text}", cli.name);
            // The warning (wrapped by the CLI: compare with whitespace collapsed) names c2 and why, not c1.
            let warning = text
                .split_once(ASSERTION_FAILED)
                .map(|(_, w)| w.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_else(|| panic!("{}: {cmd} shows no failed check:\n{text}", cli.name));
            assert!(
                warning.contains(&format!("Not ready in Sveltos: {ns}/c2 ({FAILURE})"))
                    && !warning.contains(&format!("{ns}/c1")),
                "{}: {cmd} warns about the not-ready cluster only:\n{text}",
                cli.name
            );
        }
    }

    set_status(
        &client,
        &ns,
        "c2",
        json!({"ready": true, "connectionStatus": "Healthy", "failureMessage": null}),
    )
    .await;
    for cli in &clis {
        let tf = Tf::new(cli);
        tf.write_main(&header(env));
        tf.write_file("check.tf", &example);
        tf.write_file("terraform.tfvars", &tfvars);
        for args in [
            &["plan", "-input=false", "-no-color"][..],
            &["apply", "-input=false", "-no-color", "-auto-approve"][..],
        ] {
            let out = tf.run(args);
            let text = combined(&out);
            assert!(
                out.status.success()
                    && !text.contains(ASSERTION_FAILED)
                    && !text.contains("Warning: Check"),
                "{}: {}: every cluster is ready, the check passes:\n{text}",
                cli.name,
                args[0]
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn configuration_known_only_at_apply_is_read_at_apply() {
    let (env, ns, _, bridge) = seeded("scl-late").await;
    // terraform_data (Terraform >= 1.4, OpenTofu): its output is unknown until apply.
    let config = format!(
        r#"{header}
resource "terraform_data" "name" {{
  input = "{bridge}"
}}

data "sveltos_clusters" "late" {{
  bridge = terraform_data.name.output
}}

output "ids" {{
  value = [for c in data.sveltos_clusters.late.clusters : c.id]
}}
"#,
        header = header(env)
    );
    for cli in check_capable() {
        let tf = Tf::new(&cli);
        tf.write_main(&config);
        let plan = tf.run_ok(&["plan", "-input=false", "-no-color"]);
        assert!(
            plan.contains("known after apply"),
            "{}: the data source is read at apply:\n{plan}",
            cli.name
        );
        tf.apply();
        assert_eq!(
            tf.outputs_json()["ids"]["value"],
            json!([format!("{ns}/c1"), format!("{ns}/c2")]),
            "{}",
            cli.name
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_filters_and_an_unreachable_cluster_are_diagnostics() {
    let env = TestEnv::get();
    let cases = [
        (
            header(env),
            "data \"sveltos_clusters\" \"x\" {\n  label_selector = \"env in (a\"\n}\n",
            vec!["Invalid label selector", "label_selector = \"env in (a\""],
        ),
        (
            header(env),
            "data \"sveltos_clusters\" \"x\" {\n  owned_only = true\n}\n",
            vec!["owned_only needs bridge", "owned_only = true"],
        ),
        (
            header(env),
            "data \"sveltos_clusters\" \"x\" {\n  bridge = \"Not A Label\"\n}\n",
            vec!["Invalid bridge name", "bridge = \"Not A Label\""],
        ),
        (
            format!(
                "terraform {{\n  required_providers {{\n    sveltos = {{ source = \"{}\" }}\n  }}\n}}\n\
                 provider \"sveltos\" {{\n  host  = \"https://127.0.0.1:1\"\n  token = \"t\"\n  insecure = true\n}}\n",
                support::PROVIDER_SOURCE
            ),
            "data \"sveltos_clusters\" \"x\" {\n  bridge = \"fleet\"\n}\n",
            vec!["Cannot read SveltosClusters", "reachable"],
        ),
        // The member cluster has no SveltosCluster CRD.
        (
            format!(
                "terraform {{\n  required_providers {{\n    sveltos = {{ source = \"{}\" }}\n  }}\n}}\n\
                 provider \"sveltos\" {{\n  config_path = {}\n}}\n",
                support::PROVIDER_SOURCE,
                support::fixtures::hcl_string(&env.member_kubeconfig().display().to_string())
            ),
            "data \"sveltos_clusters\" \"x\" {}\n",
            vec![
                "Cannot read SveltosClusters",
                "SveltosCluster CRD is installed",
            ],
        ),
    ];
    for cli in Cli::all() {
        for (head, body, expect) in &cases {
            let tf = Tf::new(&cli);
            tf.write_main(&format!("{head}\n{body}"));
            let err = tf.run_err(&["plan", "-input=false", "-no-color"]);
            for e in expect {
                assert!(err.contains(e), "{}: expected {e:?} in:\n{err}", cli.name);
            }
        }
    }
}

/// The docs page documents every attribute and embeds both examples verbatim; the plain example validates with
/// every CLI (tests/plugin/docs.rs) and the `check` example with every CLI that has `check` blocks.
#[test]
fn docs_page_follows_the_schema_and_embeds_the_examples() {
    use tfsveltos::{provider::data_sources::sveltos_clusters, tfplugin::Type};
    let root = support::repo_root();
    let page = std::fs::read_to_string(root.join("docs/data-sources/clusters.md")).unwrap();
    let schema = sveltos_clusters::schema();
    let mut names: Vec<String> = schema
        .block
        .attributes
        .iter()
        .map(|a| a.name.clone())
        .collect();
    let Type::Object { attributes, .. } = sveltos_clusters::cluster_object_type() else {
        panic!("clusters elements are objects");
    };
    names.extend(attributes.keys().cloned());
    for n in names {
        assert!(
            page.contains(&format!("- `{n}` (")),
            "page does not document `{n}`"
        );
    }
    let dir = root.join("examples/data-sources/sveltos_clusters");
    let plain = std::fs::read_to_string(dir.join("data-source.tf")).unwrap();
    let check = std::fs::read_to_string(dir.join("check.tf.example")).unwrap();
    assert!(
        page.contains(plain.trim_end()),
        "page embeds data-source.tf"
    );
    assert!(
        page.contains(check.trim_end()),
        "page embeds check.tf.example"
    );
    let provider_tf = std::fs::read_to_string(root.join("examples/provider/provider.tf")).unwrap();
    for cli in check_capable() {
        let tf = Tf::new(&cli);
        tf.write_file("provider.tf", &provider_tf);
        tf.write_file("check.tf", &check);
        tf.run_ok(&["validate", "-no-color"]);
    }
}

/// More SveltosClusters than one LIST page holds (500): every one is reported, in order.
#[tokio::test(flavor = "multi_thread")]
async fn more_clusters_than_one_list_page_are_all_reported() {
    use futures::StreamExt;
    const N: usize = 520;
    let env = TestEnv::get();
    let client = env.client().await;
    let ns = unique_namespace(&client, "scl-page").await;
    futures::stream::iter(0..N)
        .for_each_concurrent(16, |i| {
            let (client, ns) = (client.clone(), ns.clone());
            async move {
                foreign_cluster(&client, &ns, &format!("c{i:04}"), &[("page", "yes")]).await;
            }
        })
        .await;
    let tf = Tf::new(&Cli::tofu());
    tf.write_main(&format!(
        r#"{header}
data "sveltos_clusters" "page" {{
  bridge         = "{ns}"
  owned_only     = false
  namespaces     = ["{ns}"]
  label_selector = "page=yes"
}}

output "ids" {{
  value = [for c in data.sveltos_clusters.page.clusters : c.id]
}}
"#,
        header = header(env)
    ));
    tf.apply();
    let got = tf.outputs_json()["ids"]["value"].clone();
    let want: Vec<String> = (0..N).map(|i| format!("{ns}/c{i:04}")).collect();
    assert_eq!(got, json!(want));
}
