//! Issue 36, item 2: replacing a bridge. `apply -replace=<address>` deregisters every cluster (the destroy that
//! comes first) and registers them again under a new instance id, converging: every healthy cluster owned again,
//! nothing orphaned, an empty plan after; with `-refresh=false` too, and with every CLI. What is
//! refused says why, truthfully: a bridge tainted after a failed first apply ("untaint, the next apply resumes"), a
//! bridge tainted on purpose ("untaint; use -replace"), and a replacement with `create_before_destroy` (the new
//! bridge cannot take the name while the old one holds it).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams};
use serde_json::Value as Json;
use support::inventory::{Inv, apply_ok, bridge, flat, run, state_clusters};
use support::{Cli, Tf, fixtures, unique_namespace};
use tfsveltos::api::{SveltosCluster, keys};

const ADDR: &str = "sveltos_cluster_inventory_bridge.x";

/// `ns` with `n` ClusterProfiles `c0..`, each with its credential Secret.
async fn fleet(inv: &Inv, prefix: &str, n: usize) -> String {
    let ns = unique_namespace(&inv.client, prefix).await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for i in 0..n {
        inv.profile_with_secret(&ns, &format!("c{i}"), &[], Json::Null, &kc)
            .await;
    }
    ns
}

/// The UIDs of the objects in `ns` carrying bridge `bridge`'s label, by `Kind name`.
async fn labelled(inv: &Inv, ns: &str, bridge: &str) -> BTreeMap<String, String> {
    let lp = ListParams::default().labels(&format!("{}={bridge}", keys::BRIDGE_LABEL));
    let scs = Api::<SveltosCluster>::namespaced(inv.client.clone(), ns)
        .list(&lp)
        .await
        .expect("listing SveltosClusters");
    let secrets = Api::<Secret>::namespaced(inv.client.clone(), ns)
        .list(&lp)
        .await
        .expect("listing Secrets");
    let metas = scs
        .items
        .into_iter()
        .map(|o| ("SveltosCluster", o.metadata))
        .chain(secrets.items.into_iter().map(|o| ("Secret", o.metadata)));
    metas
        .map(|(kind, m)| {
            let name = m.name.unwrap_or_default();
            (format!("{kind} {name}"), m.uid.unwrap_or_default())
        })
        .collect()
}

fn instance(tf: &Tf) -> String {
    tf.state_resources()[ADDR]["values"]["instance_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{}: no instance_id in state", tf.cli.name))
        .to_string()
}

/// The `instance` of the claim of `bridge`.
async fn claim_instance(inv: &Inv, bridge: &str) -> Option<String> {
    Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(inv.client.clone(), "default")
        .get_opt(&format!("sveltos-bridge-{bridge}"))
        .await
        .expect("reading the claim")
        .and_then(|c| c.data?.get("instance").cloned())
}

/// The bridge's `skipped` attribute in the state.
fn skipped(tf: &Tf) -> Json {
    tf.state_resources()[ADDR]["values"]["skipped"].clone()
}

/// `apply -replace` (with `extra` flags) on a bridge of 6 healthy clusters and one kept as it is (its credentials
/// gone): every object deregistered, the 6 registered again by the new instance (the claim's), the kept one no
/// longer registered (the replacement cannot register it), nothing else carrying the label, and an empty plan.
async fn replace_converges(inv: &Inv, tf: &Tf, ns: &str, extra: &[&str]) {
    let cli = &tf.cli.name;
    let before = labelled(inv, ns, ns).await;
    let old_instance = instance(tf);
    let replace = format!("-replace={ADDR}");
    let mut args = vec![
        "apply",
        "-input=false",
        "-no-color",
        "-auto-approve",
        &replace,
    ];
    args.extend(extra);
    let (ok, out) = run(tf, &args);
    assert!(ok, "{cli} apply {replace} {extra:?} failed:\n{out}");
    let after = labelled(inv, ns, ns).await;
    let healthy: Vec<String> = (0..6)
        .flat_map(|i| {
            [
                format!("SveltosCluster c{i}"),
                format!("Secret c{i}-sveltos-kubeconfig"),
            ]
        })
        .collect();
    assert_eq!(
        after.keys().collect::<std::collections::BTreeSet<_>>(),
        healthy.iter().collect(),
        "{cli}: the 6 healthy clusters, and only they, registered after the replacement"
    );
    let kept: Vec<&String> = after
        .keys()
        .filter(|k| before.get(*k) == Some(&after[*k]))
        .collect();
    assert!(
        kept.is_empty(),
        "{cli}: not deregistered and registered again: {kept:?}"
    );
    assert_eq!(state_clusters(tf).len(), 6, "{cli}: 6 clusters in state");
    assert_eq!(
        skipped(tf)[format!("{ns}/broken")]["kept"],
        false,
        "{cli}: {}",
        skipped(tf)
    );
    let new_instance = instance(tf);
    assert_ne!(
        new_instance, old_instance,
        "{cli}: the replacement is a new instance"
    );
    let claimed = claim_instance(inv, ns).await;
    assert_eq!(
        claimed,
        Some(new_instance),
        "{cli}: the claim is the new instance's"
    );
    assert_eq!(
        tf.plan(),
        0,
        "{cli}: the plan after the replacement is not empty"
    );
}

/// `apply -replace` on a bridge of 6 healthy clusters and one kept as it is converges with every CLI (with
/// OpenTofu also without a refresh), and the bridge is then destroyed whole: every object the replacement wrote
/// is recorded.
#[tokio::test(flavor = "multi_thread")]
async fn replace_deregisters_and_registers_again() {
    let inv = Inv::new().await;
    for cli in Cli::all() {
        let ns = fleet(&inv, "replace", 6).await;
        let kc = fixtures::unreachable_kubeconfig("t");
        inv.profile_with_secret(&ns, "broken", &[], Json::Null, &kc)
            .await;
        let tf = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
        apply_ok(&tf);
        inv.delete_secret(&ns, "broken-src").await;
        apply_ok(&tf);
        assert_eq!(skipped(&tf)[format!("{ns}/broken")]["kept"], true);
        assert_eq!(labelled(&inv, &ns, &ns).await.len(), 14);
        replace_converges(&inv, &tf, &ns, &[]).await;
        if cli.is_tofu() {
            replace_converges(&inv, &tf, &ns, &["-refresh=false"]).await;
        }
        tf.destroy();
        let left = labelled(&inv, &ns, &ns).await;
        assert!(
            left.is_empty(),
            "{}: destroy after the replacement left {left:?}",
            cli.name
        );
        assert_eq!(claim_instance(&inv, &ns).await, None);
    }
}

/// What a refused plan said, and that it wrote nothing.
async fn refused(inv: &Inv, tf: &Tf, ns: &str, args: &[&str]) -> String {
    let before = labelled(inv, ns, ns).await;
    let (ok, out) = run(tf, args);
    assert!(!ok, "{} {args:?} succeeded:\n{out}", tf.cli.name);
    assert_eq!(
        labelled(inv, ns, ns).await,
        before,
        "{args:?} deregistered something"
    );
    flat(&out.replace('│', " "))
}

/// A bridge tainted on purpose is not replaced, and the error says so (not "after a failed first apply") and
/// names `-replace`; one tainted by its failed first apply says that, and resumes once untainted.
#[tokio::test(flavor = "multi_thread")]
async fn a_tainted_bridge_says_why_it_is_tainted() {
    let inv = Inv::new().await;
    let cli = Cli::tofu();
    let ns = fleet(&inv, "taint", 2).await;
    let tf = inv.tf(&cli, &bridge(&ns, &[&ns], ""));
    apply_ok(&tf);
    tf.run_ok(&["taint", "-no-color", ADDR]);
    let said = refused(&inv, &tf, &ns, &["plan", "-input=false", "-no-color"]).await;
    assert!(
        said.contains("Error: Bridge tainted ")
            && !said.contains("failed first apply")
            && said.contains("-replace=<address>"),
        "a taint on purpose:\n{said}"
    );
    tf.run_ok(&["untaint", "-no-color", ADDR]);
    assert_eq!(tf.plan(), 0);
    tf.destroy();

    // A first apply that fails (its writes time out at once) is tainted by Terraform.
    let ns = fleet(&inv, "taint-failed", 2).await;
    let tf = inv.tf(
        &cli,
        &bridge(&ns, &[&ns], "  timeouts {\n    create = \"1ns\"\n  }"),
    );
    let (ok, out) = run(
        &tf,
        &["apply", "-input=false", "-no-color", "-auto-approve"],
    );
    assert!(
        !ok && out.contains("Apply timed out"),
        "the first apply did not fail:\n{out}"
    );
    inv.rewrite(&tf, &bridge(&ns, &[&ns], ""));
    let apply = ["apply", "-input=false", "-no-color", "-auto-approve"];
    let said = refused(&inv, &tf, &ns, &apply).await;
    assert!(
        said.contains("Error: Bridge tainted after a failed first apply")
            && said.contains("untaint"),
        "a failed first apply:\n{said}"
    );
    tf.run_ok(&["untaint", "-no-color", ADDR]);
    apply_ok(&tf);
    assert_eq!(state_clusters(&tf).len(), 2);
    assert_eq!(tf.plan(), 0);
    tf.destroy();
}

/// With `create_before_destroy`, the replacement would take the name while the bridge it replaces still holds it:
/// the apply is refused, naming `create_before_destroy`, and nothing is deregistered; Terraform keeps the old bridge
/// as a deposed object, which `state rm` and `import` turn back into the bridge of the configuration.
#[tokio::test(flavor = "multi_thread")]
async fn a_replacement_created_before_the_destroy_is_refused() {
    let inv = Inv::new().await;
    let ns = fleet(&inv, "replace-cbd", 2).await;
    let lifecycle = "  lifecycle {\n    create_before_destroy = true\n  }";
    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], lifecycle));
    apply_ok(&tf);
    let old_instance = instance(&tf);
    let replace = format!("-replace={ADDR}");
    let args = [
        "apply",
        "-input=false",
        "-no-color",
        "-auto-approve",
        &replace,
    ];
    let said = refused(&inv, &tf, &ns, &args).await;
    assert!(
        said.contains("Bridge name already used by another state")
            && said.contains("remove `create_before_destroy`"),
        "{said}"
    );
    assert_eq!(claim_instance(&inv, &ns).await, Some(old_instance.clone()));
    inv.rewrite(&tf, &bridge(&ns, &[&ns], ""));
    tf.run_ok(&["state", "rm", "-no-color", ADDR]);
    tf.import(ADDR, &ns);
    // An instance of its own, which takes the claim over at its first apply (destroy releases it all the same).
    assert_ne!(instance(&tf), old_instance);
    assert_eq!(
        tf.plan(),
        0,
        "the bridge imported back is not the bridge of the configuration"
    );
    tf.destroy();
    assert!(labelled(&inv, &ns, &ns).await.is_empty());
    assert_eq!(
        claim_instance(&inv, &ns).await,
        None,
        "destroy left the claim"
    );
}
