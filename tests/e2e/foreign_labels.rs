//! Issue 33 (the security review's L2): labels a tenant adds to its own bridged SveltosCluster under
//! `copy_labels.exclude` (`projectsveltos.io/*` by default: what Sveltos selects add-ons by). The tenant holds only
//! `get` and `patch` on SveltosClusters of its namespace and patches as `kubectl --as` would. Every plan names the
//! cluster and the label keys (and not Sveltos' own `projectsveltos.io/k8s-version`, nor a label outside
//! `exclude`); the `sveltos_clusters` data source lists them in `foreign_label_keys`, not as the bridge's; with
//! `copy_labels.remove_foreign = true` the cluster shows as changing and apply removes them, the other cluster
//! untouched, and again when the tenant puts them back.

use serde_json::{Value as Json, json};
use support::inventory::{Inv, apply_ok, bridge, flat, labels_of, one_diagnostic, run};
use support::{Cli, TestEnv, fixtures, unique_namespace};
use tfsveltos::api::keys;

const PLAN: &[&str] = &["plan", "-input=false", "-no-color", "-detailed-exitcode"];
/// What a plan says when the bridge changes (an output may change without it).
const CHANGES: &str = "sveltos_cluster_inventory_bridge.x will be updated in-place";
const WARNING: &str = "carry labels under copy_labels.exclude that the bridge did not write";

/// A user (through impersonation) that may get and patch the SveltosClusters of `ns`, nothing else.
fn tenant(env: &TestEnv, ns: &str) -> String {
    env.tenant(
        ns,
        &[("get,patch", "sveltosclusters.lib.projectsveltos.io")],
    )
}

/// The tenant's merge patch of the labels of its SveltosCluster `t1`.
fn tenant_labels(env: &TestEnv, user: &str, ns: &str, labels: Json) {
    let patch = json!({"metadata": {"labels": labels}}).to_string();
    let args = ["--as", user, "-n", ns, "patch", "sveltoscluster", "t1"];
    env.kubectl(&[&args[..], &["--type=merge", "-p", &patch]].concat());
}

/// `plan -detailed-exitcode`: its exit code and output.
fn plan(tf: &support::Tf) -> (i32, String) {
    let out = tf.run(PLAN);
    let code = out.status.code().unwrap_or(-1);
    let text = support::inventory::text(&out);
    assert!(code == 0 || code == 2, "plan failed:\n{text}");
    (code, text)
}

#[tokio::test(flavor = "multi_thread")]
async fn labels_a_tenant_adds_under_exclude_are_reported_and_removed_on_request() {
    let env = TestEnv::get();
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "foreign-labels").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for name in ["t1", "f1"] {
        inv.profile_with_secret(&ns, name, &[("team", name)], Json::Null, &kc)
            .await;
    }
    let sources = format!(
        "data \"sveltos_clusters\" \"mine\" {{\n  bridge = \"{ns}\"\n  namespaces = [\"{ns}\"]\n  depends_on = [sveltos_cluster_inventory_bridge.x]\n}}\n\
         output \"foreign\" {{\n  value = {{ for c in data.sveltos_clusters.mine.clusters : c.id => c.foreign_label_keys }}\n}}\n"
    );
    let body = |extra: &str| format!("{}{sources}", bridge(&ns, &[&ns], extra));
    let cli = Cli::tofu();
    let tf = inv.tf(&cli, &body(""));
    apply_ok(&tf);
    // What sveltoscluster-manager writes on every SveltosCluster: never reported, never removed.
    for name in ["t1", "f1"] {
        let version = json!({"labels": {keys::SVELTOS_K8S_VERSION_LABEL: "v1.37.2"}});
        inv.patch_sc_metadata(&ns, name, version).await;
    }

    // The attack: the tenant selects add-ons for its cluster.
    let user = tenant(env, &ns);
    let added =
        json!({"projectsveltos.io/tier": "platform", "projectsveltos.io/env": "prod", "mine": "x"});
    tenant_labels(env, &user, &ns, added);

    // Reported by every plan, naming the cluster and the keys under `exclude` only; no change planned.
    let (_, out) = plan(&tf);
    assert!(!out.contains(CHANGES), "reported only, no change:\n{out}");
    let warning = flat(one_diagnostic(&out, "Warning", WARNING));
    assert!(
        warning.contains(&format!(
            "- {ns}/t1: projectsveltos.io/env, projectsveltos.io/tier"
        )),
        "{warning}"
    );
    assert!(
        warning.contains("copy_labels.remove_foreign = true"),
        "{warning}"
    );
    for absent in [
        format!("{ns}/f1"),
        keys::SVELTOS_K8S_VERSION_LABEL.into(),
        "mine".into(),
    ] {
        assert!(!warning.contains(&absent), "{absent} named: {warning}");
    }
    // The data source tells them from the bridge's.
    apply_ok(&tf);
    let foreign = &tf.outputs_json()["foreign"]["value"];
    assert_eq!(
        foreign[format!("{ns}/t1")],
        json!(["mine", "projectsveltos.io/env", "projectsveltos.io/tier"]),
        "{foreign}"
    );
    assert_eq!(foreign[format!("{ns}/f1")], json!([]), "{foreign}");
    let l = labels_of(&inv.sc(&ns, "t1").await.unwrap());
    assert_eq!(
        l["projectsveltos.io/tier"], "platform",
        "removed without opt-in"
    );

    // Opt-in: apply removes the labels under `exclude`, and when they come back the cluster changes in plan.
    let remove = "  copy_labels {\n    remove_foreign = true\n  }";
    inv.rewrite(&tf, &body(remove));
    for round in 0..2 {
        if round == 1 {
            // The tenant puts one back: the next plan shows it, the apply removes it again.
            tenant_labels(env, &user, &ns, json!({"projectsveltos.io/tier": "again"}));
        }
        let (_, out) = plan(&tf);
        assert!(
            out.contains(CHANGES),
            "round {round}: no change planned:\n{out}"
        );
        // Turning the option on is the change of the first round; then the tenant's cluster alone changes.
        assert_eq!(
            out.contains(&format!("\"{ns}/t1\" = {{")),
            round == 1,
            "{out}"
        );
        assert!(!out.contains(&format!("\"{ns}/f1\" = {{")), "{out}");
        assert!(flat(&out).contains("Apply removes them"), "{out}");
        let out = apply_ok(&tf);
        assert!(flat(&out).contains("Apply removes them"), "{out}");
        let l = labels_of(&inv.sc(&ns, "t1").await.unwrap());
        assert!(
            !l.keys().any(
                |k| k.starts_with("projectsveltos.io/") && k != keys::SVELTOS_K8S_VERSION_LABEL
            ),
            "round {round}: {l:?}"
        );
        assert_eq!(l[keys::SVELTOS_K8S_VERSION_LABEL], "v1.37.2");
        assert_eq!((l["mine"].as_str(), l["team"].as_str()), ("x", "t1"));
        assert_eq!(l[keys::BRIDGE_LABEL], ns);
        let f1 = labels_of(&inv.sc(&ns, "f1").await.unwrap());
        assert_eq!(f1[keys::SVELTOS_K8S_VERSION_LABEL], "v1.37.2");
        let (code, out) = plan(&tf);
        assert_eq!(code, 0, "round {round}: not converged:\n{out}");
        assert!(!out.contains(WARNING), "{out}");
    }
    let (ok, out) = run(
        &tf,
        &["destroy", "-input=false", "-no-color", "-auto-approve"],
    );
    assert!(ok, "{out}");
}
