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
//! A kill proves something only if it lands mid-run, so each case checks that it did: the CLI had not exited at
//! the kill point, the run's work on the SveltosClusters was not done there (for a killed provider, it may be when
//! the CLI then reports that the provider never answered its apply), and the run then ended as a killed one does
//! (the CLI dead of its `SIGKILL`; the interrupted CLI failing with "execution halted"; with its provider killed,
//! the run failed short of its SveltosClusters or with its apply unanswered: deletes already sent complete on the
//! server after the kill). A kill that came too late is not judged: the case runs
//! again on a fresh bridge with K halved, at most 4 times, and fails when none landed mid-run.
//!
//! `DYING_RUNS_N` sets the number of ClusterProfiles (default 48; the measurement used 400);
//! `DYING_RUNS_K` fixes the first attempt's K. Each case prints one `figure:` line (N, K, attempt, counts,
//! timings).

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams};
use support::apiserver::Restartable;
use support::inventory::{Inv, apply_ok, bridge, flat, report, run, state_clusters};
use support::{
    Cli, TestEnv, Tf, client_for, fixtures, pid_alive, provider_binary, unique_name,
    unique_namespace,
};
use tfsveltos::api::{ClusterProfile, SveltosCluster, keys};
use tfsveltos::domain::ownership::{DEFAULT_CLAIM_NAMESPACE, Kind, claim_name};

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

/// Where a run is killed: once `k` SveltosClusters of the bridge have appeared (a run that writes) or gone (one
/// that deletes) since the `before` it started with; its work on them is done once there are `end`.
#[derive(Clone, Copy, Debug)]
struct KillPoint {
    before: usize,
    k: usize,
    end: usize,
}

impl KillPoint {
    fn reached(&self, now: usize) -> bool {
        if self.end >= self.before {
            now >= self.before + self.k
        } else {
            now + self.k <= self.before
        }
    }
}

/// What happened to a run whose kill landed mid-run.
struct Killed {
    /// SveltosClusters of the bridge when the victim was killed (`end` only for a provider whose apply was cut).
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
    /// Whether the CLI reported that the provider died before answering its `ApplyResourceChange` call.
    cut_mid_apply: bool,
}

/// Whether the CLI's output says its provider died before answering an `ApplyResourceChange` call (the message
/// OpenTofu and Terraform print when a plugin process ends during a call).
fn cut_mid_apply(out: &str) -> bool {
    out.contains("Plugin did not respond") && out.contains("(*GRPCProvider).ApplyResourceChange")
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

/// A CLI run started by [`run_killed`], its output going to a log file.
struct Running {
    child: std::process::Child,
    log: std::path::PathBuf,
    started: Instant,
}

impl Running {
    fn start(tf: &Tf, args: &[&str]) -> Running {
        let log = tf.dir().join("killed-run.log");
        let file = std::fs::File::create(&log).expect("creating the run's log");
        let child = tf
            .command(args)
            .stdout(file.try_clone().expect("log"))
            .stderr(file)
            .spawn()
            .expect("starting the run");
        Running {
            child,
            log,
            started: Instant::now(),
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// How the CLI exited, or `None` while it runs.
    fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("polling the run")
    }

    /// Waits until the CLI has exited (at most [`CLI_BOUND`] from its start).
    async fn wait(&mut self) -> ExitStatus {
        loop {
            if let Some(s) = self.exited() {
                return s;
            }
            if self.started.elapsed() > CLI_BOUND {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("the run did not end within {CLI_BOUND:?}:\n{}", self.log());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Polls the bridge's SveltosClusters until `point` is reached; `Err` when the run succeeded before (a run
    /// that fails before is a failure of the test).
    async fn until(&mut self, inv: &Inv, bridge: &str, point: KillPoint) -> Result<usize, String> {
        loop {
            let now = labelled(&inv.client, bridge).await;
            if point.reached(now) {
                return Ok(now);
            }
            if let Some(status) = self.exited() {
                assert!(
                    status.success(),
                    "the run failed before the kill point ({now} SveltosClusters):\n{}",
                    self.log()
                );
                return Err(format!(
                    "the run ended before the kill point ({now} SveltosClusters)"
                ));
            }
            assert!(
                self.started.elapsed() < CLI_BOUND,
                "the run never reached the kill point ({now} SveltosClusters)"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Kills `victim` of the run `cli` (for the API server: kills it, starts it again and waits until it serves);
/// returns how long the API server was down, or `Err` when the kill came too late (the run, or its provider,
/// had already exited).
async fn strike(
    run: &mut Running,
    inv: &Inv,
    victim: Victim,
    server: Option<&mut Restartable>,
) -> Result<Option<Duration>, String> {
    let cli = run.child.id();
    let providers = providers_of(cli);
    if let Some(s) = run.exited() {
        return Err(format!("the CLI had exited ({s}) before the kill"));
    }
    match victim {
        Victim::Provider if providers.is_empty() => {
            return Err("no provider process was left to kill".into());
        }
        Victim::Provider => providers.iter().for_each(|p| signal(*p, libc::SIGKILL)),
        Victim::Cli => signal(cli, libc::SIGKILL),
        Victim::CliInterrupt => signal(cli, libc::SIGINT),
        Victim::ApiServer => {
            let server = server.expect("the API server of the test's own environment");
            server.kill();
            let alive = run.exited().is_none();
            server.restart();
            let down = server
                .wait_serving(&inv.client, Duration::from_secs(120))
                .await;
            return if alive {
                Ok(Some(down))
            } else {
                Err("the CLI had exited when the API server was killed".into())
            };
        }
    }
    if victim == Victim::Cli {
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
    Ok(None)
}

/// Whether the kill of `victim` landed mid-run, judged from how the run ended (`Err` says why not): a CLI
/// `SIGKILL`ed died of the signal; an interrupted one stopped short ("execution halted", a failed run); a run
/// whose provider was `SIGKILL`ed failed, with the SveltosClusters short of `end` (nothing wrote after the kill) or
/// with the CLI reporting that the provider never answered its apply (what it had sent still completed).
/// The API server's kill is judged when it happens (the CLI still running).
fn landed(victim: Victim, k: &Killed, point: KillPoint) -> Result<(), String> {
    let late = match victim {
        Victim::Cli => k.status.signal() != Some(libc::SIGKILL),
        Victim::CliInterrupt => {
            k.status.success() || !k.diagnostics.iter().any(|d| d.contains("execution halted"))
        }
        // Deletes (or creates) already sent when the provider died still complete on the server, so all its
        // SveltosClusters may be done; the CLI saying the provider never answered its apply shows the kill still
        // came mid-call (nothing recorded, Secrets and state left behind).
        Victim::Provider => k.status.success() || (k.after == point.end && !k.cut_mid_apply),
        Victim::ApiServer => false,
    };
    if late {
        Err(format!(
            "the run ended {} with {} SveltosClusters (its work ends at {}) and {:?}",
            k.status, k.after, point.end, k.diagnostics
        ))
    } else {
        Ok(())
    }
}

/// Runs `args`, waits until `point` is reached, kills `victim` (see [`strike`]) and waits for the CLI to exit.
/// `Err` says why the kill did not land mid-run: the run ended before the kill point, its work on the
/// SveltosClusters was done at it (`end` reached), or the run ended as if not killed (see [`landed`]).
async fn run_killed(
    tf: &Tf,
    inv: &Inv,
    bridge: &str,
    args: &[&str],
    point: KillPoint,
    victim: Victim,
    server: Option<&mut Restartable>,
) -> Result<Killed, String> {
    let mut run = Running::start(tf, args);
    let at_kill = run.until(inv, bridge, point).await?;
    let until_kill = run.started.elapsed();
    // A provider killed once its SveltosClusters are done may still be mid-call (Secrets, the claim, the answer
    // left): `landed` judges that from the CLI's report; for the other victims the kill proves nothing.
    if at_kill == point.end && victim != Victim::Provider {
        run.wait().await;
        return Err(format!(
            "all the run's work on SveltosClusters was done at the kill point ({at_kill})"
        ));
    }
    let struck = strike(&mut run, inv, victim, server).await;
    let status = run.wait().await;
    let log = run.log();
    let killed = Killed {
        at_kill,
        after: labelled(&inv.client, bridge).await,
        status,
        until_kill,
        down: struck?,
        diagnostics: summaries(&log),
        cut_mid_apply: cut_mid_apply(&log),
    };
    landed(victim, &killed, point)?;
    Ok(killed)
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

/// A fresh namespace `<prefix>-*` with profiles `0..n/2` and a bridge `<prefix>-*` of it, applied with tofu:
/// `(namespace, bridge name, its configuration)`.
async fn half_registered(inv: &Inv, prefix: &str, n: usize) -> (String, String, Tf) {
    let ns = unique_namespace(&inv.client, prefix).await;
    let name = unique_name(prefix);
    inventory(inv, &ns, 0, n / 2).await;
    let tf = inv.tf(&Cli::tofu(), &bridge(&name, &[&ns], ""));
    apply_ok(&tf);
    (ns, name, tf)
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

/// The environment the API-server cases hold while they run.
type Held = tokio::sync::MutexGuard<'static, Option<Restartable>>;

/// The inventory a case of `victim` runs against: the shared control plane, or for the API server the
/// environment of [`RESTARTABLE`] (held until the case ends).
async fn environment(victim: Victim) -> (Inv, Option<Held>) {
    if victim != Victim::ApiServer {
        return (Inv::new().await, None);
    }
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
    (inv, Some(guard))
}

/// One attempt at a case: a bridge of its own, in a namespace of its own, with the objects before the run in
/// place.
struct Attempt {
    ns: String,
    name: String,
    tf: Tf,
    args: &'static [&'static str],
    /// SveltosClusters before the run.
    before: usize,
    /// ... once converged.
    end: usize,
    /// How many SveltosClusters the run writes or deletes (K is drawn from it).
    span: usize,
}

async fn prepare(inv: &Inv, cli: &Cli, phase: Phase, n: usize) -> Attempt {
    let half = n / 2;
    let ns = unique_namespace(&inv.client, "dying").await;
    let name = unique_name(&format!("dying-{}", cli.name));
    // Shrinking removes half the fleet: more than the default deregistration guard allows.
    let tf = inv.tf(
        cli,
        &bridge(&name, &[&ns], &format!("  max_removals = {n}")),
    );
    let (args, end, span) = match phase {
        Phase::First => {
            inventory(inv, &ns, 0, n).await;
            (APPLY, n, n)
        }
        Phase::Growing => {
            inventory(inv, &ns, 0, half).await;
            apply_ok(&tf);
            inventory(inv, &ns, half, n).await;
            (APPLY, n, n - half)
        }
        Phase::Shrinking => {
            inventory(inv, &ns, 0, n).await;
            apply_ok(&tf);
            remove(inv, &ns, half, n).await;
            (APPLY, half, n - half)
        }
        Phase::Destroy => {
            inventory(inv, &ns, 0, n).await;
            apply_ok(&tf);
            (DESTROY, 0, n)
        }
    };
    let before = labelled(&inv.client, &name).await;
    Attempt {
        ns,
        name,
        tf,
        args,
        before,
        end,
        span,
    }
}

/// How many times a case runs before it gives up landing its kill mid-run; K halves each time.
const ATTEMPTS: usize = 4;

/// One case of the matrix with `cli` (`tofu`, or the `terraform` on PATH: skipped, or failed under `CI=true`,
/// when there is none). A kill that comes too late (the run had done its work, or ended) proves nothing: the
/// case runs again on a fresh bridge with K halved, and fails when no attempt lands mid-run.
async fn case(cli: &str, victim: Victim, phase: Phase) {
    let cli = match cli {
        "tofu" => Cli::tofu(),
        _ => match Cli::terraform_needed() {
            Some(c) => c,
            None => return,
        },
    };
    let (inv, mut held) = environment(victim).await;
    let n = n();
    let mut k = None;
    let mut late = Vec::new();
    for attempt in 1..=ATTEMPTS {
        let a = prepare(&inv, &cli, phase, n).await;
        let k_now = k.unwrap_or_else(|| self::k(a.span));
        let point = KillPoint {
            before: a.before,
            k: k_now,
            end: a.end,
        };
        let server = held.as_mut().and_then(|g| g.as_mut());
        match run_killed(&a.tf, &inv, &a.name, a.args, point, victim, server).await {
            Ok(killed) => {
                let case = format!("{} {victim:?} × {phase:?}", cli.name);
                return converged(&case, &inv, &a, phase, point, killed, attempt).await;
            }
            Err(why) => {
                println!(
                    "{} {victim:?} × {phase:?}: attempt {attempt} with K = {k_now}: the kill came too late: {why}",
                    cli.name
                );
                late.push(format!("K = {k_now}: {why}"));
                // Clean up after the finished run (best effort: nothing is judged on it).
                let _ = run(&a.tf, DESTROY);
                k = Some((k_now / 2).max(1));
            }
        }
    }
    panic!(
        "{} {victim:?} × {phase:?}: no kill landed mid-run in {ATTEMPTS} attempts (N = {n}; a larger \
         DYING_RUNS_N gives the run more to do): {late:#?}",
        cli.name
    );
}

/// After the kill that landed: the plain apply (or destroy) converges; prints the case's `figure:` line.
async fn converged(
    case: &str,
    inv: &Inv,
    a: &Attempt,
    phase: Phase,
    point: KillPoint,
    killed: Killed,
    attempt: usize,
) {
    println!(
        "{case}: the dead run's diagnostics: {:?}",
        killed.diagnostics
    );
    let started = Instant::now();
    let diagnostics = converges(&a.tf, inv, &a.name, &a.ns, phase, a.end).await;
    let took = started.elapsed();
    report(&format!(
        "dying_runs {case}: N = {}, K = {} (attempt {attempt}; {} SveltosClusters before, {} at the kill after \
         {:.1} s, {} once the run had exited with {}{}); the plain {} converged in {:.1} s{}",
        n(),
        point.k,
        a.before,
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
    // Enough profiles that the provider is killed well before it has written them all, even on a loaded machine.
    let n = 120;
    let (ns, name, tf) = half_registered(&inv, "planted", n).await;
    inventory(&inv, &ns, n / 2, n).await;
    let before = labelled(&inv.client, &name).await;
    let point = KillPoint {
        before,
        k: 3,
        end: n,
    };
    if let Err(why) = run_killed(&tf, &inv, &name, APPLY, point, Victim::Provider, None).await {
        panic!("the provider's kill did not land mid-run: {why}");
    }
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
        .and_then(|a| a.get(tfsveltos::domain::ownership::MARK_ANNOTATION))
        .cloned()
        .expect("the bridge's objects carry a run mark");
    inv.foreign_sveltos_cluster(&ns, &target, &[(keys::BRIDGE_LABEL, &name)])
        .await;
    let mut planted = scs.get(&target).await.unwrap();
    planted
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(tfsveltos::domain::ownership::MARK_ANNOTATION.into(), copied);
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

/// A new SveltosCluster (`c<from..>`) of bridge `bridge` in `ns` whose UID the running apply has journaled in the
/// claim (the claim's newest run key is not `before`, the key of the run before it), polled while the run
/// writes; `None` when the run ended first.
async fn journaled_new_cluster(
    run: &mut Running,
    inv: &Inv,
    (bridge, ns): (&str, &str),
    from: usize,
    before: Option<String>,
) -> Option<String> {
    let scs: Api<SveltosCluster> = Api::namespaced(inv.client.clone(), ns);
    let claim = claim_name(bridge);
    while run.exited().is_none() {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let read = tfsveltos::k8s::claim::read(&inv.client, DEFAULT_CLAIM_NAMESPACE, &claim).await;
        let Some(c) = read.expect("reading the claim") else {
            continue;
        };
        let Some(key) = c.keys.last().filter(|k| Some(k.fingerprint()) != before) else {
            continue;
        };
        let listed = scs.list_metadata(&ListParams::default()).await.unwrap();
        for meta in listed.items.into_iter().map(|o| o.metadata) {
            let (name, uid) = (meta.name.unwrap(), meta.uid.unwrap());
            let new = name[1..].parse::<usize>().is_ok_and(|i| i >= from);
            let id = format!("{ns}/{name}");
            if new && key.journaled_in(&c.journals, Kind::SveltosCluster, &id, &uid) {
                return Some(name);
            }
        }
    }
    None
}

/// The tenant `user` deletes its SveltosCluster `name` and creates it again as it was, label and run mark
/// included (with only get, delete and create on SveltosClusters in `ns`).
fn tenant_recreates(env: &TestEnv, user: &str, ns: &str, name: &str, dir: &std::path::Path) {
    let as_tenant = ["--as", user, "-n", ns];
    let got = env.kubectl(
        &[
            &as_tenant[..],
            &["get", "sveltoscluster", name, "-o", "json"],
        ]
        .concat(),
    );
    let mut obj: serde_json::Value = serde_json::from_str(&got).unwrap();
    let meta = obj["metadata"].as_object_mut().unwrap();
    for server_set in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "managedFields",
        "generation",
    ] {
        meta.remove(server_set);
    }
    let file = dir.join("recreated.json");
    std::fs::write(&file, obj.to_string()).unwrap();
    env.kubectl(&[&as_tenant[..], &["delete", "sveltoscluster", name]].concat());
    let file = file.to_str().unwrap();
    env.kubectl(&[&as_tenant[..], &["create", "-f", file]].concat());
}

/// L4: a run dies while growing the bridge, after a batch of its write journal holding one of its new
/// SveltosClusters reached the claim. A tenant who may only get, delete and create SveltosClusters in its
/// namespace deletes that object and creates it again with the bridge's label and the dead run's mark copied.
/// The next plan names it as carrying the bridge's label without being the bridge's; the apply neither adopts
/// nor changes it, registers every other cluster, and destroy leaves it.
#[tokio::test(flavor = "multi_thread")]
async fn an_object_recreated_with_its_mark_after_a_dead_run_is_never_adopted() {
    let env = TestEnv::get();
    let inv = Inv::new().await;
    let n = 200;
    let (ns, name, tf) = half_registered(&inv, "recreated", n).await;
    let claim = claim_name(&name);
    let read_claim = || tfsveltos::k8s::claim::read(&inv.client, DEFAULT_CLAIM_NAMESPACE, &claim);
    let batches = read_claim()
        .await
        .unwrap()
        .expect("the claim")
        .journals
        .batches();
    println!(
        "figure: write journal of the first apply of {} clusters ({} objects): {batches} batches",
        n / 2,
        n
    );
    assert!(
        batches >= 1 && batches <= n / 8,
        "one journal write per batch, not per object: {batches}"
    );
    let user = env.tenant(
        &ns,
        &[("get,delete,create", "sveltosclusters.lib.projectsveltos.io")],
    );
    inventory(&inv, &ns, n / 2, n).await;
    let before = read_claim()
        .await
        .unwrap()
        .and_then(|c| c.keys.last().map(|k| k.fingerprint()));
    let mut dying = Running::start(&tf, APPLY);
    let target = journaled_new_cluster(&mut dying, &inv, (&name, &ns), n / 2, before).await;
    let target = target.unwrap_or_else(|| {
        panic!(
            "the run ended before a batch of its journal:\n{}",
            dying.log()
        )
    });
    strike(&mut dying, &inv, Victim::Provider, None)
        .await
        .expect("the provider was killed mid-run");
    let status = dying.wait().await;
    let left = labelled(&inv.client, &name).await;
    assert!(
        !status.success() && left < n,
        "the kill landed mid-run ({left} of {n} written)"
    );
    tenant_recreates(env, &user, &ns, &target, tf.dir());
    let scs: Api<SveltosCluster> = Api::namespaced(inv.client.clone(), &ns);
    let version = scs.get(&target).await.unwrap().metadata.resource_version;
    let named = format!("SveltosCluster {ns}/{target}");
    let out = flat(&support::inventory::text(&tf.run(&[
        "plan",
        "-input=false",
        "-no-color",
    ])));
    assert!(
        out.contains("were not created by it") && out.contains(&named),
        "the plan names the recreated object as not the bridge's:\n{out}"
    );
    let (ok, out) = run(&tf, APPLY);
    let out = flat(&out);
    assert!(ok && out.contains(&named), "{out}");
    let after = scs.get(&target).await.unwrap().metadata.resource_version;
    assert_eq!(after, version, "the recreated object was changed");
    let clusters = state_clusters(&tf);
    let registered = clusters
        .values()
        .filter(|c| !c["sveltos_cluster"].is_null())
        .count();
    assert_eq!(registered, n - 1, "every other cluster is registered");
    println!(
        "figure: L4 attack at {target}: {left} of {n} SveltosClusters when the provider was killed"
    );
    tf.destroy();
    assert!(
        scs.get_opt(&target).await.unwrap().is_some(),
        "destroy deleted the recreated object"
    );
}
