//! Issue 13, last item: the API server killed and restarted in the middle of an apply. The real `tofu` drives the
//! provider against the real API server through a fault-injecting proxy (`support::fault_proxy`); once part of
//! the writes of an apply registering 200 clusters has gone through, the proxy goes down as a killed server does
//! (new connections refused, requests in flight dropped with a TCP reset) and comes back after a while.
//!
//! * A cut shorter than the retry policy's bound (`k8s::io`): the apply either completes, or fails with
//!   diagnostics that each name an object; either way the next apply converges, the plan after it is empty, and
//!   the objects on the API server are exactly one SveltosCluster and one Secret per profile.
//! * A cut longer than that bound: the apply fails, naming objects, within a bounded time after the server is
//!   back; its state is what exists; the next apply converges in the same way.
//!
//! The provider reaches the proxy over plain HTTP (`host = "http://127.0.0.1:<port>"`, no credentials: the proxy
//! forwards with the test environment's admin client), so no TLS is involved.

use std::collections::BTreeSet;
use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams};
use serde_json::Value as Json;
use support::fault_proxy::{FaultProxy, Mode};
use support::inventory::{Inv, bridge, state_clusters};
use support::{Cli, Tf, fixtures, unique_namespace};
use tfsveltos::api::{SveltosCluster, keys};
use tfsveltos::k8s::{config, io};

const PROFILES: usize = 200;
/// Writes of the apply that go through before the cut: the claim, then about a quarter of the 400 writes.
const CUT_AFTER_WRITES: usize = 100;
/// A cut the retry policy rides out: longer than the first retries' backoffs, shorter than the smallest total
/// backoff of an operation that uses all its retries (250 ms × (1 + 2 + 4 + 8 + 16) / 2 = 3.875 s).
const SHORT_CUT: Duration = Duration::from_secs(3);
/// A cut longer than the documented bound on one operation, retries included (`io::OPERATION_BOUND`, 45 s).
const LONG_CUT: Duration = Duration::from_secs(50);
/// An apply or plan that takes longer than this hangs (it is killed and the test fails).
const HANG: Duration = Duration::from_secs(600);

const APPLY: &[&str] = &["apply", "-input=false", "-no-color", "-auto-approve"];

fn name(i: usize) -> String {
    format!("c{i:03}")
}

/// A working directory whose provider talks to the proxy; the bridge is named `ns` and selects `ns`.
fn workspace(proxy: &FaultProxy, ns: &str) -> Tf {
    let mut tf = Tf::new(&Cli::tofu());
    write_workspace(&tf, proxy, ns, "");
    tf.env("TF_LOG_PROVIDER", "DEBUG");
    tf
}

/// (Re)writes the configuration of [`workspace`], with `extra` lines in the bridge.
fn write_workspace(tf: &Tf, proxy: &FaultProxy, ns: &str, extra: &str) {
    tf.write_main(&fixtures::main_with_host(
        &proxy.url(),
        &bridge(ns, &[ns], extra),
    ));
}

/// What one CLI run did.
struct Run {
    ok: bool,
    out: String,
    took: Duration,
    /// Requests the provider retried (its debug log).
    retries: usize,
}

/// Runs `args` on a blocking thread, killing the CLI (and failing the test) if it takes longer than [`HANG`];
/// the provider's debug log goes to `<label>.log` in the working directory.
async fn run_bounded(tf: &Tf, args: &'static [&'static str], label: &str) -> Run {
    let log = tf.dir().join(format!("{label}.log"));
    let mut cmd = tf.command(args);
    cmd.env("TF_LOG_PATH", &log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (ok, out, took) = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let mut child = cmd.spawn().expect("starting tofu");
        let drain = |mut r: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut s = String::new();
                let _ = r.read_to_string(&mut s);
                s
            })
        };
        let stdout = drain(Box::new(child.stdout.take().unwrap()));
        let stderr = drain(Box::new(child.stderr.take().unwrap()));
        let status = loop {
            if let Some(s) = child.try_wait().expect("waiting for tofu") {
                break s;
            }
            if started.elapsed() > HANG {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "tofu {args:?} hung: killed after {HANG:?}\n{}{}",
                    stdout.join().unwrap_or_default(),
                    stderr.join().unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let took = started.elapsed();
        let out = format!(
            "{}{}",
            stdout.join().unwrap_or_default(),
            stderr.join().unwrap_or_default()
        );
        (status.success(), out, took)
    })
    .await
    .expect("the CLI thread");
    let retries = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .matches("retrying Kubernetes request")
        .count();
    Run {
        ok,
        out,
        took,
        retries,
    }
}

/// The names of the SveltosClusters in `ns`, and of the Secrets anywhere that carry bridge `bridge`'s label.
async fn on_server(
    client: &kube::Client,
    ns: &str,
    bridge: &str,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let names = |metas: Vec<kube::api::ObjectMeta>| -> BTreeSet<String> {
        metas
            .into_iter()
            .map(|m| {
                format!(
                    "{}/{}",
                    m.namespace.unwrap_or_default(),
                    m.name.unwrap_or_default()
                )
            })
            .collect()
    };
    let scs = Api::<SveltosCluster>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .expect("listing SveltosClusters");
    for sc in &scs.items {
        assert_eq!(
            sc.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(keys::BRIDGE_LABEL))
                .map(String::as_str),
            Some(bridge),
            "SveltosCluster {:?} without the bridge's label",
            sc.metadata.name
        );
    }
    let secrets = Api::<Secret>::all(client.clone())
        .list(&ListParams::default().labels(&format!("{}={bridge}", keys::BRIDGE_LABEL)))
        .await
        .expect("listing Secrets");
    (
        names(scs.items.into_iter().map(|o| o.metadata).collect()),
        names(secrets.items.into_iter().map(|o| o.metadata).collect()),
    )
}

/// Asserts the end state after the apply that must converge: the second apply succeeded, the plan after it is
/// empty, and the API server holds exactly one SveltosCluster and one Secret per profile, all recorded in state.
async fn assert_converged(inv: &Inv, tf: &Tf, ns: &str, second: &Run) {
    assert!(
        second.ok,
        "the apply after the restart did not converge:\n{}",
        second.out
    );
    let plan = run_bounded(
        tf,
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
        "plan",
    )
    .await;
    assert!(
        plan.ok,
        "the plan after converging is not empty (or failed):\n{}",
        plan.out
    );
    let expected_scs: BTreeSet<String> =
        (0..PROFILES).map(|i| format!("{ns}/{}", name(i))).collect();
    let expected_secrets: BTreeSet<String> = (0..PROFILES)
        .map(|i| format!("{ns}/{}-sveltos-kubeconfig", name(i)))
        .collect();
    let (scs, secrets) = on_server(&inv.client, ns, ns).await;
    assert_eq!(
        scs.len(),
        PROFILES,
        "SveltosClusters: missing {:?}, extra {:?}",
        expected_scs.difference(&scs).collect::<Vec<_>>(),
        scs.difference(&expected_scs).collect::<Vec<_>>()
    );
    assert_eq!(scs, expected_scs);
    assert_eq!(
        secrets.len(),
        PROFILES,
        "bridged Secrets: missing {:?}, extra {:?}",
        expected_secrets.difference(&secrets).collect::<Vec<_>>(),
        secrets.difference(&expected_secrets).collect::<Vec<_>>()
    );
    assert_eq!(secrets, expected_secrets);
    let state: BTreeSet<String> = state_clusters(tf).keys().cloned().collect();
    assert_eq!(
        state,
        expected_scs,
        "state: missing {:?}",
        expected_scs.difference(&state).collect::<Vec<_>>()
    );
}

/// The keys of the bridge resource's `clusters` attribute in the state (`show -json`).
fn resource_clusters(tf: &Tf) -> BTreeSet<String> {
    tf.state_resources()
        .get("sveltos_cluster_inventory_bridge.x")
        .and_then(|r| r["values"]["clusters"].as_object().cloned())
        .unwrap_or_default()
        .keys()
        .cloned()
        .collect()
}

/// The error diagnostics of a CLI's output: each from a line starting with `Error: ` up to the next line
/// starting a diagnostic (details such as `ServiceError: ...` do not start one).
fn error_blocks(out: &str) -> Vec<String> {
    let mut blocks: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    for line in out.lines() {
        if line.starts_with("Error: ") || line.starts_with("Warning: ") {
            blocks.extend(current.take());
            current = line.starts_with("Error: ").then(String::new);
        }
        if let Some(c) = current.as_mut() {
            c.push_str(line);
            c.push('\n');
        }
    }
    blocks.extend(current);
    blocks
}

/// The first line of every diagnostic but the development-overrides warning, with the line after the
/// `resource` line (the detail's start).
fn summaries(out: &str) -> String {
    let lines: Vec<&str> = out.lines().collect();
    let mut found = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if (l.starts_with("Error: ") || l.starts_with("Warning: "))
            && !l.contains("development overrides")
        {
            let detail = lines[i..]
                .iter()
                .skip_while(|d| !d.trim_start().starts_with("12: resource"))
                .nth(2)
                .unwrap_or(&"");
            found.push(format!("{l} | {detail}"));
        }
    }
    found.join("\n")
}

/// Every error diagnostic of a failed apply names an object of this test (`ns/...`).
fn assert_errors_name_objects(out: &str, ns: &str) -> usize {
    let errors = error_blocks(out);
    assert!(
        !errors.is_empty(),
        "the apply failed without an error diagnostic:\n{out}"
    );
    for e in &errors {
        assert!(
            e.contains(&format!("{ns}/")),
            "an error that names no object of {ns}:\n{e}\n--- whole output ---\n{out}"
        );
    }
    errors.len()
}

/// Starts the first apply with the proxy armed to go down after [`CUT_AFTER_WRITES`] writes, keeps it down for
/// `cut`, and returns the apply's run and the time from the cut's end to the apply's exit.
async fn apply_through_a_cut(proxy: &FaultProxy, tf: &Tf, cut: Duration) -> (Run, Duration) {
    proxy.cut_after_writes(CUT_AFTER_WRITES);
    let apply = run_bounded(tf, APPLY, "apply-1");
    tokio::pin!(apply);
    let cut_at = tokio::select! {
        at = proxy.wait_cut(HANG) => at.expect("the proxy never went down"),
        run = &mut apply => panic!(
            "the apply ended before {CUT_AFTER_WRITES} writes (ok = {}):\n{}",
            run.ok, run.out
        ),
    };
    let dropped = proxy.dropped();
    tokio::select! {
        _ = tokio::time::sleep_until((cut_at + cut).into()) => {}
        run = &mut apply => {
            // Fine for the long cut (every operation in flight gives up): the apply may end while down.
            eprintln!("the apply ended {:?} into the cut (ok = {})", cut_at.elapsed(), run.ok);
            proxy.set(Mode::Forward);
            return (run, Duration::ZERO);
        }
    }
    proxy.set(Mode::Forward);
    let back = Instant::now();
    let run = apply.await;
    eprintln!(
        "cut of {cut:?} after {CUT_AFTER_WRITES} writes: {dropped} requests dropped in flight, {} retries in the \
         provider's log; apply ok = {} in {:?}, {:?} after the server was back",
        run.retries,
        run.ok,
        run.took,
        back.elapsed()
    );
    (run, back.elapsed())
}

/// A cut shorter than the retry bound: the apply completes (or fails naming objects); the next apply converges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_restart_mid_apply_is_ridden_out_or_named_and_the_next_apply_converges() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "restart-short").await;
    inv.numbered_profiles(&ns, 0..PROFILES).await;
    let proxy = FaultProxy::start(inv.client.clone()).await;
    let tf = workspace(&proxy, &ns);

    let (first, _) = apply_through_a_cut(&proxy, &tf, SHORT_CUT).await;
    if first.ok {
        let state = state_clusters(&tf);
        assert_eq!(
            state.len(),
            PROFILES,
            "the apply succeeded without registering every cluster"
        );
    } else {
        let errors = assert_errors_name_objects(&first.out, &ns);
        eprintln!("the apply failed with {errors} errors, each naming an object");
    }

    let second = run_bounded(&tf, APPLY, "apply-2").await;
    eprintln!(
        "second apply: ok = {} in {:?} ({} retries)",
        second.ok, second.took, second.retries
    );
    assert_converged(&inv, &tf, &ns, &second).await;
    tf.run_ok(&["destroy", "-input=false", "-no-color", "-auto-approve"]);
}

/// A cut longer than the retry bound, with `strict = true` (per-cluster failures are errors): the apply fails
/// naming objects within a bounded time once the server is back, its state is what exists, and the next apply
/// converges. (Without `strict` the same failures are warnings naming the same objects; see tests/e2e/dying_runs.rs
/// and tests/e2e/exec_scope.rs for that default.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_outage_mid_apply_fails_naming_objects_and_the_next_apply_converges() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "restart-long").await;
    inv.numbered_profiles(&ns, 0..PROFILES).await;
    let proxy = FaultProxy::start(inv.client.clone()).await;
    let tf = workspace(&proxy, &ns);
    write_workspace(&tf, &proxy, &ns, "  strict = true");

    let (first, after_back) = apply_through_a_cut(&proxy, &tf, LONG_CUT).await;
    assert!(
        !first.ok,
        "every operation in flight during a {LONG_CUT:?} cut exhausts its retries, yet the apply succeeded:\n{}",
        first.out
    );
    let errors = assert_errors_name_objects(&first.out, &ns);
    eprintln!("the apply failed with {errors} errors, each naming an object");
    // Once the server is back, an operation in flight ends within one bound and the cluster's second write
    // within another; the remaining writes and the CLI's own work take a few seconds.
    let bound = io::OPERATION_BOUND * 2 + Duration::from_secs(30);
    assert!(
        after_back <= bound,
        "the apply ended {after_back:?} after the server was back (bound {bound:?})"
    );

    // State is what exists: every cluster the state lists has both objects on the server, and every cluster
    // with both objects is in the state.
    let state = resource_clusters(&tf);
    let output: BTreeSet<String> = state_clusters(&tf).keys().cloned().collect();
    eprintln!(
        "after the failed apply: the resource's clusters attribute lists {}, the clusters output {}",
        state.len(),
        output.len()
    );
    let (scs, secrets) = on_server(&inv.client, &ns, &ns).await;
    // A cluster is in state once any of its objects exists (the Secret is written first; a cluster whose
    // SveltosCluster write failed is in state with its Secret only, and the next plan writes the rest).
    let present: BTreeSet<String> = scs
        .iter()
        .cloned()
        .chain(
            secrets
                .iter()
                .filter_map(|s| s.strip_suffix("-sveltos-kubeconfig").map(String::from)),
        )
        .collect();
    eprintln!(
        "after the failed apply: {} clusters in state, {} SveltosClusters and {} Secrets on the server",
        state.len(),
        scs.len(),
        secrets.len()
    );
    // Checked after the next apply, so that a failure reports both.
    let state_is_what_exists = (state == present).then_some(()).ok_or_else(|| {
        format!(
            "after the failed apply, state lists clusters with no object on the server: {:?}; clusters with an \
             object on the server missing from state: {:?}",
            state.difference(&present).collect::<Vec<_>>(),
            present.difference(&state).collect::<Vec<_>>()
        )
    });
    if let Err(e) = &state_is_what_exists {
        eprintln!("{e}");
    }

    // A create that fails is marked tainted by Terraform, whose next plan would replace the bridge: deregister
    // every cluster, then register them again. The provider refuses that replacement and says how to resume.
    let tainted = tf.show_json()["values"]["root_module"]["resources"][0]["tainted"] == true;
    assert!(tainted, "Terraform marks a failed create tainted");
    let refused = run_bounded(&tf, APPLY, "apply-tainted").await;
    let said = support::inventory::flat(&refused.out.replace('│', " "));
    assert!(
        !refused.ok
            && said.contains("Bridge tainted after a failed first apply")
            && said.contains("untaint"),
        "the replacement of a tainted bridge is refused, naming untaint:\n{}",
        refused.out
    );
    let (scs_after, secrets_after) = on_server(&inv.client, &ns, &ns).await;
    assert_eq!(
        (scs_after.len(), secrets_after.len()),
        (scs.len(), secrets.len()),
        "the refused replacement deregistered nothing"
    );
    tf.run_ok(&["untaint", "-no-color", "sveltos_cluster_inventory_bridge.x"]);

    let second = run_bounded(&tf, APPLY, "apply-2").await;
    eprintln!(
        "apply after untaint: ok = {} in {:?} ({} retries); its diagnostics:\n{}",
        second.ok,
        second.took,
        second.retries,
        summaries(&second.out)
    );
    assert_converged(&inv, &tf, &ns, &second).await;
    if let Err(e) = state_is_what_exists {
        panic!("{e}");
    }
    tf.run_ok(&["destroy", "-input=false", "-no-color", "-auto-approve"]);
}

/// The proxy's `Down` mode as the retry policy sees it: refused connections and dropped requests are retried; a
/// cut shorter than the backoffs is ridden out, a permanent one fails within the bound naming the object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_down_server_is_retried_then_named() {
    let env = support::TestEnv::get();
    let admin = env.client().await;
    let ns = unique_namespace(&admin, "restart-probe").await;
    let cm = ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some("probe".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    Api::<ConfigMap>::namespaced(admin.clone(), &ns)
        .create(&Default::default(), &cm)
        .await
        .expect("create the probe ConfigMap");
    let proxy = FaultProxy::start(admin).await;
    let client = config::connect(
        &config::KubeSettings {
            host: Some(proxy.url()),
            ..Default::default()
        },
        &|_| None,
    )
    .expect("client for the proxy");

    // Down for good: connections are refused; the GET gives up within the retry window, naming the object.
    proxy.set(Mode::Down);
    let started = Instant::now();
    let err = io::get_opt::<ConfigMap>(&client, &ns, "probe")
        .await
        .expect_err("nothing listens");
    let took = started.elapsed();
    eprintln!("down: failed after {took:?}: {err}");
    assert!(took <= io::RETRY_WINDOW, "{took:?}");
    assert!(
        err.to_string()
            .starts_with(&format!("get ConfigMap {ns}/probe: ")),
        "{err}"
    );
    assert_eq!(err.code, None, "{err}");

    // Down for 1.5 s while a GET is retried: it succeeds once the proxy listens again.
    let get = io::get_opt::<ConfigMap>(&client, &ns, "probe");
    let restore = async {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        proxy.set(Mode::Forward);
    };
    let (got, ()) = tokio::join!(get, restore);
    assert!(got.expect("the GET rides out the cut").is_some());
    assert_eq!(proxy.requests(), 1, "one request once the proxy was back");
}

/// An update whose first write (the bridge's claim record, written because the configuration changed) is cut,
/// and whose retries then get 503s: the apply stops before touching any cluster, and the state stays exactly
/// what it was. (Apply leaves the prior `clusters` undecoded, tens of megabytes at ten thousand clusters, and
/// answers such a failure with the prior state as the CLI sent it.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_that_stops_before_writing_keeps_the_state_whole() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "restart-keep").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for n in ["k1", "k2", "k3"] {
        inv.profile_with_secret(&ns, n, &[], Json::Null, &kc).await;
    }
    let proxy = FaultProxy::start(inv.client.clone()).await;
    let tf = workspace(&proxy, &ns);
    let first = run_bounded(&tf, APPLY, "apply-1").await;
    assert!(first.ok, "{}", first.out);
    let address = "sveltos_cluster_inventory_bridge.x";
    let before = tf.state_resources()[address]["values"].clone();
    assert_eq!(
        before["clusters"].as_object().map(|c| c.len()),
        Some(3),
        "{before}"
    );

    write_workspace(&tf, &proxy, &ns, "  extra_labels = { team = \"two\" }");
    proxy.cut_after_writes(proxy.writes() + 1);
    let apply = run_bounded(&tf, APPLY, "apply-2");
    tokio::pin!(apply);
    tokio::select! {
        at = proxy.wait_cut(HANG) => { at.expect("the proxy never went down"); }
        run = &mut apply => panic!("the apply wrote nothing (ok = {}):\n{}", run.ok, run.out),
    }
    proxy.set(Mode::Unavailable);
    let second = apply.await;
    proxy.set(Mode::Forward);
    assert!(!second.ok, "the apply succeeded:\n{}", second.out);
    assert!(
        second.out.contains("claim") || second.out.contains("503"),
        "{}",
        second.out
    );
    let after = tf.state_resources()[address]["values"].clone();
    assert_eq!(after, before, "the failed apply changed the state");
    for n in ["k1", "k2", "k3"] {
        let sc = Api::<SveltosCluster>::namespaced(inv.client.clone(), &ns)
            .get(n)
            .await
            .unwrap();
        let labels = sc.metadata.labels.unwrap_or_default();
        assert!(!labels.contains_key("team"), "{n} written: {labels:?}");
    }
    tf.run_ok(&["destroy", "-input=false", "-no-color", "-auto-approve"]);
}
