//! A run that dies costs no manual step. Each case starts a run, kills it at a point it chooses (once K objects
//! exist, or once K have gone, K drawn per run and printed), and then runs a plain `apply` (a plain `destroy` when
//! the destroy was killed), which must converge: every cluster registered, nothing reported as "carrying the
//! bridge's label but not created by it", an empty plan after it, and nothing left once destroyed (no
//! SveltosCluster, no bridged Secret, no claim).
//!
//! The matrix is way of dying × phase:
//! * ways of dying: the provider `SIGKILL`ed; the CLI `SIGKILL`ed (its provider must then be gone within 3 s); the
//!   CLI interrupted once (`SIGINT`, a graceful stop); the API server `SIGKILL`ed and started again on the same
//!   etcd and port (`support::apiserver`; these cases share one environment of their own, one at a time);
//! * phases: the bridge's first apply; growing an existing bridge (N/2 profiles added to N/2); shrinking it (N/2
//!   of N profiles removed: the deregistration dies midway); destroy.
//!
//! Every case runs with OpenTofu; the cases where the CLI's own handling matters (the provider or the CLI killed,
//! the CLI interrupted, in the first apply and while growing, and the CLI killed while shrinking and destroying)
//! also run with the `terraform` on PATH. Plus the attack: an object planted with the bridge's label (and a mark
//! copied from one of its objects) at a name the dead run had not written yet is never adopted.
//!
//! `DYING_RUNS_N` sets the number of ClusterProfiles (default 48; the measurement used 400);
//! `DYING_RUNS_K` fixes K. Each case prints one `figure:` line (N, K, counts, timings).

use std::process::ExitStatus;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams};
use support::apiserver::Restartable;
use support::inventory::{Inv, apply_ok, bridge, flat, report, run, state_clusters};
use support::{
    Cli, Tf, client_for, fixtures, pid_alive, provider_binary, unique_name, unique_namespace,
};
use tfsveltos::api::{ClusterProfile, SveltosCluster, keys};
use tfsveltos::bridge::ownership::{DEFAULT_CLAIM_NAMESPACE, claim_name};

const APPLY: &[&str] = &["apply", "-input=false", "-no-color", "-auto-approve"];
const DESTROY: &[&str] = &["destroy", "-input=false", "-no-color", "-auto-approve"];

/// A killed run (or, for the API server, one that lost its server) must have exited within this.
const CLI_BOUND: Duration = Duration::from_secs(300);

fn n() -> usize {
    std::env::var("DYING_RUNS_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

/// A K in [n/8, n/2), different per run (printed, so a failing run can be repeated with `DYING_RUNS_K`).
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
    (n / 8).max(1) + seed % (n / 2 - n / 8).max(1)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Victim {
    /// SIGKILL to the provider process.
    Provider,
    /// SIGKILL to the CLI.
    Cli,
    /// SIGINT to the CLI (a graceful stop).
    CliInterrupt,
    /// SIGKILL to the kube-apiserver, started again at once on the same etcd and port.
    ApiServer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// The bridge's first apply, N profiles; killed once K SveltosClusters exist.
    First,
    /// N/2 profiles added to a bridge of N/2; killed once K of the new SveltosClusters exist.
    Growing,
    /// N/2 of the N profiles of a bridge removed; killed once K SveltosClusters have gone.
    Shrinking,
    /// `destroy` of a bridge of N; killed once K SveltosClusters have gone.
    Destroy,
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

/// How many SveltosClusters carry bridge `bridge`'s label.
async fn labelled(client: &kube::Client, bridge: &str) -> usize {
    Api::<SveltosCluster>::all(client.clone())
        .list_metadata(&ListParams::default().labels(&format!("{}={bridge}", keys::BRIDGE_LABEL)))
        .await
        .expect("listing the bridge's SveltosClusters")
        .items
        .len()
}

/// How many Secrets in `ns` carry bridge `bridge`'s label.
async fn labelled_secrets(client: &kube::Client, ns: &str, bridge: &str) -> usize {
    Api::<Secret>::namespaced(client.clone(), ns)
        .list_metadata(&ListParams::default().labels(&format!("{}={bridge}", keys::BRIDGE_LABEL)))
        .await
        .expect("listing the bridge's Secrets")
        .items
        .len()
}

/// What happened to a killed run.
struct Killed {
    /// SveltosClusters of the bridge when the victim was killed.
    at_kill: usize,
    /// ... and once the CLI had exited.
    after: usize,
    status: ExitStatus,
    /// From the start of the run to the kill.
    until_kill: Duration,
    /// For the API server: how long it took to serve again after the kill.
    down: Option<Duration>,
    /// The first line of each diagnostic the run printed.
    diagnostics: Vec<String>,
}

/// The first line of every diagnostic but the development-overrides warning.
fn summaries(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| l.trim_start_matches(['│', '╷', ' ']))
        .filter(|l| l.starts_with("Error: ") || l.starts_with("Warning: "))
        .filter(|l| !l.contains("development overrides") && !l.contains("Provider development"))
        .map(String::from)
        .collect()
}

/// Runs `args`, waits until `reached(number of the bridge's SveltosClusters)`, and kills `victim` (for the API
/// server: kills it, starts it again and waits until it serves); then waits for the CLI to exit.
async fn run_killed(
    tf: &Tf,
    inv: &Inv,
    bridge: &str,
    args: &[&str],
    reached: impl Fn(usize) -> bool,
    victim: Victim,
    server: Option<&mut Restartable>,
) -> Killed {
    let log = tf.dir().join("killed-run.log");
    let file = std::fs::File::create(&log).expect("creating the run's log");
    let mut child = tf
        .command(args)
        .stdout(file.try_clone().expect("log"))
        .stderr(file)
        .spawn()
        .expect("starting the run");
    let started = Instant::now();
    let cli = child.id();
    let at_kill = loop {
        let now = labelled(&inv.client, bridge).await;
        if reached(now) {
            break now;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before the kill point ({now} SveltosClusters); a larger DYING_RUNS_N gives it more time:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        assert!(
            started.elapsed() < CLI_BOUND,
            "the run never reached the kill point ({now} SveltosClusters)"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let until_kill = started.elapsed();
    let providers = providers_of(cli);
    let mut down = None;
    match victim {
        Victim::Provider => {
            assert!(!providers.is_empty(), "no provider process found");
            for p in &providers {
                signal(*p, libc::SIGKILL);
            }
        }
        Victim::Cli => signal(cli, libc::SIGKILL),
        Victim::CliInterrupt => signal(cli, libc::SIGINT),
        Victim::ApiServer => {
            let server = server.expect("the API server of the test's own environment");
            server.kill();
            server.restart();
            down = Some(
                server
                    .wait_serving(&inv.client, Duration::from_secs(120))
                    .await,
            );
        }
    }
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
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > CLI_BOUND {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the run did not end within {CLI_BOUND:?}:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let diagnostics = summaries(&std::fs::read_to_string(&log).unwrap_or_default());
    Killed {
        at_kill,
        after: labelled(&inv.client, bridge).await,
        status,
        until_kill,
        down,
        diagnostics,
    }
}

/// Fails on a diagnostic about objects this bridge does not own: after a dead run of this same state there is
/// none (its objects are recognised by their marks).
fn no_foreign_warning(out: &str, what: &str) {
    let out = flat(out);
    assert!(
        !out.contains("were not created by it")
            && !out.contains("carries this bridge's label")
            && !out.contains("this bridge does not own"),
        "{what}: the dead run's objects are taken for someone else's:\n{out}"
    );
}

/// Nothing of bridge `bridge` is left: no SveltosCluster, no Secret in `ns`, no claim.
async fn nothing_left(inv: &Inv, bridge: &str, ns: &str) {
    assert_eq!(
        labelled(&inv.client, bridge).await,
        0,
        "destroy left SveltosClusters"
    );
    assert_eq!(
        labelled_secrets(&inv.client, ns, bridge).await,
        0,
        "destroy left Secrets"
    );
    let claim = Api::<ConfigMap>::namespaced(inv.client.clone(), DEFAULT_CLAIM_NAMESPACE)
        .get_opt(&claim_name(bridge))
        .await
        .expect("reading the claim");
    assert!(claim.is_none(), "destroy left the claim");
}

/// The plain run after the dead one: an apply that converges (every cluster registered, no foreign-object
/// warning, an empty plan after it) and a destroy that leaves nothing; or, after a killed destroy, a plain destroy
/// that leaves nothing. Returns its output's diagnostics.
async fn converges(
    tf: &Tf,
    inv: &Inv,
    bridge: &str,
    ns: &str,
    phase: Phase,
    total: usize,
) -> Vec<String> {
    if phase == Phase::Destroy {
        let (ok, out) = run(tf, DESTROY);
        assert!(ok, "the destroy after the dead one failed:\n{out}");
        no_foreign_warning(&out, "destroy");
        nothing_left(inv, bridge, ns).await;
        return summaries(&out);
    }
    let out = apply_ok(tf);
    no_foreign_warning(&out, "apply");
    let clusters = state_clusters(tf);
    let registered = clusters
        .values()
        .filter(|c| !c["sveltos_cluster"].is_null())
        .count();
    assert_eq!((clusters.len(), registered), (total, total), "{out}");
    assert_eq!(labelled(&inv.client, bridge).await, total);
    assert_eq!(labelled_secrets(&inv.client, ns, bridge).await, total);
    assert_eq!(tf.plan(), 0, "the plan after convergence is empty");
    let (ok, destroyed) = run(tf, DESTROY);
    assert!(ok, "destroy failed:\n{destroyed}");
    nothing_left(inv, bridge, ns).await;
    summaries(&out)
}

fn profile_name(i: usize) -> String {
    format!("c{i:04}")
}

/// Creates `obj`, retrying what a loaded test machine answers now and then (a 5xx: the API server lost its etcd
/// connection for a moment); one that exists already (an earlier attempt went through) is fine.
async fn create<K>(api: &Api<K>, obj: &K)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    for attempt in 1.. {
        match api.create(&Default::default(), obj).await {
            Ok(_) => return,
            Err(kube::Error::Api(s)) if s.code == 409 => return,
            Err(e) if attempt < 5 => {
                println!("creating {:?}: {e}; retrying", obj.meta().name);
                tokio::time::sleep(Duration::from_millis(200 * attempt)).await;
            }
            Err(e) => panic!("creating {:?}: {e}", obj.meta().name),
        }
    }
}

/// Profiles `from..to` in `ns`, each with a kubeconfig Secret next to it.
async fn inventory(inv: &Inv, ns: &str, from: usize, to: usize) {
    let kc = fixtures::unreachable_kubeconfig("dying");
    let profiles = Api::<ClusterProfile>::namespaced(inv.client.clone(), ns);
    let secrets = Api::<Secret>::namespaced(inv.client.clone(), ns);
    futures::stream::iter(from..to)
        .for_each_concurrent(8, |i| {
            let (kc, profiles, secrets) = (&kc, &profiles, &secrets);
            async move {
                let name = profile_name(i);
                create(profiles, &fixtures::cluster_profile(ns, &name, "test", &[])).await;
                let secret = fixtures::secret(
                    ns,
                    &format!("{name}-src"),
                    &[(keys::CLUSTER_PROFILE_LABEL, name.as_str())],
                    &[("Config", kc.as_str())],
                );
                create(secrets, &secret).await;
            }
        })
        .await;
}

/// Removes profiles `from..to` of `ns` (and their kubeconfig Secrets).
async fn remove(inv: &Inv, ns: &str, from: usize, to: usize) {
    futures::stream::iter(from..to)
        .for_each_concurrent(8, |i| async move {
            inv.delete_profile(ns, &profile_name(i)).await;
            inv.delete_secret(ns, &format!("{}-src", profile_name(i)))
                .await;
        })
        .await;
}

/// The environment the API-server cases kill servers in: started by the first of them, one case at a time (the
/// watchdog stops it when the test binary exits).
static RESTARTABLE: tokio::sync::Mutex<Option<Restartable>> = tokio::sync::Mutex::const_new(None);

/// One case of the matrix with `cli` (`tofu`, or the `terraform` on PATH: skipped, or failed under `CI=true`,
/// when there is none).
async fn case(cli: &str, victim: Victim, phase: Phase) {
    let cli = match cli {
        "tofu" => Cli::tofu(),
        _ => match Cli::terraform_needed() {
            Some(c) => c,
            None => return,
        },
    };
    let mut server = None;
    let inv = if victim == Victim::ApiServer {
        let mut guard = RESTARTABLE.lock().await;
        if guard.is_none() {
            *guard = Some(
                tokio::task::spawn_blocking(Restartable::start)
                    .await
                    .unwrap(),
            );
        }
        let r = guard.as_mut().unwrap();
        if r.is_down() {
            // A case that failed between the kill and the restart.
            r.restart();
        }
        let inv = Inv {
            client: client_for(&r.env.kubeconfig).await,
            kubeconfig: r.env.kubeconfig.clone(),
        };
        r.wait_serving(&inv.client, Duration::from_secs(120)).await;
        server = Some(guard);
        inv
    } else {
        Inv::new().await
    };
    let n = n();
    let half = n / 2;
    let ns = unique_namespace(&inv.client, "dying").await;
    let name = unique_name(&format!("dying-{}", cli.name));
    // Shrinking removes half the fleet: more than the default deregistration guard allows.
    let tf = inv.tf(
        &cli,
        &bridge(&name, &[&ns], &format!("  max_removals = {n}")),
    );
    // The objects before the run, the kill point, and the objects once converged.
    let (k, args, total): (usize, &[&str], usize) = match phase {
        Phase::First => {
            inventory(&inv, &ns, 0, n).await;
            (k(n), APPLY, n)
        }
        Phase::Growing => {
            inventory(&inv, &ns, 0, half).await;
            apply_ok(&tf);
            inventory(&inv, &ns, half, n).await;
            (k(n - half), APPLY, n)
        }
        Phase::Shrinking => {
            inventory(&inv, &ns, 0, n).await;
            apply_ok(&tf);
            remove(&inv, &ns, half, n).await;
            (k(n - half), APPLY, half)
        }
        Phase::Destroy => {
            inventory(&inv, &ns, 0, n).await;
            apply_ok(&tf);
            (k(n), DESTROY, 0)
        }
    };
    let before = labelled(&inv.client, &name).await;
    let growing = matches!(phase, Phase::First | Phase::Growing);
    let reached = move |now: usize| {
        if growing {
            now >= before + k
        } else {
            now + k <= before
        }
    };
    let killed = run_killed(
        &tf,
        &inv,
        &name,
        args,
        reached,
        victim,
        server.as_mut().and_then(|g| g.as_mut()),
    )
    .await;
    println!(
        "{} {victim:?} × {phase:?}: the dead run's diagnostics: {:?}",
        cli.name, killed.diagnostics
    );
    let started = Instant::now();
    let diagnostics = converges(&tf, &inv, &name, &ns, phase, total).await;
    let took = started.elapsed();
    report(&format!(
        "dying_runs {} {victim:?} × {phase:?}: N = {n}, K = {k} ({} SveltosClusters before, {} at the kill after \
         {:.1} s, {} once the run had exited with {}{}); the plain {} converged in {:.1} s{}",
        cli.name,
        before,
        killed.at_kill,
        killed.until_kill.as_secs_f64(),
        killed.after,
        killed.status,
        killed
            .down
            .map(|d| format!(
                "; the API server served again {:.1} s after its kill",
                d.as_secs_f64()
            ))
            .unwrap_or_default(),
        if phase == Phase::Destroy {
            "destroy"
        } else {
            "apply"
        },
        took.as_secs_f64(),
        if diagnostics.is_empty() {
            String::new()
        } else {
            format!(" with {diagnostics:?}")
        }
    ));
}

macro_rules! cases {
    ($($name:ident: $cli:literal, $victim:ident, $phase:ident;)*) => {$(
        #[tokio::test(flavor = "multi_thread")]
        async fn $name() {
            case($cli, Victim::$victim, Phase::$phase).await;
        }
    )*};
}

cases! {
    provider_killed_during_the_first_apply: "tofu", Provider, First;
    provider_killed_while_growing_a_bridge: "tofu", Provider, Growing;
    provider_killed_while_shrinking_a_bridge: "tofu", Provider, Shrinking;
    provider_killed_during_destroy: "tofu", Provider, Destroy;
    cli_killed_during_the_first_apply: "tofu", Cli, First;
    cli_killed_while_growing_a_bridge: "tofu", Cli, Growing;
    cli_killed_while_shrinking_a_bridge: "tofu", Cli, Shrinking;
    cli_killed_during_destroy: "tofu", Cli, Destroy;
    cli_interrupted_during_the_first_apply: "tofu", CliInterrupt, First;
    cli_interrupted_while_growing_a_bridge: "tofu", CliInterrupt, Growing;
    cli_interrupted_while_shrinking_a_bridge: "tofu", CliInterrupt, Shrinking;
    cli_interrupted_during_destroy: "tofu", CliInterrupt, Destroy;
    apiserver_killed_during_the_first_apply: "tofu", ApiServer, First;
    apiserver_killed_while_growing_a_bridge: "tofu", ApiServer, Growing;
    apiserver_killed_while_shrinking_a_bridge: "tofu", ApiServer, Shrinking;
    apiserver_killed_during_destroy: "tofu", ApiServer, Destroy;
    terraform_provider_killed_during_the_first_apply: "terraform", Provider, First;
    terraform_provider_killed_while_growing_a_bridge: "terraform", Provider, Growing;
    terraform_cli_killed_during_the_first_apply: "terraform", Cli, First;
    terraform_cli_killed_while_growing_a_bridge: "terraform", Cli, Growing;
    terraform_cli_killed_while_shrinking_a_bridge: "terraform", Cli, Shrinking;
    terraform_cli_killed_during_destroy: "terraform", Cli, Destroy;
    terraform_cli_interrupted_during_the_first_apply: "terraform", CliInterrupt, First;
    terraform_cli_interrupted_while_growing_a_bridge: "terraform", CliInterrupt, Growing;
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
    // Enough profiles that the provider is killed well before it has written them all, even on a loaded machine.
    let n = 120;
    inventory(&inv, &ns, 0, n / 2).await;
    let tf = inv.tf(&Cli::tofu(), &bridge(&name, &[&ns], ""));
    apply_ok(&tf);
    inventory(&inv, &ns, n / 2, n).await;
    let before = labelled(&inv.client, &name).await;
    run_killed(
        &tf,
        &inv,
        &name,
        APPLY,
        |now| now >= before + 3,
        Victim::Provider,
        None,
    )
    .await;
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
