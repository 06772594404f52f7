//! The real Sveltos controllers as the judge: sveltoscluster-manager and addon-controller, built from their public
//! sources and kept outside the repository (`../shared/sveltos`, or `SVELTOS_SHARED_DIR`), run as plain processes
//! against a control plane of their own.
//!
//! [`Sveltos::get`] does it once per test binary: it starts a control plane (`scripts/testenv up --owner-pid`,
//! never the shared one: the controllers act on every SveltosCluster of their API server), unpacks the binaries
//! (`../shared/sveltos/unpack` into `<target dir>/sveltos-bin`, checked against their SHA-256), applies the
//! upstream libsveltos and addon-controller CRDs over the test environment's own (server-side), and starts both
//! controllers with that control plane's admin kubeconfig. The member cluster of every bridged cluster is the same
//! API server: a bridged kubeconfig points back at it ([`Sveltos::member_kubeconfig`]).
//!
//! Nothing is left running: the controllers' command lines name the environment's directory, and the watchdog
//! `scripts/testenv` starts for this test binary stops everything started from there (`scripts/testenv down`)
//! as soon as the binary exits, however it exits.
//!
//! Without `../shared/sveltos` a test skips loudly, and fails under `CI=true` ([`super::needed`]).

use std::future::Future;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams};
use serde_json::{Value as Json, json};

use super::{TestEnv, describe_output, needed, repo_root, target_tmpdir};

/// Group of Sveltos' add-on API (`ClusterProfile`, `ClusterSummary`), not to be confused with KEP-4322's
/// `multicluster.x-k8s.io` ClusterProfile.
const ADDON_GROUP: &str = "config.projectsveltos.io";
/// Field manager of what the tests write through this module.
const TEST_MANAGER: &str = "tfsveltos-test";
/// The two controllers, in the order they are started.
const CONTROLLERS: [&str; 2] = ["sveltoscluster-manager", "addon-controller"];
/// Longest a controller may take to answer its readiness probe (a hang guard, not a measurement).
const START_DEADLINE: Duration = Duration::from_secs(180);

/// `../shared/sveltos` (beside the repository), or `SVELTOS_SHARED_DIR`, when it holds what [`Sveltos`] needs.
fn shared_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("SVELTOS_SHARED_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared/sveltos"));
    let complete = ["unpack", "crds/libsveltos", "crds/addon-controller"]
        .iter()
        .all(|p| dir.join(p).exists());
    complete.then_some(dir)
}

/// The folder of the unpacked binaries of `../shared/sveltos` (the Sveltos controllers, the upstream
/// access-provider plugins `secretreader-plugin` and `kubeconfig-secretreader-plugin`, and `cia-oracle`), started
/// by nothing; `None` when `../shared/sveltos` is missing (the test is recorded as skipped, or fails under
/// `CI=true`).
pub fn upstream_binaries() -> Option<PathBuf> {
    let dir = needed(
        shared_dir(),
        "the upstream access library oracle and plugins in ../shared/sveltos (set SVELTOS_SHARED_DIR)",
    )?;
    static UNPACKED: OnceLock<PathBuf> = OnceLock::new();
    Some(UNPACKED.get_or_init(|| unpack(&dir)).clone())
}

/// The real controllers of this test binary and the control plane they run against.
pub struct Sveltos {
    /// The control plane (started for this test binary; its member cluster is itself).
    pub env: TestEnv,
    /// The running controllers, by name.
    controllers: Mutex<Vec<(&'static str, Child)>>,
}

impl Sveltos {
    /// The controllers of this test binary, started on first use; `None` when `../shared/sveltos` is missing (the
    /// test is recorded as skipped, or fails under `CI=true`).
    pub fn get() -> Option<&'static Sveltos> {
        let dir = needed(
            shared_dir(),
            "the real Sveltos controllers and CRDs in ../shared/sveltos (set SVELTOS_SHARED_DIR)",
        )?;
        static STARTED: OnceLock<Sveltos> = OnceLock::new();
        Some(STARTED.get_or_init(|| Sveltos::start(&dir)))
    }

    fn start(shared: &Path) -> Sveltos {
        let env = super::start_env(false, std::process::id());
        let bin = unpack(shared);
        install_crds(&env, shared);
        env.kubectl(&["create", "namespace", "projectsveltos"]);
        let controllers = CONTROLLERS
            .iter()
            .map(|name| (*name, spawn(&env, &bin, name)))
            .collect();
        let sveltos = Sveltos {
            env,
            controllers: Mutex::new(controllers),
        };
        for name in CONTROLLERS {
            sveltos.wait_ready(name);
        }
        sveltos
    }

    /// The log file of controller `name`.
    fn log_path(&self, name: &str) -> PathBuf {
        self.env.dir.join(format!("{name}.log"))
    }

    /// The last lines of each controller's log, and whether it is still running: for failure messages.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        let mut controllers = self.controllers.lock().unwrap_or_else(|e| e.into_inner());
        for (name, child) in controllers.iter_mut() {
            let state = match child.try_wait() {
                Ok(None) => "running".to_string(),
                Ok(Some(status)) => format!("exited: {status}"),
                Err(e) => format!("unknown: {e}"),
            };
            let text = std::fs::read_to_string(self.log_path(name)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(25)..].join("\n");
            out += &format!("--- {name} ({state}), last lines of its log ---\n{tail}\n");
        }
        out
    }

    /// Waits until controller `name` answers its readiness probe (on the `--health-addr` port [`spawn`] wrote down).
    fn wait_ready(&self, name: &str) {
        let port: u16 = std::fs::read_to_string(self.env.dir.join(format!("{name}.health-port")))
            .ok()
            .and_then(|p| p.trim().parse().ok())
            .expect("the health port written at spawn");
        let start = Instant::now();
        while !http_ok(port, "/readyz") {
            assert!(
                start.elapsed() < START_DEADLINE,
                "{name} not ready within {START_DEADLINE:?}:\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// A kubeconfig whose cluster is this control plane, for a bridged cluster's credential: Sveltos connects
    /// with it back to the API server it runs against (the member cluster is the management cluster).
    pub fn member_kubeconfig(&self) -> String {
        std::fs::read_to_string(&self.env.kubeconfig).expect("reading the admin kubeconfig")
    }

    /// Polls `check` every second until it answers `Some`, and returns that. `deadline` is a hang guard, not a
    /// measurement: past it the test fails with `what` and the controllers' logs.
    pub async fn until<T, F, Fut>(&self, what: &str, deadline: Duration, mut check: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Option<T>>,
    {
        let start = Instant::now();
        loop {
            if let Some(v) = check().await {
                return v;
            }
            assert!(
                start.elapsed() < deadline,
                "{what}: not seen within {deadline:?} (hang guard)\n{}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

/// Runs `../shared/sveltos/unpack <target dir>/sveltos-bin` (idempotent: binaries already there with the right
/// SHA-256 are kept) and returns the folder.
fn unpack(shared: &Path) -> PathBuf {
    let into = target_tmpdir()
        .parent()
        .expect("the scratch directory is in a target directory")
        .join("sveltos-bin");
    let out = Command::new(shared.join("unpack"))
        .arg(&into)
        .stdin(Stdio::null())
        .output()
        .expect("running ../shared/sveltos/unpack");
    assert!(
        out.status.success(),
        "../shared/sveltos/unpack failed:\n{}",
        describe_output(&out)
    );
    into
}

/// Applies the upstream libsveltos and addon-controller CRDs (server-side, taking over the test environment's own
/// SveltosCluster CRD) and waits until they are served.
fn install_crds(env: &TestEnv, shared: &Path) {
    let dirs: Vec<String> = ["crds/libsveltos", "crds/addon-controller"]
        .iter()
        .map(|d| shared.join(d).display().to_string())
        .collect();
    let mut apply = vec![
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=tfsveltos-test",
    ];
    let mut wait = vec!["wait", "--for=condition=Established", "--timeout=120s"];
    for d in &dirs {
        apply.extend(["-f", d]);
        wait.extend(["-f", d]);
    }
    env.kubectl(&apply);
    env.kubectl(&wait);
}

/// A free loopback TCP port (bound, then released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Starts controller `name` against `env` in a process group of its own, its output in `<env dir>/<name>.log`. Its
/// command line names the environment's kubeconfig, inside the environment's directory: `scripts/testenv down`
/// (which the watchdog runs when this test binary exits) stops it with the API server.
fn spawn(env: &TestEnv, bin: &Path, name: &str) -> Child {
    use std::os::unix::process::CommandExt;
    let health = free_port();
    std::fs::write(
        env.dir.join(format!("{name}.health-port")),
        health.to_string(),
    )
    .expect("writing the health port");
    let log = std::fs::File::create(env.dir.join(format!("{name}.log"))).expect("creating the log");
    let mut cmd = Command::new(bin.join(name));
    cmd.arg(format!("--kubeconfig={}", env.kubeconfig.display()))
        .arg("--diagnostics-address=127.0.0.1:0")
        .arg("--insecure-diagnostics")
        .arg(format!("--health-addr=127.0.0.1:{health}"))
        .arg(format!("--webhook-port={}", free_port()));
    if name == "addon-controller" {
        cmd.args([
            "--disable-telemetry",
            "--helm-chart-update-check-interval=0",
        ]);
    }
    cmd.env("NAMESPACE", "projectsveltos")
        .env("KUBECONFIG", &env.kubeconfig)
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("cloning the log handle"))
        .stderr(log)
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("starting {name}: {e}"))
}

/// Whether `GET http://127.0.0.1:<port><path>` answers 200.
fn http_ok(port: u16, path: &str) -> bool {
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    let mut answer = String::new();
    s.write_all(request.as_bytes()).is_ok()
        && s.read_to_string(&mut answer).is_ok()
        && answer.starts_with("HTTP/1.")
        && answer.split_whitespace().nth(1) == Some("200")
}

// ---------------------------------------------------------------------------------------------
// add-ons
// ---------------------------------------------------------------------------------------------

/// Sveltos' add-on API resource `kind` (plural `plural`).
fn addon_resource(kind: &str, plural: &str) -> ApiResource {
    let gvk = kube::core::GroupVersionKind::gvk(ADDON_GROUP, "v1beta1", kind);
    ApiResource::from_gvk_with_plural(&gvk, plural)
}

/// The `spec` part of a Sveltos profile selecting the SveltosClusters labelled `key=value`.
pub fn selecting(key: &str, value: &str) -> Json {
    json!({"clusterSelector": {"matchLabels": {key: value}}})
}

/// The `spec` part of a Sveltos profile listing SveltosCluster `ns/name` by reference (`clusterRefs`): it matches
/// whatever its labels say.
pub fn listing(ns: &str, name: &str) -> Json {
    json!({"clusterRefs": [{"apiVersion": "lib.projectsveltos.io/v1beta1", "kind": "SveltosCluster",
        "namespace": ns, "name": name}]})
}

/// An add-on: a Sveltos `ClusterProfile` (cluster-scoped, `syncMode: Continuous`) whose policyRef is ConfigMap
/// `<ns>/<name>-source`, a template of ConfigMap `<name>-<cluster name>` in the cluster's namespace holding
/// `cluster: <namespace>/<name>`. The member cluster is the management cluster, so each cluster the profile matches
/// gets its own ConfigMap there ([`Addon::on_member`]).
pub struct Addon {
    /// The Sveltos profile's name.
    pub name: String,
    /// Where its source and the ConfigMaps it deploys are.
    ns: String,
}

impl Addon {
    /// Writes the add-on's source and its Sveltos profile `name`, matching the clusters `selects` says
    /// ([`selecting`], [`listing`]).
    pub async fn deploy(client: &kube::Client, name: &str, ns: &str, selects: Json) -> Addon {
        Self::deploy_with(
            client,
            name,
            ns,
            selects,
            "{{ .Cluster.metadata.namespace }}/{{ .Cluster.metadata.name }}",
        )
        .await
    }

    /// [`Addon::deploy`] with `value`, a template Sveltos instantiates for each cluster, as the `cluster` value of
    /// the ConfigMap it deploys (e.g. `{{ .Cluster.spec.data.location }}`).
    pub async fn deploy_with(
        client: &kube::Client,
        name: &str,
        ns: &str,
        selects: Json,
        value: &str,
    ) -> Addon {
        let template = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-{{{{ .Cluster.metadata.name }}}}\n  \
             namespace: '{{{{ .Cluster.metadata.namespace }}}}'\ndata:\n  cluster: '{value}'\n"
        );
        let source = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("{name}-source"), "namespace": ns,
                "annotations": {"projectsveltos.io/template": "ok"}},
            "data": {"addon.yaml": template},
        });
        Api::<ConfigMap>::namespaced(client.clone(), ns)
            .patch(
                &format!("{name}-source"),
                &PatchParams::apply(TEST_MANAGER),
                &Patch::Apply(source),
            )
            .await
            .unwrap_or_else(|e| panic!("writing the add-on's source ConfigMap: {e}"));
        let mut spec = selects;
        spec["syncMode"] = "Continuous".into();
        spec["policyRefs"] =
            json!([{"kind": "ConfigMap", "name": format!("{name}-source"), "namespace": ns}]);
        let profile = json!({"apiVersion": format!("{ADDON_GROUP}/v1beta1"), "kind": "ClusterProfile",
            "metadata": {"name": name}, "spec": spec});
        profiles(client)
            .patch(
                name,
                &PatchParams::apply(TEST_MANAGER),
                &Patch::Apply(profile),
            )
            .await
            .unwrap_or_else(|e| panic!("writing the Sveltos ClusterProfile {name}: {e}"));
        Addon {
            name: name.to_string(),
            ns: ns.to_string(),
        }
    }

    /// What this add-on deployed for SveltosCluster `<ns>/cluster` on the member cluster: the `cluster` value of
    /// its ConfigMap, if it exists.
    pub async fn on_member(&self, client: &kube::Client, cluster: &str) -> Option<String> {
        let name = format!("{}-{cluster}", self.name);
        let cm = Api::<ConfigMap>::namespaced(client.clone(), &self.ns)
            .get_opt(&name)
            .await
            .unwrap_or_else(|e| panic!("reading ConfigMap {}/{name}: {e}", self.ns))?;
        Some(
            cm.data
                .unwrap_or_default()
                .remove("cluster")
                .unwrap_or_default(),
        )
    }

    /// Deletes the Sveltos profile (addon-controller then withdraws what it deployed).
    pub async fn delete(&self, client: &kube::Client) {
        profiles(client)
            .delete(&self.name, &Default::default())
            .await
            .unwrap_or_else(|e| panic!("deleting the Sveltos ClusterProfile {}: {e}", self.name));
    }
}

/// Sveltos' (cluster-scoped) `ClusterProfile` objects.
fn profiles(client: &kube::Client) -> Api<DynamicObject> {
    Api::all_with(
        client.clone(),
        &addon_resource("ClusterProfile", "clusterprofiles"),
    )
}

/// The names of the `ClusterSummary` objects addon-controller keeps for SveltosCluster `ns/cluster` (one per
/// Sveltos profile that matches it), by the labels addon-controller sets on them.
pub async fn cluster_summaries(client: &kube::Client, ns: &str, cluster: &str) -> Vec<String> {
    let ar = addon_resource("ClusterSummary", "clustersummaries");
    let selector =
        format!("projectsveltos.io/cluster-name={cluster},projectsveltos.io/cluster-type=Sveltos");
    Api::<DynamicObject>::namespaced_with(client.clone(), ns, &ar)
        .list_metadata(&ListParams::default().labels(&selector))
        .await
        .unwrap_or_else(|e| panic!("listing the ClusterSummaries of {ns}/{cluster}: {e}"))
        .items
        .into_iter()
        .filter_map(|o| o.metadata.name)
        .collect()
}

/// What sveltoscluster-manager made of a SveltosCluster's active window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// `spec.paused` as stored (`None`: the field is absent, which is how the manager unpauses).
    pub paused: Option<bool>,
    /// `status.nextUnpause`, once the manager has scheduled the window.
    pub next_unpause: Option<String>,
    /// `status.nextPause`, once the manager has scheduled the window.
    pub next_pause: Option<String>,
}

impl Window {
    /// SveltosCluster `ns/name` as it is now.
    pub async fn of(client: &kube::Client, ns: &str, name: &str) -> Window {
        let ar = ApiResource::erase::<tfsveltos::api::SveltosCluster>(&());
        let sc = Api::<DynamicObject>::namespaced_with(client.clone(), ns, &ar)
            .get(name)
            .await
            .unwrap_or_else(|e| panic!("reading SveltosCluster {ns}/{name}: {e}"));
        let status = |k: &str| sc.data["status"][k].as_str().map(str::to_string);
        Window {
            paused: sc.data["spec"]["paused"].as_bool(),
            next_unpause: status("nextUnpause"),
            next_pause: status("nextPause"),
        }
    }

    /// Whether the cluster is paused (outside its window).
    pub fn is_paused(&self) -> bool {
        self.paused == Some(true)
    }
}

/// Whether SveltosCluster `ns/name` is Ready, as sveltoscluster-manager reports it.
pub async fn ready(client: &kube::Client, ns: &str, name: &str) -> bool {
    Api::<tfsveltos::api::SveltosCluster>::namespaced(client.clone(), ns)
        .get_opt(name)
        .await
        .ok()
        .flatten()
        .and_then(|sc| sc.status?.ready)
        .unwrap_or(false)
}
