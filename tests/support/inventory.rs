//! A test's inventory on the shared control plane, for the fleet-safety and trust-boundary tests: ClusterProfiles
//! (with status and health), labelled Secrets, objects someone else made, resource versions, a bridge
//! configuration driven by one CLI, the API server's audit log, exec plugin scripts that leave a marker when
//! they run, and the peak RSS of the provider processes a CLI command starts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value as Json, json};
use tfsveltos::api::{ClusterProfile, SveltosCluster, SveltosClusterSpec, keys};

use super::{Cli, TestEnv, Tf, fixtures, provider_binary};

/// Creates ClusterProfile `ns/name` managed by `manager` with `labels`, then merges `status` into its status
/// when not null.
pub async fn create_profile(
    client: &kube::Client,
    ns: &str,
    name: &str,
    manager: &str,
    labels: &[(&str, &str)],
    status: Json,
) {
    Api::<ClusterProfile>::namespaced(client.clone(), ns)
        .create(
            &PostParams::default(),
            &fixtures::cluster_profile(ns, name, manager, labels),
        )
        .await
        .unwrap_or_else(|e| panic!("creating ClusterProfile {ns}/{name}: {e}"));
    if !status.is_null() {
        patch_profile_status(client, ns, name, status).await;
    }
}

/// Merges `status` into ClusterProfile `ns/name`'s status.
async fn patch_profile_status(client: &kube::Client, ns: &str, name: &str, status: Json) {
    Api::<ClusterProfile>::namespaced(client.clone(), ns)
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await
        .unwrap_or_else(|e| panic!("patching status of {ns}/{name}: {e}"));
}

/// Creates Secret `ns/name` with `labels` and `data`.
pub async fn create_secret(
    client: &kube::Client,
    ns: &str,
    name: &str,
    labels: &[(&str, &str)],
    data: &[(&str, &str)],
) {
    Api::<Secret>::namespaced(client.clone(), ns)
        .create(
            &PostParams::default(),
            &fixtures::secret(ns, name, labels, data),
        )
        .await
        .unwrap_or_else(|e| panic!("creating Secret {ns}/{name}: {e}"));
}

/// A client of the shared control plane and the admin kubeconfig the configurations use.
pub struct Inv {
    /// A client of the main control plane.
    pub client: kube::Client,
    /// Its admin kubeconfig, for the provider blocks of the configurations.
    pub kubeconfig: PathBuf,
}

impl Inv {
    /// The shared control plane ([`TestEnv::get`]).
    pub async fn new() -> Self {
        Self::of(TestEnv::get()).await
    }

    /// The control plane of `env` (the `sveltos` test binary's own: [`crate::sveltos::Sveltos`]).
    pub async fn of(env: &TestEnv) -> Self {
        Inv {
            client: env.client().await,
            kubeconfig: env.kubeconfig.clone(),
        }
    }

    /// ClusterProfile `ns/name` with `labels`, and `status` when not null.
    pub async fn profile(&self, ns: &str, name: &str, labels: &[(&str, &str)], status: Json) {
        create_profile(&self.client, ns, name, "test", labels, status).await;
    }

    /// Merges `status` into the ClusterProfile's status.
    pub async fn profile_status(&self, ns: &str, name: &str, status: Json) {
        patch_profile_status(&self.client, ns, name, status).await;
    }

    /// Sets the profile's `ControlPlaneHealthy` condition.
    pub async fn set_healthy(&self, ns: &str, name: &str, healthy: bool) {
        self.profile_status(ns, name, health_status(healthy)).await;
    }

    /// A ClusterProfile and a Secret next to it labelled for it, with `kubeconfig` under key `Config`.
    pub async fn profile_with_secret(
        &self,
        ns: &str,
        name: &str,
        labels: &[(&str, &str)],
        status: Json,
        kubeconfig: &str,
    ) {
        self.profile(ns, name, labels, status).await;
        self.secret(
            ns,
            &format!("{name}-src"),
            &[(keys::CLUSTER_PROFILE_LABEL, name)],
            &[("Config", kubeconfig)],
        )
        .await;
    }

    /// The ClusterProfiles `c000`, `c001`, ... numbered `range` in `ns`, each with a labelled kubeconfig Secret
    /// (an unreachable cluster) next to it, created 16 at a time.
    pub async fn numbered_profiles(&self, ns: &str, range: std::ops::Range<usize>) {
        use futures::StreamExt;
        let kc = crate::fixtures::unreachable_kubeconfig("t");
        futures::stream::iter(range)
            .for_each_concurrent(16, |i| {
                let kc = &kc;
                async move {
                    self.profile_with_secret(ns, &format!("c{i:03}"), &[], Json::Null, kc)
                        .await
                }
            })
            .await;
    }

    /// Deletes ClusterProfile `ns/name`.
    pub async fn delete_profile(&self, ns: &str, name: &str) {
        Api::<ClusterProfile>::namespaced(self.client.clone(), ns)
            .delete(name, &DeleteParams::default())
            .await
            .unwrap_or_else(|e| panic!("deleting ClusterProfile {ns}/{name}: {e}"));
    }

    /// Deletes Secret `ns/name`.
    pub async fn delete_secret(&self, ns: &str, name: &str) {
        Api::<Secret>::namespaced(self.client.clone(), ns)
            .delete(name, &DeleteParams::default())
            .await
            .unwrap_or_else(|e| panic!("deleting Secret {ns}/{name}: {e}"));
    }

    /// Creates or replaces Secret `ns/name` (server-side apply by the test's own field manager).
    pub async fn secret(
        &self,
        ns: &str,
        name: &str,
        labels: &[(&str, &str)],
        data: &[(&str, &str)],
    ) {
        let s = fixtures::secret(ns, name, labels, data);
        let mut body = serde_json::to_value(&s).unwrap();
        body["apiVersion"] = "v1".into();
        body["kind"] = "Secret".into();
        Api::<Secret>::namespaced(self.client.clone(), ns)
            .patch(
                name,
                &PatchParams::apply("test-setup").force(),
                &Patch::Apply(body),
            )
            .await
            .unwrap_or_else(|e| panic!("writing Secret {ns}/{name}: {e}"));
    }

    /// Labels namespace `ns`.
    pub async fn label_namespace(&self, ns: &str, key: &str, value: &str) {
        Api::<Namespace>::all(self.client.clone())
            .patch(
                ns,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {key: value}}})),
            )
            .await
            .unwrap_or_else(|e| panic!("labelling namespace {ns}: {e}"));
    }

    /// A SveltosCluster someone else created, with `labels`.
    pub async fn foreign_sveltos_cluster(&self, ns: &str, name: &str, labels: &[(&str, &str)]) {
        let mut sc = SveltosCluster::new(
            name,
            SveltosClusterSpec {
                kubeconfig_name: Some("theirs".into()),
                ..Default::default()
            },
        );
        sc.metadata.labels = Some(fixtures::labels(labels));
        Api::<SveltosCluster>::namespaced(self.client.clone(), ns)
            .create(&PostParams::default(), &sc)
            .await
            .unwrap_or_else(|e| panic!("creating SveltosCluster {ns}/{name}: {e}"));
    }

    /// SveltosCluster `ns/name`, if it exists.
    pub async fn sc(&self, ns: &str, name: &str) -> Option<SveltosCluster> {
        Api::<SveltosCluster>::namespaced(self.client.clone(), ns)
            .get_opt(name)
            .await
            .unwrap_or_else(|e| panic!("reading SveltosCluster {ns}/{name}: {e}"))
    }

    /// Secret `ns/name`, if it exists.
    pub async fn get_secret(&self, ns: &str, name: &str) -> Option<Secret> {
        Api::<Secret>::namespaced(self.client.clone(), ns)
            .get_opt(name)
            .await
            .unwrap_or_else(|e| panic!("reading Secret {ns}/{name}: {e}"))
    }

    /// The `kubeconfig` key of the bridged Secret of profile `ns/name`, if that Secret exists.
    pub async fn bridged_kubeconfig(&self, ns: &str, name: &str) -> Option<Vec<u8>> {
        let s = self
            .get_secret(ns, &format!("{name}-sveltos-kubeconfig"))
            .await?;
        Some(
            s.data
                .unwrap_or_default()
                .get("kubeconfig")
                .map(|b| b.0.clone())
                .unwrap_or_default(),
        )
    }

    /// resourceVersion of SveltosCluster `ns/name` (`None`: it does not exist).
    pub async fn sc_version(&self, ns: &str, name: &str) -> Option<String> {
        self.sc(ns, name)
            .await
            .and_then(|o| o.metadata.resource_version)
    }

    /// resourceVersion of Secret `ns/name` (`None`: it does not exist).
    pub async fn secret_version(&self, ns: &str, name: &str) -> Option<String> {
        self.get_secret(ns, name)
            .await
            .and_then(|o| o.metadata.resource_version)
    }

    /// Merge-patches SveltosCluster `ns/name`'s metadata (finalizers, labels).
    pub async fn patch_sc_metadata(&self, ns: &str, name: &str, metadata: Json) {
        Api::<SveltosCluster>::namespaced(self.client.clone(), ns)
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({ "metadata": metadata })),
            )
            .await
            .unwrap_or_else(|e| panic!("patching SveltosCluster {ns}/{name}: {e}"));
    }

    /// A working directory for `cli` whose `main.tf` is the provider header plus `body`.
    pub fn tf(&self, cli: &Cli, body: &str) -> Tf {
        let tf = Tf::new(cli);
        self.rewrite(&tf, body);
        tf
    }

    /// Replaces `main.tf` of `tf` with the provider header plus `body`.
    pub fn rewrite(&self, tf: &Tf, body: &str) {
        tf.write_main(&format!(
            "{}{body}",
            fixtures::provider_header(&self.kubeconfig, None)
        ));
    }
}

/// The status of a profile whose `ControlPlaneHealthy` condition is `True` or `False`.
pub fn health_status(healthy: bool) -> Json {
    let (status, reason) = if healthy {
        ("True", "Healthy")
    } else {
        ("False", "Upgrading")
    };
    json!({"conditions": [{"type": keys::CONTROL_PLANE_HEALTHY, "status": status, "reason": reason,
        "message": "set by the test", "lastTransitionTime": "2026-01-01T00:00:00Z"}]})
}

/// A `sveltos_cluster_inventory_bridge "x"` resource with `name`, selecting `namespaces`, plus `extra` lines,
/// and an output `clusters` of its `clusters` attribute.
pub fn bridge(name: &str, namespaces: &[&str], extra: &str) -> String {
    let ns: Vec<String> = namespaces.iter().map(|n| format!("\"{n}\"")).collect();
    format!(
        "resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name = \"{name}\"\n  namespaces = [{}]\n{extra}\n}}\n\
         output \"clusters\" {{\n  value = sveltos_cluster_inventory_bridge.x.clusters\n}}\n",
        ns.join(", ")
    )
}

/// stdout + stderr of a finished CLI command.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `args` and returns (success, stdout + stderr).
pub fn run(tf: &Tf, args: &[&str]) -> (bool, String) {
    let out = tf.run(args);
    (out.status.success(), text(&out))
}

/// `apply -auto-approve`, which must succeed; returns its output (warnings included).
pub fn apply_ok(tf: &Tf) -> String {
    let (ok, out) = run(tf, &["apply", "-input=false", "-no-color", "-auto-approve"]);
    assert!(
        ok,
        "{} apply failed in {}:\n{out}",
        tf.cli.name,
        tf.dir().display()
    );
    out
}

/// `plan -out=tfplan`, which must succeed; returns its output and the planned `clusters` attribute.
pub fn plan_clusters(tf: &Tf) -> (String, serde_json::Map<String, Json>) {
    let (ok, out) = run(tf, &["plan", "-input=false", "-no-color", "-out=tfplan"]);
    assert!(
        ok,
        "{} plan failed in {}:\n{out}",
        tf.cli.name,
        tf.dir().display()
    );
    let after = &bridge_change(tf)["after"]["clusters"];
    (out, after.as_object().cloned().unwrap_or_default())
}

/// The planned change of the bridge in `show -json` of the saved plan `tfplan` (null when it has none).
fn bridge_change(tf: &Tf) -> Json {
    let plan = tf.json(&["show", "-json", "-no-color", "tfplan"]);
    plan["resource_changes"]
        .as_array()
        .and_then(|rc| {
            rc.iter()
                .find(|r| r["type"] == "sveltos_cluster_inventory_bridge")
        })
        .map(|r| r["change"].clone())
        .unwrap_or(Json::Null)
}

/// `(before, after)` of the bridge's `clusters` in `show -json` of the saved plan `tfplan`.
pub fn clusters_change(tf: &Tf) -> (Json, Json) {
    let change = bridge_change(tf);
    (
        change["before"]["clusters"].clone(),
        change["after"]["clusters"].clone(),
    )
}

/// The `clusters` output of the state, keyed `namespace/name`.
pub fn state_clusters(tf: &Tf) -> serde_json::Map<String, Json> {
    tf.outputs_json()["clusters"]["value"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

/// The diagnostic blocks (`Warning: ...` / `Error: ...` up to the next blank-line-separated block) of a CLI's
/// output whose first line contains `needle`.
pub fn diagnostics<'a>(out: &'a str, kind: &str, needle: &str) -> Vec<&'a str> {
    let marker = format!("{kind}: ");
    let mut found = Vec::new();
    let mut rest = out;
    while let Some(i) = rest.find(&marker) {
        let block = &rest[i..];
        let end = block[marker.len()..]
            .find("Warning: ")
            .into_iter()
            .chain(block[marker.len()..].find("Error: "))
            .min()
            .map(|e| e + marker.len())
            .unwrap_or(block.len());
        let this = &block[..end];
        if this.lines().next().is_some_and(|l| l.contains(needle)) {
            found.push(this);
        }
        rest = &block[marker.len()..];
    }
    found
}

/// The one diagnostic of `kind` whose summary contains `needle` (panics unless there is exactly one).
pub fn one_diagnostic<'a>(out: &'a str, kind: &str, needle: &str) -> &'a str {
    let d = diagnostics(out, kind, needle);
    assert_eq!(
        d.len(),
        1,
        "expected exactly one {kind} containing {needle:?}:\n{out}"
    );
    d[0]
}

/// 100,000-item list anchored once, then 150,000 aliases to it, padded to about 800 KB.
pub fn alias_bomb() -> String {
    let mut s = String::from(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\nusers:\n- name: u\n  user:\n    token: t\nx: &a [",
    );
    s.push_str(&"00,".repeat(99_999));
    s.push_str("00]\ny: [");
    s.push_str(&"*a,".repeat(149_999));
    s.push_str("*a]\n");
    let pad = 800_000usize.saturating_sub(s.len());
    s.push_str(&format!("# {}\n", "p".repeat(pad)));
    s
}

/// Writes a measured figure straight to the terminal (past libtest's capture of `eprintln!`, so it shows
/// for passing tests too).
pub fn report(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "figure: {line}");
}

/// `s` with every run of whitespace collapsed to one space (the CLIs wrap diagnostics at about 78 columns).
pub fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The entry of a grouped diagnostic for cluster `key` (`- <key> (kept as it is|not registered): ...`), with
/// the CLI's line wrapping undone; panics when the cluster is not listed.
pub fn entry(diagnostic: &str, key: &str) -> String {
    let mut entries: Vec<String> = Vec::new();
    let mut open = false;
    for line in diagnostic.lines() {
        let line = line.trim();
        if line.starts_with("- ") {
            entries.push(line.to_string());
            open = true;
        } else if line.is_empty() {
            open = false;
        } else if open && let Some(last) = entries.last_mut() {
            last.push(' ');
            last.push_str(line);
        }
    }
    entries
        .into_iter()
        .find(|e| e.starts_with(&format!("- {key} ")))
        .unwrap_or_else(|| panic!("{key} is not listed in:\n{diagnostic}"))
}

// ---------------------------------------------------------------------------------------------
// audit log
// ---------------------------------------------------------------------------------------------

/// The main API server's audit log (`TESTENV_AUDIT_LOG`, or `<TESTENV_DIR>/main/audit.log`).
fn audit_log() -> PathBuf {
    std::env::var_os("TESTENV_AUDIT_LOG")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| TestEnv::get().dir.join("main").join("audit.log"))
}

/// The audit events on Secrets in namespace `ns` (metadata only: verb, objectRef, user agent).
fn secret_events_in(ns: &str) -> Vec<Json> {
    secret_events_in_all()
        .into_iter()
        .filter(|e| e["objectRef"]["namespace"] == ns)
        .collect()
}

/// Every audit event on Secrets, in any namespace or cluster-wide (metadata only).
pub fn secret_events_in_all() -> Vec<Json> {
    let path = audit_log();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading the audit log {}: {e}", path.display()));
    text.lines()
        .filter_map(|l| serde_json::from_str::<Json>(l).ok())
        .filter(|e| e["objectRef"]["resource"] == "secrets")
        .collect()
}

/// How many times the Secrets of bridge `bridge` were listed by its ownership label: LIST requests with that
/// selector and no field selector (a reading lists them once as metadata, then reads the bodies it needs, with
/// LISTs narrowed to a name by `fieldSelector`, which belong to that same reading and are not counted).
pub fn owned_lists(bridge: &str) -> usize {
    let selector = format!(
        "labelSelector={}={bridge}",
        tfsveltos::api::keys::BRIDGE_LABEL
    );
    secret_events_in_all()
        .iter()
        .filter(|e| e["verb"] == "list" && e["stage"] == "ResponseComplete")
        .filter(|e| {
            let uri = e["requestURI"].as_str().unwrap_or_default();
            let uri = uri
                .replace("%2F", "/")
                .replace("%2f", "/")
                .replace("%3D", "=")
                .replace("%3d", "=");
            let params: Vec<&str> = uri.split(['?', '&']).collect();
            params.contains(&selector.as_str())
                && !params.iter().any(|p| p.starts_with("fieldSelector="))
        })
        .count()
}

/// Reads of Secrets in namespace `ns` (get, list, watch), as `verb name` lines.
pub fn secret_reads_in(ns: &str) -> Vec<String> {
    secret_events_in(ns)
        .iter()
        .filter(|e| matches!(e["verb"].as_str(), Some("get" | "list" | "watch")))
        .map(|e| {
            format!(
                "{} {} ({})",
                e["verb"].as_str().unwrap_or_default(),
                e["objectRef"]["name"].as_str().unwrap_or("<all>"),
                e["userAgent"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// exec plugins
// ---------------------------------------------------------------------------------------------

/// An exec plugin script and a providers file naming it, in `dir`: every run appends one line to `runs.log`
/// (the `server` it was given through `KUBERNETES_EXEC_INFO`, and `LD_PRELOAD` if set) and answers an
/// ExecCredential with `token-<pid>` expiring `expires_in_secs` from now.
pub struct Plugin {
    /// The providers file (`credentials.exec_providers_file`) naming the script.
    pub providers_file: PathBuf,
    /// One line per run of the script.
    pub runs_log: PathBuf,
}

impl Plugin {
    /// `providers` is a list of `(provider name, profileSourcedEnvVarsPolicy)`; each runs the same script.
    pub fn write(dir: &Path, expires_in_secs: i64, providers: &[(&str, Option<&str>)]) -> Plugin {
        let script = dir.join("plugin.sh");
        let runs_log = dir.join("runs.log");
        super::write_executable(
            &script,
            &format!(
                "#!/bin/sh\n\
                 server=$(printf '%s' \"$KUBERNETES_EXEC_INFO\" | sed -n 's/.*\"server\":\"\\([^\"]*\\)\".*/\\1/p')\n\
                 echo \"run server=$server ld_preload=${{LD_PRELOAD:-}}\" >> '{log}'\n\
                 exp=$(date -u -d \"@$(( $(date +%s) + {expires_in_secs} ))\" +%Y-%m-%dT%H:%M:%SZ)\n\
                 echo \"{{\\\"apiVersion\\\":\\\"client.authentication.k8s.io/v1\\\",\\\"kind\\\":\\\"ExecCredential\\\",\\\"status\\\":{{\\\"token\\\":\\\"token-$$\\\",\\\"expirationTimestamp\\\":\\\"$exp\\\"}}}}\"\n",
                log = runs_log.display()
            ),
        );
        let entries: Vec<Json> = providers
            .iter()
            .map(|(name, policy)| {
                let mut e = json!({"name": name, "execConfig": {"apiVersion": "client.authentication.k8s.io/v1",
                    "command": script.display().to_string(), "provideClusterInfo": true}});
                if let Some(p) = policy {
                    e["profileSourcedEnvVarsPolicy"] = (*p).into();
                }
                e
            })
            .collect();
        let providers_file = dir.join("providers.json");
        std::fs::write(&providers_file, json!({ "providers": entries }).to_string()).unwrap();
        Plugin {
            providers_file,
            runs_log,
        }
    }

    /// The lines the plugin wrote, one per run.
    pub fn runs(&self) -> Vec<String> {
        std::fs::read_to_string(&self.runs_log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// The status of a profile with one exec access provider `provider` at `server`, with `extensions` on its
/// cluster entry (`[{name, extension}]`).
pub fn exec_status(provider: &str, server: &str, extensions: Json) -> Json {
    json!({"accessProviders": [{"name": provider, "cluster": {"server": server, "extensions": extensions}}]})
}

// ---------------------------------------------------------------------------------------------
// measuring the provider
// ---------------------------------------------------------------------------------------------

/// What [`measure`] saw of a CLI command: wall time and the largest peak RSS (`VmHWM`) of any provider
/// process it started.
#[derive(Debug)]
pub struct Measured {
    /// What the command printed, and how it exited.
    pub output: Output,
    /// Its wall time.
    pub wall: Duration,
    /// The largest peak RSS of its provider processes, in KiB.
    pub provider_peak_rss_kib: u64,
    /// How many provider processes it started.
    pub provider_processes: usize,
}

/// Runs `args` while sampling, every 10 ms, the `VmHWM` of every provider process whose parent is the CLI.
pub fn measure(tf: &Tf, args: &[&str]) -> Measured {
    let child = tf
        .command(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starting the CLI");
    let cli_pid = child.id();
    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(0));
    let seen = Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let sampler = {
        let (done, peak, seen) = (done.clone(), peak.clone(), seen.clone());
        std::thread::spawn(move || {
            let exe = provider_binary();
            while !done.load(Ordering::Relaxed) {
                for pid in children_running(cli_pid, &exe) {
                    seen.lock().unwrap().insert(pid);
                    if let Some(kib) = vm_hwm_kib(pid) {
                        peak.fetch_max(kib, Ordering::Relaxed);
                    }
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let start = Instant::now();
    let output = child.wait_with_output().expect("waiting for the CLI");
    let wall = start.elapsed();
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let provider_processes = seen.lock().unwrap().len();
    Measured {
        output,
        wall,
        provider_peak_rss_kib: peak.load(Ordering::Relaxed),
        provider_processes,
    }
}

fn children_running(parent: u32, exe: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            ppid == Some(parent)
                && std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|p| p == exe)
        })
        .collect()
}

fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Labels of a SveltosCluster.
pub fn labels_of(sc: &SveltosCluster) -> BTreeMap<String, String> {
    sc.metadata.labels.clone().unwrap_or_default()
}
