//! A run that dies costs no manual step. Each test starts `tofu apply`, kills it at a point it chooses (once K of
//! the objects exist, K drawn per run), and then runs a plain `tofu apply`, which must converge: every cluster
//! registered, nothing reported as "carrying the bridge's label but not created by it", an empty plan after it,
//! and nothing left once destroyed. Ways of dying: the provider SIGKILLed, the CLI SIGKILLed (its provider must
//! then be gone within 3 s), the CLI interrupted once (SIGINT, a graceful stop). Phases: the bridge's first apply,
//! and growing an existing bridge. Plus the attack: an object planted with the bridge's label (and a mark copied
//! from one of its objects) at a name the dead run had not written yet is never adopted.
//!
//! `DYING_RUNS_N` sets the number of ClusterProfiles (default 120; the measurement used 400).

mod support;

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use kube::api::{Api, ListParams};
use serde_json::Value as Json;
use support::inventory::{Inv, apply_ok, bridge, flat, run, state_clusters};
use support::{Cli, Tf, fixtures, pid_alive, provider_binary, unique_name, unique_namespace};
use tfsveltos::api::{SveltosCluster, keys};

fn n() -> usize {
    std::env::var("DYING_RUNS_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(120)
}

/// A K in [n/8, n/2], different per run (printed, so a failing run can be repeated with `DYING_RUNS_K`).
fn k(n: usize) -> usize {
    if let Some(k) = std::env::var("DYING_RUNS_K")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return k;
    }
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as usize;
    n / 8 + seed % (n / 2 - n / 8).max(1)
}

#[derive(Clone, Copy, Debug)]
enum Victim {
    /// SIGKILL to the provider process.
    Provider,
    /// SIGKILL to the CLI.
    Cli,
    /// SIGINT to the CLI (a graceful stop).
    CliInterrupt,
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The provider processes started (directly or not) by the CLI process `cli`.
fn providers_of(cli: u32) -> Vec<u32> {
    let binary = provider_binary();
    let name = binary.file_name().unwrap().to_string_lossy().into_owned();
    support::pids_with_cmdline_containing(&name)
        .into_iter()
        .filter(|pid| {
            let mut p = *pid;
            for _ in 0..8 {
                match parent_of(p) {
                    Some(pp) if pp == cli => return true,
                    Some(pp) if pp > 1 => p = pp,
                    _ => return false,
                }
            }
            false
        })
        .collect()
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) with a pid this test started (or its child) and a plain signal number.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

async fn labelled(client: &kube::Client, bridge: &str) -> usize {
    Api::<SveltosCluster>::all(client.clone())
        .list_metadata(&ListParams::default().labels(&format!("{}={bridge}", keys::BRIDGE_LABEL)))
        .await
        .map(|l| l.items.len())
        .unwrap_or(0)
}

/// Starts `apply`, waits until `k` SveltosClusters of `bridge` exist, and kills `victim`. Returns how many
/// existed when the CLI had exited.
async fn apply_killed(tf: &Tf, inv: &Inv, bridge: &str, k: usize, victim: Victim) -> usize {
    let mut child: Child = tf
        .command(&["apply", "-input=false", "-no-color", "-auto-approve"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting apply");
    let cli = child.id();
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if labelled(&inv.client, bridge).await >= k {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "apply finished before {k} objects existed"
        );
        assert!(Instant::now() < deadline, "apply never reached {k} objects");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let providers = providers_of(cli);
    match victim {
        Victim::Provider => {
            assert!(!providers.is_empty(), "no provider process found");
            for p in &providers {
                signal(*p, libc::SIGKILL);
            }
        }
        Victim::Cli => signal(cli, libc::SIGKILL),
        Victim::CliInterrupt => signal(cli, libc::SIGINT),
    }
    let status = child.wait().unwrap();
    if let Victim::Cli = victim {
        // The provider of a killed CLI is gone within 3 s.
        let gone_by = Instant::now() + Duration::from_secs(3);
        while providers.iter().any(|p| pid_alive(*p)) {
            assert!(
                Instant::now() < gone_by,
                "the provider outlived its CLI by more than 3 s"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    println!("{victim:?} killed at K = {k}: CLI exited with {status}");
    labelled(&inv.client, bridge).await
}

/// The plain apply after the dead one: converges with no foreign-object warning, then an empty plan; destroy
/// leaves nothing.
async fn converges(tf: &Tf, inv: &Inv, bridge: &str, ns: &str, total: usize) {
    let out = flat(&apply_ok(tf));
    assert!(
        !out.contains("were not created by it") && !out.contains("carries this bridge's label"),
        "the dead run's objects are taken for someone else's:\n{out}"
    );
    assert_eq!(state_clusters(tf).len(), total, "{out}");
    assert_eq!(labelled(&inv.client, bridge).await, total);
    assert_eq!(tf.plan(), 0, "the plan after convergence is empty");
    tf.destroy();
    assert_eq!(
        labelled(&inv.client, bridge).await,
        0,
        "destroy left objects"
    );
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(inv.client.clone(), ns);
    let left = secrets
        .list_metadata(&ListParams::default().labels(&format!("{}={bridge}", keys::BRIDGE_LABEL)))
        .await
        .unwrap()
        .items
        .len();
    assert_eq!(left, 0, "destroy left Secrets");
}

async fn inventory(inv: &Inv, ns: &str, from: usize, to: usize) {
    let kc = fixtures::unreachable_kubeconfig("dying");
    for i in from..to {
        inv.profile_with_secret(ns, &format!("c{i:04}"), &[], Json::Null, &kc)
            .await;
    }
}

async fn first_apply_dies(victim: Victim) {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "dying").await;
    let name = unique_name("dying");
    let n = n();
    inventory(&inv, &ns, 0, n).await;
    let tf = inv.tf(&Cli::tofu(), &bridge(&name, &[&ns], ""));
    let k = k(n);
    let existed = apply_killed(&tf, &inv, &name, k, victim).await;
    println!("first apply, {victim:?}: {existed} of {n} SveltosClusters existed after the kill");
    converges(&tf, &inv, &name, &ns, n).await;
}

async fn growing_apply_dies(victim: Victim) {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "growing").await;
    let name = unique_name("growing");
    let n = n();
    inventory(&inv, &ns, 0, n / 2).await;
    let tf = inv.tf(&Cli::tofu(), &bridge(&name, &[&ns], ""));
    apply_ok(&tf);
    inventory(&inv, &ns, n / 2, n).await;
    let k = n / 2 + k(n / 2);
    let existed = apply_killed(&tf, &inv, &name, k, victim).await;
    println!("growing apply, {victim:?}: {existed} of {n} SveltosClusters existed after the kill");
    converges(&tf, &inv, &name, &ns, n).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_killed_during_the_first_apply() {
    first_apply_dies(Victim::Provider).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_killed_while_growing_a_bridge() {
    growing_apply_dies(Victim::Provider).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cli_killed_during_the_first_apply() {
    first_apply_dies(Victim::Cli).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cli_killed_while_growing_a_bridge() {
    growing_apply_dies(Victim::Cli).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cli_interrupted_while_growing_a_bridge() {
    growing_apply_dies(Victim::CliInterrupt).await;
}

/// A run dies while growing the bridge; before the next apply a tenant plants, at a name the dead run had not
/// written yet, a SveltosCluster with the bridge's label and a mark copied from one of the bridge's objects. The
/// next apply recognises the dead run's objects, but never adopts the planted one: it is reported and left
/// exactly as it is.
#[tokio::test(flavor = "multi_thread")]
async fn an_object_planted_after_a_dead_run_is_never_adopted() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "planted").await;
    let name = unique_name("planted");
    let n = 60;
    inventory(&inv, &ns, 0, n / 2).await;
    let tf = inv.tf(&Cli::tofu(), &bridge(&name, &[&ns], ""));
    apply_ok(&tf);
    inventory(&inv, &ns, n / 2, n).await;
    apply_killed(&tf, &inv, &name, n / 2 + 5, Victim::Provider).await;
    // The last profile's SveltosCluster does not exist yet (the run died early): plant one.
    let scs: Api<SveltosCluster> = Api::namespaced(inv.client.clone(), &ns);
    let mut target = None;
    for i in (0..n).rev() {
        let c = format!("c{i:04}");
        if scs.get_opt(&c).await.unwrap().is_none() {
            target = Some(c);
            break;
        }
    }
    let target = target.expect("a name the dead run did not write");
    let donor = scs.get("c0000").await.unwrap();
    let copied = donor
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(tfsveltos::bridge::ownership::MARK_ANNOTATION))
        .cloned()
        .expect("the bridge's objects carry a run mark");
    inv.foreign_sveltos_cluster(&ns, &target, &[(keys::BRIDGE_LABEL, &name)])
        .await;
    let mut planted = scs.get(&target).await.unwrap();
    planted
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(tfsveltos::bridge::ownership::MARK_ANNOTATION.into(), copied);
    planted.metadata.managed_fields = None;
    let planted = scs
        .replace(&target, &Default::default(), &planted)
        .await
        .unwrap();
    let version = planted.metadata.resource_version.clone();
    let (ok, out) = run(
        &tf,
        &["apply", "-input=false", "-no-color", "-auto-approve"],
    );
    let out = flat(&out);
    assert!(ok, "{out}");
    assert!(
        out.contains(&format!("SveltosCluster {ns}/{target}")),
        "the planted object is named:\n{out}"
    );
    assert_eq!(
        scs.get(&target).await.unwrap().metadata.resource_version,
        version,
        "the planted object was modified"
    );
    let clusters = state_clusters(&tf);
    let registered = clusters
        .values()
        .filter(|c| !c["sveltos_cluster"].is_null())
        .count();
    assert_eq!(registered, n - 1, "every other cluster is registered");
    // The planted name is not registered: at most the dead run's Secret there is kept as it is.
    let key = format!("{ns}/{target}");
    assert!(
        clusters
            .get(&key)
            .is_none_or(|c| c["sveltos_cluster"].is_null()),
        "{:?}",
        clusters.get(&key)
    );
    tf.destroy();
    assert!(
        scs.get_opt(&target).await.unwrap().is_some(),
        "destroy deleted the planted object"
    );
}
