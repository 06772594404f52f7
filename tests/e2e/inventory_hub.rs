//! The `inventory` block end to end: the test environment's second control plane acts as the inventory hub
//! (ClusterProfiles and their credential Secrets live there), SveltosClusters and their Secrets are written on
//! the management cluster. Apply, drift and destroy through `tofu`; the hub's own request counters
//! (`apiserver_request_total` from its `/metrics`) show that nothing is ever written there.

use std::{collections::BTreeMap, path::Path};

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value as Json, json};
use support::{
    Cli, TestEnv, Tf, fixtures,
    inventory::{self, create_secret},
    unique_name, unique_namespace, write_executable,
};
use tfsveltos::api::{ClusterProfile, SveltosCluster, keys};

/// Resources whose writes on the hub would mean the provider wrote to the inventory.
const INVENTORY_RESOURCES: [&str; 4] = [
    "clusterprofiles",
    "secrets",
    "namespaces",
    "sveltosclusters",
];

/// Write requests a server has served so far, per `(verb, resource)`, from its `apiserver_request_total`.
fn write_counts(env: &TestEnv, kubeconfig: &Path) -> BTreeMap<(String, String), f64> {
    let text = env.kubectl_at(kubeconfig, &["get", "--raw", "/metrics"]);
    let label = |line: &str, name: &str| -> String {
        let key = format!("{name}=\"");
        line.find(&key)
            .map(|i| &line[i + key.len()..])
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_default()
            .to_string()
    };
    let mut out = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| l.starts_with("apiserver_request_total{"))
    {
        let verb = label(line, "verb");
        if matches!(verb.as_str(), "GET" | "LIST" | "WATCH" | "WATCHLIST") {
            continue;
        }
        let count: f64 = line
            .rsplit(' ')
            .next()
            .and_then(|c| c.parse().ok())
            .unwrap_or_default();
        *out.entry((verb, label(line, "resource"))).or_insert(0.0) += count;
    }
    out
}

/// The writes between two [`write_counts`] to the resources in `resources`.
fn writes_between(
    before: &BTreeMap<(String, String), f64>,
    after: &BTreeMap<(String, String), f64>,
    resources: &[&str],
) -> BTreeMap<(String, String), f64> {
    after
        .iter()
        .filter(|((_, r), _)| resources.contains(&r.as_str()))
        .map(|(k, n)| (k.clone(), n - before.get(k).copied().unwrap_or_default()))
        .filter(|(_, d)| *d > 0.0)
        .collect()
}

/// How many LISTs of ClusterProfiles a server has served.
fn profile_lists(env: &TestEnv, kubeconfig: &Path) -> f64 {
    let text = env.kubectl_at(kubeconfig, &["get", "--raw", "/metrics"]);
    text.lines()
        .filter(|l| {
            l.starts_with("apiserver_request_total{")
                && l.contains("verb=\"LIST\"")
                && l.contains("resource=\"clusterprofiles\"")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

fn quoted(p: &Path) -> String {
    fixtures::hcl_string(&p.display().to_string())
}

/// Inventory on the hub, SveltosClusters on the management cluster: apply, drift, destroy; the data sources read
/// the hub too; the hub is never written to.
#[tokio::test]
async fn inventory_on_a_hub_cluster() {
    // The hub's counters must move with this test's writes only (see `support::hub`).
    let _counting = support::hub::counting().await;
    let env = TestEnv::get();
    support::hub::install_crd(env);
    let mgmt = env.client().await;
    let hub = env.member_client().await;
    // The profiles' namespace exists on both clusters: SveltosClusters go to the profile's namespace.
    let ns = unique_namespace(&hub, "hub").await;
    support::create_namespace(&mgmt, &ns, &[]).await;

    let kc1 = fixtures::unreachable_kubeconfig("hub-token-one");
    let kc2 = fixtures::unreachable_kubeconfig("hub-token-two");
    // c1: a labelled credential Secret on the hub.
    inventory::create_profile(&hub, &ns, "c1", "hub", &[("env", "prod")], Json::Null).await;
    create_secret(
        &hub,
        &ns,
        "c1-kubeconfig",
        &[(keys::CLUSTER_PROFILE_LABEL, "c1")],
        &[("config", &kc1)],
    )
    .await;
    // c2: a kubeconfig-secretreader access provider naming a Secret on the hub.
    inventory::create_profile(
        &hub,
        &ns,
        "c2", "hub",
        &[("env", "dev")],
        json!({"accessProviders": [{"name": "kubeconfig-secretreader", "cluster": {"server": "https://127.0.0.1:1",
            "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": {"name": "c2-access", "key": "value"}}]}}]}),
    )
    .await;
    create_secret(&hub, &ns, "c2-access", &[], &[("value", &kc2)]).await;
    // A decoy on the management cluster, in the same namespace, with credentials: with the inventory block, the
    // management cluster's ClusterProfiles are not the inventory.
    inventory::create_profile(&mgmt, &ns, "decoy", "hub", &[], Json::Null).await;
    create_secret(
        &mgmt,
        &ns,
        "decoy-kubeconfig",
        &[(keys::CLUSTER_PROFILE_LABEL, "decoy")],
        &[("config", &kc1)],
    )
    .await;

    let member = quoted(env.member_kubeconfig());
    let tf = Tf::new(&Cli::tofu());
    tf.write_main(&format!(
        "{header}\
         resource \"sveltos_cluster_inventory_bridge\" \"hub\" {{\n  name = \"{ns}\"\n  namespaces = [\"{ns}\"]\n  inventory {{\n    config_path = {member}\n  }}\n}}\n\
         data \"sveltos_clusterprofiles\" \"hub\" {{\n  namespaces = [\"{ns}\"]\n  inventory {{\n    config_path = {member}\n  }}\n}}\n\
         data \"sveltos_clusterprofile\" \"c2\" {{\n  namespace = \"{ns}\"\n  name = \"c2\"\n  inventory {{\n    config_path = {member}\n  }}\n}}\n\
         output \"profiles\" {{ value = [for p in data.sveltos_clusterprofiles.hub.cluster_profiles : p.id] }}\n\
         output \"c2_source\" {{ value = data.sveltos_clusterprofile.c2.credential_source }}\n\
         output \"clusters\" {{ value = sveltos_cluster_inventory_bridge.hub.clusters }}\n",
        header = fixtures::provider_header(&env.kubeconfig, None),
    ));

    let hub_kc = env.member_kubeconfig();
    let hub_before = write_counts(env, hub_kc);
    let mgmt_before = write_counts(env, &env.kubeconfig);
    let hub_lists_before = profile_lists(env, hub_kc);

    assert_eq!(tf.plan(), 2, "the hub's profiles are planned");
    tf.apply();
    let scs: Api<SveltosCluster> = Api::namespaced(mgmt.clone(), &ns);
    let secrets: Api<Secret> = Api::namespaced(mgmt.clone(), &ns);
    for (name, kc) in [("c1", &kc1), ("c2", &kc2)] {
        let sc = scs
            .get(name)
            .await
            .unwrap_or_else(|e| panic!("SveltosCluster {name} on management: {e}"));
        assert_eq!(
            sc.metadata.labels.unwrap_or_default()[keys::BRIDGE_LABEL],
            ns
        );
        let s = secrets
            .get(&format!("{name}-sveltos-kubeconfig"))
            .await
            .unwrap();
        assert_eq!(
            s.data.unwrap_or_default()["kubeconfig"].0,
            fixtures::written(kc),
            "{name}"
        );
    }
    assert!(
        scs.get_opt("decoy").await.unwrap().is_none(),
        "the management cluster's profile was bridged"
    );
    let out = tf.outputs_json();
    assert_eq!(
        out["profiles"]["value"],
        json!([format!("{ns}/c1"), format!("{ns}/c2")]),
        "the data source lists the hub's profiles"
    );
    assert_eq!(
        out["c2_source"]["value"],
        format!("access-provider:kubeconfig-secretreader:{ns}/c2-access#value")
    );
    assert_eq!(
        out["clusters"]["value"][format!("{ns}/c1")]["credential_source"],
        format!("secret:{ns}/c1-kubeconfig#config")
    );
    assert_eq!(tf.plan(), 0, "no change after apply");
    assert!(
        profile_lists(env, hub_kc) > hub_lists_before,
        "the hub's ClusterProfiles were never listed"
    );

    // Drift on the hub: a profile's labels change, and the plan shows it.
    let hub_before_drift = write_counts(env, hub_kc);
    Api::<ClusterProfile>::namespaced(hub.clone(), &ns)
        .patch(
            "c1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"env": "staging"}}})),
        )
        .await
        .unwrap();
    let hub_after_drift = write_counts(env, hub_kc);
    let plan = tf.plan_json();
    let change = plan["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == "sveltos_cluster_inventory_bridge.hub")
        .unwrap()["change"]
        .clone();
    assert_eq!(change["actions"], json!(["update"]), "{change}");
    let key = format!("{ns}/c1");
    assert_eq!(change["before"]["clusters"][&key]["labels"]["env"], "prod");
    assert_eq!(
        change["after"]["clusters"][&key]["labels"]["env"],
        "staging"
    );
    tf.apply();
    let sc = scs.get("c1").await.unwrap();
    assert_eq!(sc.metadata.labels.unwrap_or_default()["env"], "staging");

    tf.destroy();
    for name in ["c1", "c2"] {
        assert!(
            scs.get_opt(name).await.unwrap().is_none(),
            "{name} left after destroy"
        );
        assert!(
            secrets
                .get_opt(&format!("{name}-sveltos-kubeconfig"))
                .await
                .unwrap()
                .is_none()
        );
    }
    // The hub's inventory is untouched.
    let hub_profiles = Api::<ClusterProfile>::namespaced(hub.clone(), &ns)
        .list(&Default::default())
        .await
        .unwrap();
    assert_eq!(hub_profiles.items.len(), 2);
    let hub_secrets = Api::<Secret>::namespaced(hub.clone(), &ns)
        .list(&Default::default())
        .await
        .unwrap();
    let mut names: Vec<String> = hub_secrets
        .items
        .iter()
        .filter_map(|s| s.metadata.name.clone())
        .collect();
    names.sort();
    assert_eq!(names, ["c1-kubeconfig", "c2-access"]);

    // Request counts: the provider wrote nothing on the hub (the test's own label change aside), and did write
    // on the management cluster (so the counters do count these writes).
    let hub_end = write_counts(env, hub_kc);
    let provider_on_hub: BTreeMap<_, _> =
        writes_between(&hub_before, &hub_before_drift, &INVENTORY_RESOURCES)
            .into_iter()
            .chain(writes_between(
                &hub_after_drift,
                &hub_end,
                &INVENTORY_RESOURCES,
            ))
            .collect();
    assert!(
        provider_on_hub.is_empty(),
        "writes on the hub: {provider_on_hub:?}"
    );
    let test_on_hub = writes_between(&hub_before_drift, &hub_after_drift, &INVENTORY_RESOURCES);
    assert!(
        test_on_hub.keys().any(|(_, r)| r == "clusterprofiles"),
        "the hub's counters missed the test's own write: {test_on_hub:?}"
    );
    let on_mgmt = writes_between(
        &mgmt_before,
        &write_counts(env, &env.kubeconfig),
        &INVENTORY_RESOURCES,
    );
    for resource in ["secrets", "sveltosclusters"] {
        assert!(
            on_mgmt.keys().any(|(_, r)| r == resource),
            "no {resource} writes counted on the management cluster: {on_mgmt:?}"
        );
    }
    eprintln!(
        "writes on the management cluster: {on_mgmt:?}; by the provider on the hub: {provider_on_hub:?}"
    );
}

/// A broken `inventory` block is reported at its attribute path, and nothing falls back to the provider's cluster.
#[tokio::test]
async fn a_broken_inventory_block_fails_at_its_path() {
    let env = TestEnv::get();
    let mgmt = env.client().await;
    let ns = unique_namespace(&mgmt, "hubbad").await;
    inventory::create_profile(&mgmt, &ns, "c1", "hub", &[], Json::Null).await;
    create_secret(
        &mgmt,
        &ns,
        "c1-kubeconfig",
        &[(keys::CLUSTER_PROFILE_LABEL, "c1")],
        &[("config", &fixtures::unreachable_kubeconfig("t"))],
    )
    .await;
    let tf = Tf::new(&Cli::tofu());
    tf.write_main(&format!(
        "{}resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name = \"{ns}\"\n  namespaces = [\"{ns}\"]\n  inventory {{\n    config_path = \"/nonexistent/tfsveltos-hub.kubeconfig\"\n  }}\n}}\n",
        fixtures::provider_header(&env.kubeconfig, None)
    ));
    let err = tf.run_err(&["plan", "-input=false", "-no-color"]);
    assert!(err.contains("Invalid inventory configuration"), "{err}");
    // The CLI quotes the configuration line of the attribute path.
    assert!(
        err.contains("config_path = \"/nonexistent/tfsveltos-hub.kubeconfig\""),
        "{err}"
    );
    assert!(
        Api::<SveltosCluster>::namespaced(mgmt, &ns)
            .get_opt("c1")
            .await
            .unwrap()
            .is_none()
    );
}

/// `KUBE_*` variables are the provider block's (the management cluster's): a `KUBE_TOKEN` in the environment of
/// the run never fills the `inventory` block, so the management token is never sent to the hub. The hub here is
/// a recording proxy in front of the member cluster, reached over plain HTTP with no credentials of its own.
#[tokio::test(flavor = "multi_thread")]
async fn kube_variables_never_reach_the_hub() {
    let _writing = support::hub::writing().await;
    let env = TestEnv::get();
    support::hub::install_crd(env);
    let mgmt = env.client().await;
    let hub = env.member_client().await;
    let ns = unique_namespace(&hub, "hubenv").await;
    support::create_namespace(&mgmt, &ns, &[]).await;
    inventory::create_profile(&hub, &ns, "c1", "hub", &[], Json::Null).await;
    create_secret(
        &hub,
        &ns,
        "c1-kubeconfig",
        &[(keys::CLUSTER_PROFILE_LABEL, "c1")],
        &[("config", &fixtures::unreachable_kubeconfig("hub-token"))],
    )
    .await;
    let proxy = support::fault_proxy::FaultProxy::start(hub).await;
    // The management cluster's real token, as a CI job would export it for the provider block.
    let admin: Json = serde_saphyr::from_slice(&std::fs::read(&env.kubeconfig).unwrap()).unwrap();
    let token = admin["users"][0]["user"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    let mut tf = Tf::new(&Cli::tofu());
    tf.env("KUBE_TOKEN", &token);
    tf.write_main(&format!(
        "{}resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name = \"{ns}\"\n  namespaces = [\"{ns}\"]\n  inventory {{\n    host = \"{}\"\n  }}\n}}\n",
        fixtures::provider_header(&env.kubeconfig, None),
        proxy.url()
    ));
    assert_eq!(tf.plan(), 2, "the hub's profile is planned");
    assert!(proxy.requests() > 0, "the hub was read through the proxy");
    let seen = proxy.authorizations();
    assert!(
        seen.iter().all(|a| !a.contains(&token)),
        "the management cluster's KUBE_TOKEN reached the hub"
    );
}

/// Issue 33 (L3): with an `inventory` block, a hub namespace's name never chooses the management namespace the
/// bridge writes to. Whoever may create a ClusterProfile (and its labelled Secret) in hub namespace `victim`,
/// which has a namespace of that name on the management cluster: a bridge with no `namespaces` is a configuration
/// error at `namespaces` (`validate`, `plan` and `apply` of the real CLI), nothing written; with a `namespaces`
/// list, the profile in the unlisted namespace leads to no write in management namespace `victim`.
#[tokio::test(flavor = "multi_thread")]
async fn a_hub_namespace_never_chooses_where_the_bridge_writes() {
    let _writing = support::hub::writing().await;
    let env = TestEnv::get();
    support::hub::install_crd(env);
    let mgmt = env.client().await;
    let hub = env.member_client().await;
    let listed = unique_namespace(&hub, "hub-listed").await;
    let victim = unique_namespace(&hub, "hub-victim").await;
    let kc = fixtures::unreachable_kubeconfig("hub-writer");
    for (ns, name) in [(&listed, "c1"), (&victim, "evil")] {
        support::create_namespace(&mgmt, ns, &[]).await;
        inventory::create_profile(&hub, ns, name, "hub", &[], Json::Null).await;
        let secret = format!("{name}-kubeconfig");
        let label = [(keys::CLUSTER_PROFILE_LABEL, name)];
        create_secret(&hub, ns, &secret, &label, &[("config", &kc)]).await;
    }
    let member = quoted(env.member_kubeconfig());
    let header = fixtures::provider_header(&env.kubeconfig, None);
    let bridge = |namespaces: &str| {
        format!(
            "{header}resource \"sveltos_cluster_inventory_bridge\" \"hub\" {{\n  name = \"{listed}\"\n{namespaces}  inventory {{\n    config_path = {member}\n  }}\n}}\n"
        )
    };
    let written_in = |ns: &str| {
        let (scs, secrets) = (
            Api::<SveltosCluster>::namespaced(mgmt.clone(), ns),
            Api::<Secret>::namespaced(mgmt.clone(), ns),
        );
        async move {
            let scs = scs.list(&Default::default()).await.unwrap().items;
            let secrets = secrets.list(&Default::default()).await.unwrap().items;
            scs.len() + secrets.len()
        }
    };

    // No namespaces (and an empty list): refused before anything is read or written.
    for namespaces in ["", "  namespaces = []\n"] {
        let tf = Tf::new(&Cli::tofu());
        tf.write_main(&bridge(namespaces));
        let (applied, out) = inventory::run(
            &tf,
            &["apply", "-auto-approve", "-input=false", "-no-color"],
        );
        assert_eq!(written_in(&victim).await, 0, "written into {victim}: {out}");
        assert_eq!(written_in(&listed).await, 0, "written into {listed}: {out}");
        assert!(!applied, "{out}");
        for args in [
            &["validate", "-no-color"][..],
            &["plan", "-input=false", "-no-color"],
        ] {
            let err = tf.run_err(args);
            assert!(
                err.contains("namespaces required with an inventory block"),
                "{args:?}: {err}"
            );
            assert!(
                err.contains("sveltos_cluster_inventory_bridge.hub"),
                "{err}"
            );
        }
    }

    // A namespaces list: only the listed namespace is bridged.
    let tf = Tf::new(&Cli::tofu());
    tf.write_main(&bridge(&format!("  namespaces = [\"{listed}\"]\n")));
    tf.apply();
    let c1 = Api::<SveltosCluster>::namespaced(mgmt.clone(), &listed);
    assert!(c1.get_opt("c1").await.unwrap().is_some(), "c1 not bridged");
    assert_eq!(written_in(&victim).await, 0, "written into {victim}");
    assert_eq!(tf.plan(), 0, "no change after apply");
    tf.destroy();
}

/// `inventory.exec.env` is marked sensitive: a plan prints `(sensitive value)` in its place and never the value,
/// while the plugin receives it (the token it answers from the variable reaches the hub, a recording proxy in front
/// of the member cluster).
#[tokio::test(flavor = "multi_thread")]
async fn inventory_exec_env_is_a_sensitive_value_in_plans() {
    let env = TestEnv::get();
    support::hub::install_crd(env);
    let mgmt = env.client().await;
    let hub = env.member_client().await;
    let ns = unique_namespace(&hub, "exec-env").await;
    support::create_namespace(&mgmt, &ns, &[]).await;
    inventory::create_profile(&hub, &ns, "c1", "hub", &[], Json::Null).await;
    let proxy = support::fault_proxy::FaultProxy::start(hub).await;
    let canary = unique_name("exec-env-canary");
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("hub-token");
    write_executable(
        &plugin,
        "#!/bin/sh
printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s\"}}' \"$HUB_TOKEN\"\n",
    );
    let tf = Tf::new(&Cli::tofu());
    tf.write_main(&format!(
        "{header}resource \"sveltos_cluster_inventory_bridge\" \"hub\" {{\n  name       = \"{ns}\"\n  \
         namespaces = [\"{ns}\"]\n  inventory {{\n    host = \"{url}\"\n    exec {{\n      \
         api_version = \"client.authentication.k8s.io/v1\"\n      command     = {command}\n      \
         env         = {{ HUB_TOKEN = \"{canary}\" }}\n    }}\n  }}\n}}\n",
        header = fixtures::provider_header(&env.kubeconfig, None),
        url = proxy.url(),
        command = fixtures::hcl_string(&plugin.display().to_string()),
    ));
    let out = tf.run_ok(&["plan", "-input=false", "-no-color"]);
    assert!(
        out.contains(&format!("{ns}/c1")),
        "the hub's profile is not planned:\n{out}"
    );
    assert!(
        proxy.authorizations().contains(&format!("Bearer {canary}")),
        "the plugin did not get its env: no request with its token"
    );
    assert!(
        out.lines().any(
            |l| l.trim_start().trim_start_matches("+ ").starts_with("env ")
                && l.trim_end().ends_with("= (sensitive value)")
        ),
        "no `env = (sensitive value)` line in the plan:\n{out}"
    );
    assert!(
        !out.contains(&canary),
        "the plan prints exec.env's value:\n{out}"
    );
}
