//! `readiness_checks`, `liveness_checks` and `data` with the real sveltoscluster-manager: it evaluates the checks
//! the bridge writes (a readiness check holds the cluster not Ready until the resource it asks for exists; a
//! failing liveness check takes a Ready cluster `Down`), and what the server stores of them and of `data` is no
//! drift.

use std::time::Duration;

use serde_json::Value as Json;
use support::inventory::{Inv, apply_ok, bridge, flat, one_diagnostic};
use support::sveltos::{Sveltos, ready};
use support::{Cli, unique_namespace};

/// How long the manager may take to look at a cluster again: a hang guard, not a measurement (it reconciles every
/// SveltosCluster about once a minute, and at once when its spec changes).
const RECONCILE_DEADLINE: Duration = Duration::from_secs(300);

/// A check named `name` that passes when ConfigMap `ns/configmap` exists (the member cluster is the management
/// cluster), as the HCL expression of its JSON text, in the upstream CRD's field names.
fn configmap_check(name: &str, ns: &str, configmap: &str) -> String {
    format!(
        r#"jsonencode([{{
    name = "{name}"
    resourceSelectors = [{{ group = "", version = "v1", kind = "ConfigMap", namespace = "{ns}", name = "{configmap}" }}]
    condition = <<-EOT
      function evaluate()
        local hs = {{}}
        hs.pass = #resources == 1
        hs.message = "ConfigMap {configmap} missing"
        return hs
      end
    EOT
  }}])"#
    )
}

/// A readiness check of one cluster (`overrides[...].readiness_checks`, replacing the bridge-wide one that passes)
/// asking for a ConfigMap that is not there yet: apply (waiting for Ready) warns that this cluster alone is not
/// Ready, with the manager's failure naming the check, while the other cluster (the bridge-wide check) is Ready;
/// once the ConfigMap exists the manager marks the held cluster Ready. `data` (bridge-wide and per cluster) and the
/// checks are stored as written, and every plan is empty.
#[tokio::test(flavor = "multi_thread")]
async fn a_readiness_check_holds_the_cluster_until_it_passes() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let ns = unique_namespace(&inv.client, "readycheck").await;
    for name in ["c1", "c2"] {
        inv.profile_with_secret(&ns, name, &[], Json::Null, &sveltos.member_kubeconfig())
            .await;
    }
    create_configmap(&inv.client, &ns, "open").await;
    let args = format!(
        "  wait_for_ready = true\n  ready_timeout = \"15s\"\n  readiness_checks = {}\n  data = {{ region = \"eu-1\", \
         tier = \"silver\" }}\n  overrides = {{\n    \"{ns}/c1\" = {{\n      data = {{ tier = \"gold\" }}\n      \
         readiness_checks = {}\n    }}\n  }}",
        configmap_check("open", &ns, "open"),
        configmap_check("gate", &ns, "gate")
    );
    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], &args));
    let out = apply_ok(&tf);
    let warning = flat(one_diagnostic(&out, "Warning", "is not Ready"));
    assert!(
        warning.contains(&format!("{ns}/c1"))
            && warning.contains("cluster check gate failed")
            && warning.contains("ConfigMap gate missing"),
        "{warning}"
    );
    assert!(
        ready(&inv.client, &ns, "c2").await,
        "c2 (the bridge-wide check) not Ready"
    );
    let checks_of = |sc: Option<tfsveltos::api::SveltosCluster>| {
        let checks = sc
            .and_then(|sc| sc.spec.readiness_checks)
            .unwrap_or_default();
        checks.into_iter().map(|c| c.name).collect::<Vec<_>>()
    };
    assert_eq!(checks_of(inv.sc(&ns, "c2").await), ["open"]);
    let sc = inv.sc(&ns, "c1").await.expect("SveltosCluster c1");
    let data = sc.spec.data.clone().unwrap_or_default();
    assert_eq!(
        (data.get("region"), data.get("tier")),
        (Some(&"eu-1".to_string()), Some(&"gold".to_string()))
    );
    assert_eq!(
        checks_of(Some(sc)),
        ["gate"],
        "the override replaces the bridge-wide list"
    );
    assert_eq!(tf.plan(), 0, "the stored checks and data show as drift");

    create_configmap(&inv.client, &ns, "gate").await;
    sveltos
        .until(
            "the manager marking c1 Ready",
            RECONCILE_DEADLINE,
            || async { ready(&inv.client, &ns, "c1").await.then_some(()) },
        )
        .await;
    assert_eq!(tf.plan(), 0);
}

/// A liveness check that always fails, with `consecutive_failure_threshold = 1`: the cluster is Ready (no readiness
/// check), then the manager's next look runs the liveness check and sets `connectionStatus = Down` naming it; an
/// apply that changes the cluster and waits for Ready then warns that it is not.
#[tokio::test(flavor = "multi_thread")]
async fn a_failing_liveness_check_takes_the_cluster_down() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let ns = unique_namespace(&inv.client, "livecheck").await;
    inv.profile_with_secret(&ns, "c1", &[], Json::Null, &sveltos.member_kubeconfig())
        .await;
    let args = |extra: &str| {
        format!(
            "  wait_for_ready = true\n  ready_timeout = \"15s\"\n  consecutive_failure_threshold = 1\n  \
             liveness_checks = {}\n{extra}",
            configmap_check("alive", &ns, "never-there")
        )
    };
    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], &args("")));
    let out = apply_ok(&tf);
    assert!(!out.contains("is not Ready"), "{out}");
    let failure = sveltos
        .until("the manager taking c1 Down", RECONCILE_DEADLINE, || async {
            let sc = inv.sc(&ns, "c1").await?;
            let status = sc.status?;
            (status.connection_status.as_deref() == Some("Down")).then_some(status.failure_message)
        })
        .await;
    assert!(
        failure
            .as_deref()
            .is_some_and(|f| f.contains("cluster check alive failed")),
        "{failure:?}"
    );
    assert_eq!(tf.plan(), 0);

    inv.rewrite(
        &tf,
        &bridge(&ns, &[&ns], &args("  extra_labels = { round = \"2\" }")),
    );
    let out = apply_ok(&tf);
    let warning = flat(one_diagnostic(&out, "Warning", "is not Ready"));
    assert!(warning.contains("connectionStatus = Down"), "{warning}");
}

/// Creates ConfigMap `ns/name`.
async fn create_configmap(client: &kube::Client, ns: &str, name: &str) {
    use k8s_openapi::api::core::v1::ConfigMap;
    let cm: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "namespace": ns}
    }))
    .expect("a ConfigMap");
    kube::Api::<ConfigMap>::namespaced(client.clone(), ns)
        .create(&Default::default(), &cm)
        .await
        .unwrap_or_else(|e| panic!("creating ConfigMap {ns}/{name}: {e}"));
}
