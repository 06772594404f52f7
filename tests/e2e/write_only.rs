//! Write-only hub credentials end to end: a canary hub token given through `inventory.token_wo`, fed from a
//! variable marked `ephemeral`, reaches the hub (a recording proxy in front of the test environment's member
//! cluster, which holds the inventory) at plan and apply, and is in none of the state file, the saved plan file
//! (unzipped), `show -json` of the plan and of the state, and the TRACE logs of plan, apply and destroy; with
//! OpenTofu and with Terraform 1.11. Terraform 1.0.3, which lacks the write-only capability, gets a clear error
//! where the configuration uses a write-only attribute, and works as before where it does not.

use std::path::Path;

use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use serde_json::Value as Json;
use support::{
    Cli, TestEnv, Tf, fixtures,
    inventory::{self, create_secret},
    unique_name, unique_namespace,
};
use tfsveltos::api::{SveltosCluster, keys};

/// The places a secret must never be found in after a run, with what each holds.
fn assert_absent(canary: &str, what: &str, text: &str) {
    assert!(
        !text.contains(canary),
        "the write-only canary is in {what} ({} bytes)",
        text.len()
    );
}

/// Every file of a saved plan (a zip archive), concatenated.
fn unzipped(plan: &Path) -> String {
    let out = std::process::Command::new("unzip")
        .arg("-p")
        .arg(plan)
        .output()
        .expect("running unzip");
    assert!(out.status.success(), "unzip -p {}", plan.display());
    assert!(!out.stdout.is_empty());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn read(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Bytes of TRACE log scanned for the canary in this test binary.
static TRACE_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A run with `TF_LOG=trace` into `log` (in the working directory): its stdout and the log.
fn traced(tf: &Tf, log: &str, args: &[&str]) -> String {
    let out = tf
        .command(args)
        .env("TF_LOG", "trace")
        .env("TF_LOG_PATH", tf.dir().join(log))
        .output()
        .expect("running the CLI");
    assert!(
        out.status.success(),
        "{} {args:?} failed:\n{}",
        tf.cli.name,
        support::describe_output(&out)
    );
    let log = read(&tf.dir().join(log));
    assert!(
        log.contains("[TRACE]"),
        "{}: no TRACE log in {} bytes",
        tf.cli.name,
        log.len()
    );
    TRACE_BYTES.fetch_add(log.len(), std::sync::atomic::Ordering::SeqCst);
    format!("{}{log}", String::from_utf8_lossy(&out.stdout))
}

async fn canary_never_stored(cli: &Cli) {
    let _writing = support::hub::writing().await;
    let env = TestEnv::get();
    support::hub::install_crd(env);
    let mgmt = env.client().await;
    let hub = env.member_client().await;
    let ns = unique_namespace(&hub, "wo").await;
    support::create_namespace(&mgmt, &ns, &[]).await;
    inventory::create_profile(&hub, &ns, "c1", "hub", &[], Json::Null).await;
    create_secret(
        &hub,
        &ns,
        "c1-kubeconfig",
        &[(keys::CLUSTER_PROFILE_LABEL, "c1")],
        &[("config", &fixtures::unreachable_kubeconfig("member-token"))],
    )
    .await;
    // The hub: a proxy that records the Authorization headers it receives and forwards with its own client.
    let proxy = support::fault_proxy::FaultProxy::start(hub).await;
    let canary = unique_name("wo-canary-hub-token");

    let mut tf = Tf::new(cli);
    tf.env("TF_VAR_hub_token", &canary);
    tf.write_main(&format!(
        "{header}\
         variable \"hub_token\" {{\n  type      = string\n  ephemeral = true\n}}\n\
         resource \"sveltos_cluster_inventory_bridge\" \"hub\" {{\n  name       = \"{ns}\"\n  namespaces = [\"{ns}\"]\n  \
         inventory {{\n    host     = \"{url}\"\n    token_wo = var.hub_token\n  }}\n}}\n",
        header = fixtures::provider_header(&env.kubeconfig, None),
        url = proxy.url(),
    ));

    let plan_out = traced(
        &tf,
        "plan.log",
        &["plan", "-input=false", "-no-color", "-out=tfplan"],
    );
    assert!(
        plan_out.contains(&format!("{ns}/c1")),
        "{}: the hub's profile is not planned",
        cli.name
    );
    let bearer = format!("Bearer {canary}");
    assert!(
        proxy.authorizations().iter().any(|a| a == &bearer),
        "{}: the plan did not reach the hub with the write-only token",
        cli.name
    );
    assert_absent(&canary, "the plan run and its TRACE log", &plan_out);
    assert_absent(
        &canary,
        "the saved plan file",
        &unzipped(&tf.dir().join("tfplan")),
    );
    let plan_json = tf.run_ok(&["show", "-json", "-no-color", "tfplan"]);
    assert_absent(&canary, "show -json of the plan", &plan_json);
    let plan_json: Json = serde_json::from_str(&plan_json).unwrap();
    let after = &plan_json["resource_changes"][0]["change"]["after"]["inventory"];
    let inventory = if after.is_array() { &after[0] } else { after };
    assert_eq!(inventory["host"], proxy.url(), "{}: {after}", cli.name);
    assert!(inventory["token_wo"].is_null(), "{}: {after}", cli.name);

    let requests_before_apply = proxy.authorizations().len();
    let apply_out = traced(
        &tf,
        "apply.log",
        &["apply", "-input=false", "-no-color", "tfplan"],
    );
    assert_absent(&canary, "the apply run and its TRACE log", &apply_out);
    assert!(
        proxy.authorizations()[requests_before_apply..]
            .iter()
            .any(|a| a == &bearer),
        "{}: apply did not read the hub with the write-only token",
        cli.name
    );
    let sc = Api::<SveltosCluster>::namespaced(mgmt.clone(), &ns)
        .get_opt("c1")
        .await
        .unwrap();
    assert!(
        sc.is_some(),
        "{}: the hub's profile was not bridged",
        cli.name
    );

    let state_file = read(&tf.dir().join("terraform.tfstate"));
    assert_absent(&canary, "the state file", &state_file);
    assert!(
        state_file.contains("token_wo"),
        "the state lists the attribute (null)"
    );
    let state_json = tf.run_ok(&["show", "-json", "-no-color"]);
    assert_absent(&canary, "show -json of the state", &state_json);

    // A refresh and plan again: no change (the write-only value is not compared with anything stored).
    assert_eq!(tf.plan(), 0, "{}: a change after apply", cli.name);

    // Destroy removes what the bridge owns on the management cluster; the hub is not read.
    let destroy_out = traced(
        &tf,
        "destroy.log",
        &["destroy", "-input=false", "-no-color", "-auto-approve"],
    );
    assert_absent(&canary, "the destroy run and its TRACE log", &destroy_out);
    assert!(
        Api::<Secret>::namespaced(mgmt, &ns)
            .get_opt("c1-sveltos-kubeconfig")
            .await
            .unwrap()
            .is_none()
    );
    assert_absent(
        &canary,
        "the state file after destroy",
        &read(&tf.dir().join("terraform.tfstate")),
    );
    eprintln!(
        "{}: the hub saw the write-only token in {} of {} requests; not in state, plan file, show -json or {} bytes \
         of TRACE logs",
        cli.version(),
        proxy
            .authorizations()
            .iter()
            .filter(|a| *a == &bearer)
            .count(),
        proxy.authorizations().len(),
        TRACE_BYTES.swap(0, std::sync::atomic::Ordering::SeqCst)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_only_hub_token_is_never_stored_tofu() {
    canary_never_stored(&Cli::tofu()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_only_hub_token_is_never_stored_terraform() {
    let Some(cli) = Cli::terraform_needed() else {
        return;
    };
    canary_never_stored(&cli).await;
}

/// A stored credential and its write-only twin together are a configuration error at the write-only path,
/// reported by `validate` (no cluster is contacted).
#[test]
fn a_credential_and_its_write_only_twin_conflict() {
    let env = TestEnv::get();
    let tf = Tf::new(&Cli::tofu());
    tf.write_main(&format!(
        "{}resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name = \"x\"\n  inventory {{\n    host     = \"https://127.0.0.1:1\"\n    token    = \"a\"\n    token_wo = \"b\"\n  }}\n}}\n",
        fixtures::provider_header(&env.kubeconfig, None)
    ));
    let err = tf.run_err(&["validate", "-no-color"]);
    assert!(err.contains("Conflicting inventory credentials"), "{err}");
    assert!(
        err.contains("token_wo = \"b\""),
        "the CLI quotes the write-only line: {err}"
    );
}

/// Terraform 1.0.3 does not know write-only attributes: a configuration setting one is refused with a clear
/// error at its path (it would store the value), and a configuration that does not keeps working.
#[tokio::test(flavor = "multi_thread")]
async fn terraform_1_0_3_refuses_write_only_attributes_only_where_they_are_used() {
    let _writing = support::hub::writing().await;
    let env = TestEnv::get();
    support::hub::install_crd(env);
    let mgmt = env.client().await;
    let hub = env.member_client().await;
    let ns = unique_namespace(&hub, "wo-old").await;
    support::create_namespace(&mgmt, &ns, &[]).await;
    inventory::create_profile(&hub, &ns, "c1", "hub", &[], Json::Null).await;
    let proxy = support::fault_proxy::FaultProxy::start(hub).await;
    let cli = Cli::terraform_1_0_3();
    let bridge = |attr: &str| {
        format!(
            "{}resource \"sveltos_cluster_inventory_bridge\" \"hub\" {{\n  name       = \"{ns}\"\n  namespaces = [\"{ns}\"]\n  inventory {{\n    host = \"{}\"\n    {attr} = \"old-cli-token\"\n  }}\n}}\n",
            fixtures::provider_header(&env.kubeconfig, None),
            proxy.url()
        )
    };
    let tf = Tf::new(&cli);
    tf.write_main(&bridge("token_wo"));
    let err = tf.run_err(&["plan", "-input=false", "-no-color"]);
    assert!(
        err.contains("Write-only attribute not supported by this Terraform version"),
        "{err}"
    );
    assert!(err.contains("inventory.token_wo is write-only"), "{err}");
    assert!(
        err.contains("token_wo = \"old-cli-token\""),
        "the CLI quotes the line: {err}"
    );
    assert_eq!(proxy.requests(), 0, "the hub was contacted");

    let tf = Tf::new(&cli);
    tf.write_main(&bridge("token"));
    assert_eq!(
        tf.plan(),
        2,
        "the stored token still works with Terraform 1.0.3"
    );
    assert!(
        proxy
            .authorizations()
            .iter()
            .any(|a| a == "Bearer old-cli-token"),
        "the hub was read with the stored token"
    );
}
