//! Issue 36, item 4: `fail_on_skipped = true`, the CI gate of docs/guides/running-in-ci.md. With clusters skipped,
//! an apply registers every other cluster and records it in the state, then fails with an error listing the
//! skipped clusters and their causes; the bridge is not tainted, and every later apply fails the same way (writing
//! nothing more) until the cluster is fixed. A bridge being created is refused at plan instead: Terraform would
//! mark it tainted.

use std::collections::BTreeMap;

use serde_json::Value as Json;
use support::inventory::{Inv, apply_ok, bridge, entry, one_diagnostic, run, state_clusters};
use support::{Cli, Tf, fixtures, unique_namespace};
use tfsveltos::api::keys;

const APPLY: &[&str] = &["apply", "-input=false", "-no-color", "-auto-approve"];
const ADDR: &str = "sveltos_cluster_inventory_bridge.x";

/// The bridge's resource in the state.
fn resource(tf: &Tf) -> Json {
    tf.state_resources()[ADDR].clone()
}

/// An apply that must fail with the gate's error; returns that error (the CLI's box drawing removed).
fn gate_error(tf: &Tf, summary: &str) -> String {
    let (ok, out) = run(tf, APPLY);
    assert!(!ok, "{}: the gate let the apply pass:\n{out}", tf.cli.name);
    one_diagnostic(&out.replace('│', ""), "Error", summary).to_string()
}

/// The resource versions of the SveltosClusters and Secrets in `ns`.
async fn versions(
    inv: &Inv,
    ns: &str,
    names: &[&str],
) -> BTreeMap<String, (Option<String>, Option<String>)> {
    let mut out = BTreeMap::new();
    for n in names {
        let secret = inv
            .secret_version(ns, &format!("{n}-sveltos-kubeconfig"))
            .await;
        out.insert(n.to_string(), (inv.sc_version(ns, n).await, secret));
    }
    out
}

/// The gate with `cli`: refused on creation, then applies the rest and fails, again and again, until fixed.
async fn gate_with(inv: &Inv, cli: &Cli) {
    let name = &cli.name;
    let ns = unique_namespace(&inv.client, "gate").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for p in ["ok-1", "ok-2"] {
        inv.profile_with_secret(&ns, p, &[], Json::Null, &kc).await;
    }
    inv.profile(&ns, "no-creds", &[], Json::Null).await;
    let gated = bridge(&ns, &[&ns], "  fail_on_skipped = true");
    let tf = inv.tf(cli, &gated);

    // A new bridge: refused at plan, nothing written.
    let error = gate_error(&tf, "cluster(s) skipped on the bridge's first apply");
    assert!(
        error.contains(&format!("- {ns}/no-creds (not registered)")),
        "{name}: {error}"
    );
    assert!(
        inv.sc(&ns, "ok-1").await.is_none(),
        "{name}: the refused creation wrote"
    );

    // Created without the gate, then gated: a new ClusterProfile is registered and recorded, then the run fails.
    inv.rewrite(&tf, &bridge(&ns, &[&ns], ""));
    apply_ok(&tf);
    inv.profile_with_secret(&ns, "ok-3", &[], Json::Null, &kc)
        .await;
    inv.rewrite(&tf, &gated);
    let error = gate_error(&tf, "1 cluster(s) skipped");
    let recorded = resource(&tf);
    let cause = recorded["values"]["skipped"][format!("{ns}/no-creds")]["cause"]
        .as_str()
        .unwrap_or_else(|| panic!("{name}: no-creds is not in skipped: {recorded}"))
        .to_string();
    let listed = entry(&error, &format!("{ns}/no-creds"));
    assert!(
        listed.contains("(not registered)") && listed.contains(&cause),
        "{name}: {listed}"
    );
    for p in ["ok-1", "ok-2", "ok-3"] {
        assert!(
            inv.sc(&ns, p).await.is_some(),
            "{name}: {p} not applied before the gate failed"
        );
        assert!(
            state_clusters(&tf).contains_key(&format!("{ns}/{p}")),
            "{name}: {p} not recorded"
        );
    }
    assert_ne!(
        recorded["tainted"], true,
        "{name}: the gate tainted the bridge"
    );

    // Nothing changes: every plan has a change, and every apply fails again, writing nothing.
    assert_eq!(tf.plan(), 2, "{name}: the plan while a cluster is skipped");
    let before = versions(inv, &ns, &["ok-1", "ok-2", "ok-3"]).await;
    gate_error(&tf, "1 cluster(s) skipped");
    assert_eq!(
        versions(inv, &ns, &["ok-1", "ok-2", "ok-3"]).await,
        before,
        "{name}: the gate wrote"
    );

    // Fixed: the cluster is registered, the apply passes, the plan after is empty.
    let label = [(keys::CLUSTER_PROFILE_LABEL, "no-creds")];
    inv.secret(&ns, "no-creds-src", &label, &[("Config", kc.as_str())])
        .await;
    apply_ok(&tf);
    assert!(
        inv.sc(&ns, "no-creds").await.is_some(),
        "{name}: the fixed cluster"
    );
    assert_eq!(tf.plan(), 0, "{name}: the plan after the gate opened");
    tf.destroy();
}

/// `fail_on_skipped = true` with every CLI.
#[tokio::test(flavor = "multi_thread")]
async fn the_gate_applies_every_other_cluster_then_fails_naming_the_skipped() {
    let inv = Inv::new().await;
    for cli in Cli::all() {
        gate_with(&inv, &cli).await;
    }
}
