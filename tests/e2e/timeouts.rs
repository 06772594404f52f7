//! Issue 32: runs of `sveltos_cluster_inventory_bridge` that go past their `timeouts`. The real CLIs (OpenTofu and
//! Terraform 1.0.3) drive the provider against the real API server through the fault-injecting proxy
//! (`support::fault_proxy`), which lets a chosen number of the run's writes (or deletes) of Secrets and
//! SveltosClusters through and then holds every later one, unanswered and never forwarded: the run can only end by
//! its limit, with some clusters done, some half done and some not touched, whatever the machine's speed.
//!
//! * An apply past `timeouts.create`, then one past `timeouts.update`: each fails with `Apply timed out`, and the
//!   state records, object by object, exactly what the bridge owns on the API server, which is every write let
//!   through and none of those held. The failed create is tainted by the CLI (the provider's refusal to replace it
//!   is in `apiserver_restart.rs`) and untainted; the failed update is not. The next plain apply converges: every
//!   cluster registered, none taken for someone else's, the plan after it empty.
//! * A destroy past `timeouts.delete`: it fails with `Destroy timed out`, and the state keeps exactly the objects
//!   not yet removed (the clusters removed whole are gone from it); the next plain destroy leaves nothing: no
//!   SveltosCluster, no bridged Secret, no claim.
//!
//! The provider reaches the proxy over plain HTTP (`host = "http://127.0.0.1:<port>"`, no credentials: the proxy
//! forwards with the test environment's admin client).

use std::collections::BTreeSet;
use std::ops::Range;
use std::process::Output;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams, ObjectMeta};
use support::fault_proxy::FaultProxy;
use support::inventory::{Inv, bridge, diagnostics, flat, one_diagnostic, report, text};
use support::{Cli, Tf, fixtures, unique_namespace};
use tfsveltos::api::{SveltosCluster, keys};
use tfsveltos::domain::ownership::{DEFAULT_CLAIM_NAMESPACE, claim_name};

/// Profiles added by each step.
const PROFILES: usize = 40;
/// `create`, `update` and `delete` of the `timeouts` block.
const LIMIT: &str = "10s";
/// Writes let through before the rest are held. Each cluster is two writes (Secret, then SveltosCluster; deletes
/// the other way round) and at most 16 clusters are in flight, so that with `16 < LET_THROUGH < 2 × PROFILES − 16`
/// a run stops with some clusters done whole ((LET_THROUGH − 16) / 2 at least) and some untouched.
const LET_THROUGH: usize = 24;
/// The resources whose writes the proxy counts and holds.
const HELD: [&str; 2] = ["secrets", "sveltosclusters"];
const ADDRESS: &str = "sveltos_cluster_inventory_bridge.x";
const APPLY: &[&str] = &["apply", "-input=false", "-no-color", "-auto-approve"];
const DESTROY: &[&str] = &["destroy", "-input=false", "-no-color", "-auto-approve"];
const PLAN: &[&str] = &["plan", "-input=false", "-no-color", "-detailed-exitcode"];

/// The `kind namespace/name` of the Secret and the SveltosCluster of profile `ns/<name>` (bridged in `ns`).
fn objects_of(ns: &str, name: &str) -> [String; 2] {
    [
        format!("Secret {ns}/{name}-sveltos-kubeconfig"),
        format!("SveltosCluster {ns}/{name}"),
    ]
}

fn name(i: usize) -> String {
    format!("c{i:03}")
}

/// A working directory for `cli` whose provider talks to the proxy; the bridge is named `ns`, selects `ns`, and
/// has every limit at [`LIMIT`].
fn workspace(cli: &Cli, proxy: &FaultProxy, ns: &str) -> Tf {
    let tf = Tf::new(cli);
    let limits = format!(
        "  timeouts {{\n    create = \"{LIMIT}\"\n    update = \"{LIMIT}\"\n    delete = \"{LIMIT}\"\n  }}"
    );
    tf.write_main(&fixtures::main_with_host(
        &proxy.url(),
        &bridge(ns, &[ns], &limits),
    ));
    tf
}

/// Runs the CLI on a blocking thread (the proxy serves the provider on this test's runtime meanwhile).
async fn run_cli(tf: &Tf, args: &[&str]) -> Output {
    let mut cmd = tf.command(args);
    tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("the CLI thread")
        .unwrap_or_else(|e| panic!("running {args:?}: {e}"))
}

/// Runs `args` (`apply` or `destroy`) with every write to [`HELD`] after the first [`LET_THROUGH`] held: the run
/// must fail with one error, `summary` (its limit), having had exactly those let through and some held.
async fn run_held(proxy: &FaultProxy, tf: &Tf, args: &[&str], summary: &str) -> String {
    let (through, held) = (proxy.let_through(), proxy.held());
    proxy.hold_writes_after(LET_THROUGH, &HELD);
    let out = run_cli(tf, args).await;
    proxy.stop_holding();
    let (through, held) = (proxy.let_through() - through, proxy.held() - held);
    let out = text(&out);
    let who = &tf.cli.name;
    assert_eq!(
        through, LET_THROUGH,
        "{who} {args:?}: the limit ({LIMIT}) struck before {LET_THROUGH} writes went through; raise LIMIT:\n{out}"
    );
    assert!(held > 0, "{who} {args:?}: no write was held:\n{out}");
    one_diagnostic(&out, "Error", summary);
    assert_eq!(
        diagnostics(&out, "Error", "").len(),
        1,
        "{who} {args:?}: errors besides {summary:?}:\n{out}"
    );
    report(&format!(
        "timeouts: {who} {}: {through} writes let through, {held} held, then {summary:?}",
        args[0]
    ));
    out
}

/// The bridge's objects in `ns` on the API server (`kind namespace/name`), each checked to carry its label.
async fn on_server(inv: &Inv, ns: &str) -> BTreeSet<String> {
    let by_label = ListParams::default().labels(&format!("{}={ns}", keys::BRIDGE_LABEL));
    let scs = Api::<SveltosCluster>::namespaced(inv.client.clone(), ns)
        .list_metadata(&ListParams::default())
        .await
        .expect("listing SveltosClusters");
    let secrets = Api::<Secret>::namespaced(inv.client.clone(), ns)
        .list_metadata(&by_label)
        .await
        .expect("listing Secrets");
    let metas =
        |kind: &'static str, items: Vec<ObjectMeta>| items.into_iter().map(move |m| (kind, m));
    let all = metas(
        "SveltosCluster",
        scs.items.into_iter().map(|o| o.metadata).collect(),
    )
    .chain(metas(
        "Secret",
        secrets.items.into_iter().map(|o| o.metadata).collect(),
    ));
    let mut found = BTreeSet::new();
    for (kind, m) in all {
        let name = m.name.unwrap_or_default();
        let labels = m.labels.unwrap_or_default();
        let label = labels.get(keys::BRIDGE_LABEL).map(String::as_str);
        assert_eq!(
            label,
            Some(ns),
            "{kind} {ns}/{name} without the bridge's label"
        );
        found.insert(format!("{kind} {ns}/{name}"));
    }
    found
}

/// The objects the state's `clusters` attribute records (`kind namespace/name`), and its keys; `None` when the
/// state holds no bridge.
fn in_state(tf: &Tf) -> Option<(BTreeSet<String>, BTreeSet<String>)> {
    let resources = tf.state_resources();
    let clusters = resources.get(ADDRESS)?["values"]["clusters"]
        .as_object()?
        .clone();
    let mut objects = BTreeSet::new();
    for entry in clusters.values() {
        for (kind, field) in [("SveltosCluster", "sveltos_cluster"), ("Secret", "secret")] {
            if let Some(id) = entry[field].as_str() {
                objects.insert(format!("{kind} {id}"));
            }
        }
    }
    Some((objects, clusters.keys().cloned().collect()))
}

/// The clusters (`namespace/name` of their profile) of objects listed as `kind namespace/name`.
fn clusters_of(objects: &BTreeSet<String>) -> BTreeSet<String> {
    objects
        .iter()
        .filter_map(|o| {
            let id = o.split_once(' ')?.1;
            Some(
                id.strip_suffix("-sveltos-kubeconfig")
                    .unwrap_or(id)
                    .to_string(),
            )
        })
        .collect()
}

/// After a run its limit stopped: the API server holds `expected` objects of the bridge (every write let through
/// carried out, none of those held), and the state records exactly those, object by object, and lists exactly
/// the clusters with an object left. Returns what the API server holds.
async fn assert_recorded(inv: &Inv, tf: &Tf, ns: &str, expected: usize) -> BTreeSet<String> {
    let server = on_server(inv, ns).await;
    let who = &tf.cli.name;
    assert_eq!(
        server.len(),
        expected,
        "{who}: the API server holds {} of the bridge's objects, not {expected}",
        server.len()
    );
    let (state, clusters) =
        in_state(tf).unwrap_or_else(|| panic!("{who}: the state lost the bridge"));
    assert_eq!(
        state,
        server,
        "{who}: the state records objects that do not exist: {:?}; it misses objects that exist: {:?}",
        state.difference(&server).collect::<Vec<_>>(),
        server.difference(&state).collect::<Vec<_>>()
    );
    let left = clusters_of(&server);
    assert_eq!(
        clusters,
        left,
        "{who}: the state lists clusters with no object: {:?}; it misses clusters with one: {:?}",
        clusters.difference(&left).collect::<Vec<_>>(),
        left.difference(&clusters).collect::<Vec<_>>()
    );
    server
}

/// How many of profiles `range` of `ns` have both objects, and how many neither, in `objects`.
fn whole_and_absent(objects: &BTreeSet<String>, ns: &str, range: Range<usize>) -> (usize, usize) {
    let mut counts = (0, 0);
    for i in range {
        let present = objects_of(ns, &name(i))
            .iter()
            .filter(|o| objects.contains(*o))
            .count();
        match present {
            2 => counts.0 += 1,
            0 => counts.1 += 1,
            _ => {}
        }
    }
    counts
}

/// A plain apply that converges: it succeeds, takes none of the objects for someone else's, registers each of
/// the `total` profiles with both objects recorded in the state, and the plan after it is empty.
async fn assert_converges(inv: &Inv, tf: &Tf, ns: &str, total: usize) {
    let who = &tf.cli.name;
    let out = run_cli(tf, APPLY).await;
    let said = text(&out);
    assert!(
        out.status.success(),
        "{who}: the next apply failed:\n{said}"
    );
    assert!(
        !flat(&said).contains("not created by it") && !flat(&said).contains("does not own"),
        "{who}: the objects written before the timeout are taken for someone else's:\n{said}"
    );
    let expected: BTreeSet<String> = (0..total).flat_map(|i| objects_of(ns, &name(i))).collect();
    assert_eq!(
        on_server(inv, ns).await,
        expected,
        "{who}: after the next apply"
    );
    let (state, _) = in_state(tf).expect("the state holds the bridge");
    assert_eq!(state, expected, "{who}: the state after the next apply");
    let plan = run_cli(tf, PLAN).await;
    assert_eq!(
        plan.status.code(),
        Some(0),
        "{who}: the plan after the next apply is not empty:\n{}",
        text(&plan)
    );
}

/// Nothing of bridge `ns` is left: no SveltosCluster, no bridged Secret, no claim, no bridge in the state.
async fn assert_nothing_left(inv: &Inv, tf: &Tf, ns: &str) {
    let who = &tf.cli.name;
    let left = on_server(inv, ns).await;
    assert!(left.is_empty(), "{who}: destroy left {left:?}");
    let claim = Api::<ConfigMap>::namespaced(inv.client.clone(), DEFAULT_CLAIM_NAMESPACE)
        .get_opt(&claim_name(ns))
        .await
        .expect("reading the claim");
    assert!(claim.is_none(), "{who}: destroy left the claim");
    assert!(
        in_state(tf).is_none(),
        "{who}: the state still holds the bridge"
    );
}

/// Whether the CLI marked the bridge tainted.
fn tainted(tf: &Tf) -> bool {
    tf.state_resources()
        .get(ADDRESS)
        .is_some_and(|r| r["tainted"] == true)
}

/// An apply past `timeouts.create`, then one past `timeouts.update`, each followed by an apply that converges.
async fn applies_past_their_limit(cli: Cli) {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "timeouts-apply").await;
    inv.numbered_profiles(&ns, 0..PROFILES).await;
    let proxy = FaultProxy::start(inv.client.clone()).await;
    let tf = workspace(&cli, &proxy, &ns);
    let who = &cli.name;

    run_held(&proxy, &tf, APPLY, "Apply timed out").await;
    let server = assert_recorded(&inv, &tf, &ns, LET_THROUGH).await;
    let (whole, absent) = whole_and_absent(&server, &ns, 0..PROFILES);
    assert!(
        whole > 0 && absent > 0,
        "{who}: the create stopped with {whole} clusters written whole and {absent} untouched"
    );
    report(&format!(
        "timeouts: {who} create: {whole} clusters written whole, {absent} untouched"
    ));
    assert!(tainted(&tf), "{who}: a failed create is tainted");
    tf.run_ok(&["untaint", "-no-color", ADDRESS]);
    assert_converges(&inv, &tf, &ns, PROFILES).await;

    inv.numbered_profiles(&ns, PROFILES..2 * PROFILES).await;
    run_held(&proxy, &tf, APPLY, "Apply timed out").await;
    let server = assert_recorded(&inv, &tf, &ns, 2 * PROFILES + LET_THROUGH).await;
    let (whole, absent) = whole_and_absent(&server, &ns, PROFILES..2 * PROFILES);
    assert!(
        whole > 0 && absent > 0,
        "{who}: the update stopped with {whole} new clusters written whole and {absent} untouched"
    );
    report(&format!(
        "timeouts: {who} update: {whole} new clusters written whole, {absent} untouched"
    ));
    assert!(!tainted(&tf), "{who}: a failed update is not tainted");
    assert_converges(&inv, &tf, &ns, 2 * PROFILES).await;
    let out = run_cli(&tf, DESTROY).await;
    assert!(out.status.success(), "{who}: destroy:\n{}", text(&out));
    assert_nothing_left(&inv, &tf, &ns).await;
}

/// A destroy past `timeouts.delete`, then a destroy that finishes.
async fn a_destroy_past_its_limit(cli: Cli) {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "timeouts-destroy").await;
    inv.numbered_profiles(&ns, 0..PROFILES).await;
    let proxy = FaultProxy::start(inv.client.clone()).await;
    let tf = workspace(&cli, &proxy, &ns);
    let who = &cli.name;
    let out = run_cli(&tf, APPLY).await;
    assert!(out.status.success(), "{who}: apply:\n{}", text(&out));

    run_held(&proxy, &tf, DESTROY, "Destroy timed out").await;
    let server = assert_recorded(&inv, &tf, &ns, 2 * PROFILES - LET_THROUGH).await;
    let (untouched, removed) = whole_and_absent(&server, &ns, 0..PROFILES);
    assert!(
        untouched > 0 && removed > 0,
        "{who}: the destroy stopped with {removed} clusters removed whole and {untouched} untouched"
    );
    report(&format!(
        "timeouts: {who} destroy: {removed} clusters removed whole, {untouched} untouched"
    ));
    let out = run_cli(&tf, DESTROY).await;
    assert!(
        out.status.success(),
        "{who}: the next destroy failed:\n{}",
        text(&out)
    );
    assert_nothing_left(&inv, &tf, &ns).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn applies_past_their_limit_record_what_they_wrote_and_converge_tofu() {
    applies_past_their_limit(Cli::tofu()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn applies_past_their_limit_record_what_they_wrote_and_converge_terraform_1_0_3() {
    applies_past_their_limit(Cli::terraform_1_0_3()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destroy_past_its_limit_keeps_what_is_left_and_the_next_finishes_tofu() {
    a_destroy_past_its_limit(Cli::tofu()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destroy_past_its_limit_keeps_what_is_left_and_the_next_finishes_terraform_1_0_3() {
    a_destroy_past_its_limit(Cli::terraform_1_0_3()).await;
}
