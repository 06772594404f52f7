//! The integration tests' fixtures: a real control plane, a namespace per test, a runner for the real `tofu` /
//! `terraform` CLIs driving the freshly built provider, and the vocabulary the tests share. A library (package
//! `support`, a dev-dependency of the provider's package) used by every test binary: `tests/e2e` (needs the
//! control plane), `tests/plugin` (needs none), `tests/sveltos` (the real Sveltos controllers) and
//! `tests/claims.rs` (alone), and by the benchmarks ([`fixtures`]). Each test binary's root invokes
//! [`test_binary!`] once.
//!
//! * [`TestEnv::get`] starts `scripts/testenv up --managed --owner-pid <this test binary>` once per
//!   test binary (or reuses the environment that `KUBECONFIG`, `TESTENV_BIN`, `TESTENV_DIR` and
//!   `TESTENV_MEMBER_KUBECONFIG` point at, as `scripts/test` does). A watchdog started by the
//!   script tears the environment down as soon as the test binary exits, whether it finished,
//!   panicked or was killed, so nothing leaks.
//! * [`unique_namespace`] creates a fresh namespace for a test (namespaces are never finalized in
//!   this environment, which runs no kube-controller-manager, so they are not deleted).
//! * [`hub`]: the member cluster as an inventory hub (its ClusterProfile CRD, and the lock of the tests that
//!   write there).
//! * [`Tf`] runs one CLI ([`Cli::all`]) in a temporary working directory with its own CLI
//!   configuration (`dev_overrides` to the provider binary cargo built for these tests, or a
//!   `filesystem_mirror`, see [`Tf::with_mirror`]).
//! * [`needed`] (and [`needs::missing`]): what a test needs from the machine; missing, it fails the test under
//!   `CI=true` and is recorded as a visible skip otherwise (see [`needs`]).
//! * [`fixtures`]: kubeconfig text, ClusterProfile and Secret values, the provider header of a
//!   configuration (shared with `benches/`).
//! * [`inventory`], [`metrics`], [`fault_proxy`], [`apiserver`]: a test's inventory on the control plane, the
//!   API server's request counters, a fault-injecting proxy in front of it, an API server to kill and restart.
//! * [`sveltos`]: the real Sveltos controllers (sveltoscluster-manager, addon-controller, from `../shared/sveltos`)
//!   against a control plane of their own, for the `sveltos` test binary.
//! * [`plugin`]: the toy provider and the mutual-TLS client of the plugin-layer tests; [`workflow_lint`]: the
//!   checks of GitHub workflows.
//!
//! Every `pub` item is used by some test (`tests/plugin/support_items.rs` checks it): the compiler does not warn
//! about an unused `pub` item of a library.

/// An API server a test may kill and restart.
pub mod apiserver;
/// A fault-injecting proxy in front of the API server.
pub mod fault_proxy;
/// Test data (pure values).
pub mod fixtures;
/// The member cluster as an inventory hub.
pub mod hub;
/// A test's inventory on the control plane.
pub mod inventory;
/// The API server's request counters.
pub mod metrics;
/// What a test needs from the machine.
pub mod needs;
/// The toy provider and mutual-TLS client of the plugin-layer tests.
pub mod plugin;
/// The real Sveltos controllers, against a control plane of their own.
pub mod sveltos;
/// An actionlint-style checker of GitHub workflows.
pub mod workflow_lint;

pub use fixtures::PROVIDER_SOURCE;
pub use needs::needed;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ObjectMeta, PostParams};

/// The registry hosts a bare `clusterinventory/sveltos` resolves to: Terraform uses
/// registry.terraform.io, OpenTofu registry.opentofu.org. CLI configurations written here name
/// both, so one configuration works for every CLI.
pub const PROVIDER_HOSTS: [&str; 2] = ["registry.terraform.io", "registry.opentofu.org"];

/// What each test binary's root says about itself: `support::test_binary!();` at the top of `main.rs`.
///
/// Cargo tells a test binary where the provider binary is (`CARGO_BIN_EXE_terraform-provider-sveltos`), its own
/// name and its scratch directory (`CARGO_TARGET_TMPDIR`) only while compiling the test binary itself, not this
/// library. The library finds the same from where the running test binary is ([`provider_binary`],
/// [`test_binary_name`], [`target_tmpdir`]: cargo's layout of a target directory; [`repo_root`] from its own
/// place in the repository); this macro adds a test, `support_paths_are_cargos`, that checks them against cargo's
/// own values, in every test binary.
#[macro_export]
macro_rules! test_binary {
    () => {
        /// The support library's view of this test binary is cargo's (see [`support::test_binary`]).
        #[test]
        fn support_paths_are_cargos() {
            assert_eq!(
                $crate::provider_binary(),
                ::std::path::PathBuf::from(env!("CARGO_BIN_EXE_terraform-provider-sveltos"))
            );
            assert_eq!($crate::test_binary_name(), env!("CARGO_CRATE_NAME"));
            assert_eq!(
                $crate::target_tmpdir(),
                ::std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            );
            assert_eq!(
                $crate::repo_root(),
                ::std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            );
        }
    };
}

/// The running test binary: `<target dir>/<profile>/deps/<name>-<hash>`.
fn test_exe() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| std::env::current_exe().expect("the path of the running test binary"))
}

/// `<target dir>/<profile>`: the directory of the binaries cargo built for this test run.
fn profile_dir() -> &'static Path {
    test_exe()
        .parent()
        .and_then(Path::parent)
        .unwrap_or_else(|| panic!("{} is not in <profile>/deps", test_exe().display()))
}

/// The provider binary cargo built for this test run (`CARGO_BIN_EXE_terraform-provider-sveltos` of the test
/// binary: `<target dir>/<profile>/terraform-provider-sveltos`).
pub fn provider_binary() -> PathBuf {
    profile_dir().join(format!(
        "terraform-provider-sveltos{}",
        std::env::consts::EXE_SUFFIX
    ))
}

/// The name of the running test binary (`e2e`, `plugin`, `claims`: its `CARGO_CRATE_NAME`).
pub fn test_binary_name() -> String {
    let stem = test_exe()
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match stem.rsplit_once('-') {
        Some((name, _hash)) => name.to_string(),
        None => stem,
    }
}

/// The scratch directory cargo gives test binaries (`CARGO_TARGET_TMPDIR`: `<target dir>/tmp`).
pub fn target_tmpdir() -> PathBuf {
    profile_dir()
        .parent()
        .expect("the profile directory is in a target directory")
        .join("tmp")
}

/// The repository root (this library is `tests/support` in it).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("tests/support has a grandparent")
        .to_path_buf()
}

/// `scripts/testenv`.
pub fn testenv_script() -> PathBuf {
    repo_root().join("scripts").join("testenv")
}

/// Directory holding `kube-apiserver`, `etcd`, `kubectl`, `tofu` and `terraform-1.0.3`:
/// `TESTENV_BIN` when set, otherwise whatever `scripts/testenv build` reports (it builds on first
/// use and takes a few milliseconds afterwards).
pub fn bin_dir() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(dir) = std::env::var_os("TESTENV_BIN").filter(|d| !d.is_empty()) {
            return PathBuf::from(dir);
        }
        let out = Command::new(testenv_script())
            .arg("build")
            .stderr(Stdio::inherit())
            .output()
            .expect("running scripts/testenv build");
        assert!(
            out.status.success(),
            "scripts/testenv build failed ({})",
            out.status
        );
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    })
}

// ---------------------------------------------------------------------------------------------
// control plane
// ---------------------------------------------------------------------------------------------

/// A running test environment (see the module documentation).
#[derive(Debug)]
pub struct TestEnv {
    /// The environment's temporary directory (`TESTENV_DIR`).
    pub dir: PathBuf,
    /// Directory of the binaries (`TESTENV_BIN`).
    pub bin: PathBuf,
    /// Admin kubeconfig of the main control plane (where the CRDs are installed).
    pub kubeconfig: PathBuf,
    /// Admin kubeconfig of the member cluster; `None` only for an environment started without
    /// `--managed` through [`TestEnv::start`].
    pub member_kubeconfig: Option<PathBuf>,
    /// Whether this process started it (and [`OwnedEnv`] stops it on drop).
    pub started_here: bool,
}

impl TestEnv {
    /// The environment shared by every test of this test binary, started on first use.
    pub fn get() -> &'static TestEnv {
        static ENV: OnceLock<TestEnv> = OnceLock::new();
        ENV.get_or_init(|| {
            if let Some(env) = Self::from_process_env() {
                return env;
            }
            // Owned by this test binary: the watchdog tears it down when we exit.
            let env = start_env(true, std::process::id());
            TestEnv {
                started_here: true,
                ..env
            }
        })
    }

    /// An environment the caller owns, independent of [`TestEnv::get`], stopped when the
    /// returned guard is dropped (and by the watchdog if this process dies first).
    pub fn start(managed: bool) -> OwnedEnv {
        OwnedEnv(Some(start_env(managed, std::process::id())))
    }

    /// The environment described by this process's variables, when they describe a running one.
    fn from_process_env() -> Option<TestEnv> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let dir = var("TESTENV_DIR")?;
        let bin = var("TESTENV_BIN")?;
        let kubeconfig = var("KUBECONFIG")?;
        let member = var("TESTENV_MEMBER_KUBECONFIG")?;
        // Never mistake a developer's own cluster for ours.
        if !kubeconfig.starts_with(&dir) || !member.starts_with(&dir) {
            eprintln!(
                "support: KUBECONFIG/TESTENV_MEMBER_KUBECONFIG are not inside TESTENV_DIR; starting a fresh environment"
            );
            return None;
        }
        let ready = |kc: &Path| {
            Command::new(bin.join("kubectl"))
                .arg("--kubeconfig")
                .arg(kc)
                .args(["get", "--raw", "/readyz"])
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !(dir.is_dir() && ready(&kubeconfig) && ready(&member)) {
            eprintln!(
                "support: TESTENV_DIR={} is not a running environment; starting a fresh one",
                dir.display()
            );
            return None;
        }
        Some(TestEnv {
            dir,
            bin,
            kubeconfig,
            member_kubeconfig: Some(member),
            started_here: false,
        })
    }

    /// A client of the main control plane. Make one per test: a client belongs to the tokio
    /// runtime it was made in, and each `#[tokio::test]` has its own.
    pub async fn client(&self) -> kube::Client {
        client_for(&self.kubeconfig).await
    }

    /// A client of the member cluster.
    pub async fn member_client(&self) -> kube::Client {
        client_for(self.member_kubeconfig()).await
    }

    /// The member cluster's kubeconfig (panics for an environment started without `--managed`).
    pub fn member_kubeconfig(&self) -> &Path {
        self.member_kubeconfig
            .as_deref()
            .expect("this environment has no member cluster")
    }

    /// `kubectl --kubeconfig <main> ARGS`, panicking with its output on failure; returns stdout.
    pub fn kubectl(&self, args: &[&str]) -> String {
        self.kubectl_at(&self.kubeconfig, args)
    }

    /// A new user (through impersonation, `kubectl --as`) holding exactly `grants` in `ns`: one Role and RoleBinding
    /// per `(verbs, resource)` (`"get,patch"`, `"sveltosclusters.lib.projectsveltos.io"`), returned once the
    /// authorizer applies every one of them.
    pub fn tenant(&self, ns: &str, grants: &[(&str, &str)]) -> String {
        let user = unique_name("tenant");
        for (i, (verbs, resource)) in grants.iter().enumerate() {
            let role = format!("{user}-{i}");
            let verb_flag = format!("--verb={verbs}");
            let resource_flag = format!("--resource={resource}");
            self.kubectl(&[
                "-n",
                ns,
                "create",
                "role",
                &role,
                &verb_flag,
                &resource_flag,
            ]);
            let (role_flag, user_flag) = (format!("--role={role}"), format!("--user={user}"));
            self.kubectl(&[
                "-n",
                ns,
                "create",
                "rolebinding",
                &role,
                &role_flag,
                &user_flag,
            ]);
            for verb in verbs.split(',') {
                self.wait_until_allowed(&user, verb, resource, ns);
            }
        }
        user
    }

    /// Waits until the API server's authorizer lets `user` `verb` `resource` in `ns` (`kubectl auth can-i --as`): a
    /// new RoleBinding reaches its cache a moment after it is created. The loop's bound is only a hang guard.
    fn wait_until_allowed(&self, user: &str, verb: &str, resource: &str, ns: &str) {
        let allowed = || {
            Command::new(self.bin.join("kubectl"))
                .arg("--kubeconfig")
                .arg(&self.kubeconfig)
                .args(["auth", "can-i", verb, resource, "--as", user, "-n", ns])
                .output()
                .expect("running kubectl auth can-i")
                .status
                .success()
        };
        for _ in 0..600 {
            if allowed() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("{user} was never allowed to {verb} {resource} in {ns}");
    }

    /// `kubectl --kubeconfig <kubeconfig> ARGS`, panicking with its output on failure.
    pub fn kubectl_at(&self, kubeconfig: &Path, args: &[&str]) -> String {
        let out = Command::new(self.bin.join("kubectl"))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(args)
            .output()
            .expect("running kubectl");
        assert!(
            out.status.success(),
            "kubectl {args:?} failed ({}):\n{}",
            out.status,
            describe_output(&out)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The `server:` URL of a kubeconfig written by `scripts/testenv`.
    pub fn server_url(kubeconfig: &Path) -> String {
        let text = std::fs::read_to_string(kubeconfig).expect("reading kubeconfig");
        text.lines()
            .find_map(|l| l.trim().strip_prefix("server:"))
            .map(|s| s.trim().to_string())
            .expect("kubeconfig has a server")
    }

    /// Pids of the processes `scripts/testenv up` started for this environment (etcd,
    /// kube-apiserver), as recorded in its `pids` file.
    pub fn daemon_pids(&self) -> Vec<u32> {
        let text = std::fs::read_to_string(self.dir.join("pids")).unwrap_or_default();
        text.lines()
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect()
    }
}

/// An environment started by [`TestEnv::start`]; dropping it runs `scripts/testenv down`.
#[derive(Debug)]
pub struct OwnedEnv(Option<TestEnv>);

impl OwnedEnv {
    /// Stops the environment now.
    pub fn down(mut self) {
        if let Some(env) = self.0.take() {
            run_down(&env.dir);
        }
    }
}

impl std::ops::Deref for OwnedEnv {
    type Target = TestEnv;
    fn deref(&self) -> &TestEnv {
        self.0.as_ref().expect("environment already stopped")
    }
}

impl Drop for OwnedEnv {
    fn drop(&mut self) {
        if let Some(env) = self.0.take() {
            run_down(&env.dir);
        }
    }
}

fn run_down(dir: &Path) {
    let out = Command::new(testenv_script())
        .arg("down")
        .arg(dir)
        .output()
        .expect("running scripts/testenv down");
    if !out.status.success() {
        eprintln!("scripts/testenv down failed:\n{}", describe_output(&out));
    }
}

/// Runs `scripts/testenv up` and parses its export lines.
fn start_env(managed: bool, owner_pid: u32) -> TestEnv {
    let mut cmd = Command::new(testenv_script());
    cmd.arg("up");
    if managed {
        cmd.arg("--managed");
    }
    cmd.arg("--owner-pid").arg(owner_pid.to_string());
    // Build logs and errors go straight to the terminal; stdout carries the export lines.
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("running scripts/testenv up");
    assert!(
        out.status.success(),
        "scripts/testenv up failed ({}); stdout:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    let vars = parse_exports(&String::from_utf8_lossy(&out.stdout));
    let get = |k: &str| -> PathBuf {
        PathBuf::from(
            vars.get(k)
                .unwrap_or_else(|| panic!("scripts/testenv up printed no {k}: {vars:?}")),
        )
    };
    TestEnv {
        dir: get("TESTENV_DIR"),
        bin: get("TESTENV_BIN"),
        kubeconfig: get("KUBECONFIG"),
        member_kubeconfig: vars.get("TESTENV_MEMBER_KUBECONFIG").map(PathBuf::from),
        started_here: true,
    }
}

/// Parses `export NAME='value'` lines.
pub fn parse_exports(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("export "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches('\'').to_string()))
        .collect()
}

/// A kube client for a kubeconfig file.
pub async fn client_for(kubeconfig: &Path) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig)
        .unwrap_or_else(|e| panic!("reading {}: {e}", kubeconfig.display()));
    let config =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await
            .expect("kube config from kubeconfig");
    kube::Client::try_from(config).expect("kube client")
}

/// The admin kubeconfig `admin` of the test environment with its token replaced by `token`: same server, same CA
/// (a ServiceAccount's identity, for tests that act with only some rights).
pub fn kubeconfig_with_token(admin: &Path, token: &str) -> String {
    let text = std::fs::read_to_string(admin).unwrap();
    let mut replaced = 0;
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("token:") {
                replaced += 1;
                let indent = &l[..l.len() - l.trim_start().len()];
                format!("{indent}token: {token}")
            } else {
                l.to_string()
            }
        })
        .collect();
    assert_eq!(replaced, 1, "the admin kubeconfig has one token");
    lines.join("\n") + "\n"
}

/// A name no other test (of this or a concurrent run) uses: `<prefix>-<pid>-<n>-<time>`,
/// lowercased and cut to a valid DNS label.
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_nanos()
        % 1_000_000;
    let suffix = format!("-{}-{n}-{t:06}", std::process::id());
    let mut head: String = prefix
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    head.truncate(63 - suffix.len());
    let head = head.trim_matches('-');
    let head = if head.is_empty() { "t" } else { head };
    format!("{head}{suffix}")
}

/// Creates a fresh namespace for one test and returns its name.
pub async fn unique_namespace(client: &kube::Client, prefix: &str) -> String {
    let name = unique_name(prefix);
    create_namespace(client, &name, &[("tfsveltos.test/owner", "support")]).await;
    name
}

/// Creates namespace `name` with `labels`.
pub async fn create_namespace(client: &kube::Client, name: &str, labels: &[(&str, &str)]) {
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(fixtures::labels(labels)),
            ..Default::default()
        },
        ..Default::default()
    };
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap_or_else(|e| panic!("creating namespace {name}: {e}"));
}

/// Writes `text` to `path` and makes it executable (`chmod +x`): the exec plugin scripts of the tests.
pub fn write_executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    let status = Command::new("chmod")
        .arg("+x")
        .arg(path)
        .status()
        .unwrap_or_else(|e| panic!("chmod +x {}: {e}", path.display()));
    assert!(status.success(), "chmod +x {}: {status}", path.display());
}

/// Whether process `pid` is running (a zombie counts as gone).
pub fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // the state is the first field after the parenthesised command name
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Pids of live processes whose command line contains `needle`.
pub fn pids_with_cmdline_containing(needle: &str) -> Vec<u32> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .contains(needle)
                })
                .unwrap_or(false)
        })
        .filter(|&pid| pid_alive(pid))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Terraform / OpenTofu
// ---------------------------------------------------------------------------------------------

/// One CLI the provider is tested with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cli {
    /// `tofu`, `terraform-1.0.3` or `terraform`.
    pub name: String,
    /// Its executable.
    pub path: PathBuf,
}

impl Cli {
    /// OpenTofu built by `scripts/testenv`.
    pub fn tofu() -> Cli {
        Cli {
            name: "tofu".into(),
            path: bin_dir().join("tofu"),
        }
    }

    /// Terraform 1.0.3 (the oldest Terraform speaking plugin protocol 6), from `scripts/testenv`.
    pub fn terraform_1_0_3() -> Cli {
        Cli {
            name: "terraform-1.0.3".into(),
            path: bin_dir().join("terraform-1.0.3"),
        }
    }

    /// The `terraform` on PATH, when there is one.
    pub fn terraform_on_path() -> Option<Cli> {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|d| d.join("terraform"))
            .find(|p| p.is_file())
            .map(|path| Cli {
                name: "terraform".into(),
                path,
            })
    }

    /// The `terraform` on PATH through [`needed`]: its absence fails the test under `CI=true`
    /// and is recorded as a skip otherwise.
    pub fn terraform_needed() -> Option<Cli> {
        needed(Cli::terraform_on_path(), "`terraform` on PATH")
    }

    /// Every CLI the provider is tested with: `tofu`, `terraform-1.0.3`, and the `terraform` on
    /// PATH ([`Cli::terraform_needed`]: without it the caller runs with the other two, and the
    /// missing one fails the test under `CI=true` or is recorded as a skip).
    pub fn all() -> Vec<Cli> {
        let mut all = vec![Cli::tofu(), Cli::terraform_1_0_3()];
        all.extend(Cli::terraform_needed());
        all
    }

    /// Whether this is OpenTofu.
    pub fn is_tofu(&self) -> bool {
        self.name == "tofu"
    }

    /// `<cli> version` (first line), e.g. `OpenTofu v1.12.6` or `Terraform v1.0.3`.
    pub fn version(&self) -> String {
        let out = Command::new(&self.path)
            .arg("version")
            .env("CHECKPOINT_DISABLE", "1")
            .env("TF_CLI_CONFIG_FILE", "/dev/null")
            .output()
            .unwrap_or_else(|e| panic!("running {} version: {e}", self.path.display()));
        assert!(
            out.status.success(),
            "{} version failed:\n{}",
            self.name,
            describe_output(&out)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    }
}

/// How a [`Tf`] working directory finds the provider.
#[derive(Clone, Debug)]
pub enum Install {
    /// `dev_overrides` pointing at the directory of [`provider_binary`] (under both registry
    /// hosts: OpenTofu resolves `clusterinventory/sveltos` to registry.opentofu.org, Terraform to
    /// registry.terraform.io). Do not call `init`: with no network every CLI (tofu 1.12,
    /// terraform 1.0.3 and 1.11) fails it, looking the overridden provider up in the registry.
    /// `plan`/`apply`/`import`/`providers schema` work without it and print a warning about the
    /// override. Every CLI loads the provider's schema as soon as `required_providers` names it.
    DevOverrides,
    /// A `filesystem_mirror` at this directory (see [`make_unpacked_mirror`]) for our provider,
    /// `direct` for anything else; `init` installs from it and writes `.terraform.lock.hcl`.
    Mirror(PathBuf),
}

/// Renders a CLI configuration file.
pub fn cli_config(install: &Install) -> String {
    let quoted = |p: &Path| fixtures::hcl_string(&p.display().to_string());
    let addrs: Vec<String> = PROVIDER_HOSTS
        .iter()
        .map(|h| format!("{h}/{PROVIDER_SOURCE}"))
        .collect();
    match install {
        Install::DevOverrides => {
            let dir = provider_binary()
                .parent()
                .expect("provider binary has a directory")
                .to_path_buf();
            let mut s = String::from("provider_installation {\n  dev_overrides {\n");
            for a in &addrs {
                s += &format!("    \"{a}\" = {}\n", quoted(&dir));
            }
            s += "  }\n  direct {}\n}\n";
            s
        }
        Install::Mirror(mirror) => {
            let list = addrs
                .iter()
                .map(|a| format!("\"{a}\""))
                .collect::<Vec<_>>()
                .join(", ");
            format!(
                "provider_installation {{\n  filesystem_mirror {{\n    path    = {}\n    include = [{list}]\n  }}\n  direct {{\n    exclude = [{list}]\n  }}\n}}\n",
                quoted(mirror)
            )
        }
    }
}

/// Lays out an unpacked provider mirror for `version` (e.g. `0.1.0`) under `root`, for every
/// host in [`PROVIDER_HOSTS`], with a copy of [`provider_binary`]:
/// `<root>/<host>/clusterinventory/sveltos/<version>/linux_amd64/terraform-provider-sveltos_v<version>`.
pub fn make_unpacked_mirror(root: &Path, version: &str) {
    let (ns, ty) = PROVIDER_SOURCE.split_once('/').expect("namespace/type");
    let platform = format!("{}_{}", std::env::consts::OS, go_arch());
    for host in PROVIDER_HOSTS {
        let dir = root
            .join(host)
            .join(ns)
            .join(ty)
            .join(version)
            .join(&platform);
        std::fs::create_dir_all(&dir).expect("creating mirror directory");
        std::fs::copy(
            provider_binary(),
            dir.join(format!("terraform-provider-{ty}_v{version}")),
        )
        .expect("copying provider into mirror");
    }
}

fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    }
}

/// A working directory driven by one CLI.
pub struct Tf {
    /// The CLI it runs.
    pub cli: Cli,
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Tf {
    /// A fresh working directory using `dev_overrides` for the provider.
    pub fn new(cli: &Cli) -> Tf {
        Tf::with_install(cli, Install::DevOverrides)
    }

    /// A fresh working directory installing the provider from a filesystem mirror.
    pub fn with_mirror(cli: &Cli, mirror: &Path) -> Tf {
        Tf::with_install(cli, Install::Mirror(mirror.to_path_buf()))
    }

    fn with_install(cli: &Cli, install: Install) -> Tf {
        let dir = tempfile::Builder::new()
            .prefix(&format!("tfsveltos-tf-{}-", cli.name))
            .tempdir()
            .expect("creating working directory");
        std::fs::write(dir.path().join(".tf-cli.rc"), cli_config(&install))
            .expect("writing CLI config");
        Tf {
            cli: cli.clone(),
            dir,
            env: Vec::new(),
        }
    }

    /// The working directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The CLI configuration file (TF_CLI_CONFIG_FILE) of this working directory.
    fn cli_config_path(&self) -> PathBuf {
        self.dir().join(".tf-cli.rc")
    }

    /// Sets an environment variable for every command (e.g. `KUBECONFIG`, `TF_LOG`).
    pub fn env(&mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> &mut Self {
        self.env.push((
            key.to_string(),
            value.as_ref().to_string_lossy().into_owned(),
        ));
        self
    }

    /// Writes `main.tf`.
    pub fn write_main(&self, hcl: &str) -> &Self {
        self.write_file("main.tf", hcl)
    }

    /// Writes a file in the working directory.
    pub fn write_file(&self, name: &str, content: &str) -> &Self {
        std::fs::write(self.dir().join(name), content)
            .unwrap_or_else(|e| panic!("writing {name}: {e}"));
        self
    }

    /// The command for `args`, with a clean environment for the CLI: our CLI config,
    /// TF_IN_AUTOMATION, CHECKPOINT_DISABLE, no KUBECONFIG unless set with [`Tf::env`].
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.cli.path);
        cmd.args(args)
            .current_dir(self.dir())
            .stdin(Stdio::null())
            .env("TF_CLI_CONFIG_FILE", self.cli_config_path())
            .env("TF_IN_AUTOMATION", "1")
            .env("CHECKPOINT_DISABLE", "1")
            .env("NO_COLOR", "1")
            .env_remove("KUBECONFIG")
            .env_remove("TF_LOG")
            .env_remove("TF_PLUGIN_CACHE_DIR")
            .env_remove("TF_DATA_DIR")
            .env_remove("TF_WORKSPACE");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs the CLI and returns whatever happened.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args)
            .output()
            .unwrap_or_else(|e| panic!("running {} {args:?}: {e}", self.cli.name))
    }

    /// Runs the CLI, panicking with its output unless it succeeds; returns stdout.
    pub fn run_ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{} {args:?} failed ({}) in {}:\n{}",
            self.cli.name,
            out.status,
            self.dir().display(),
            describe_output(&out)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs the CLI expecting failure; returns stdout + stderr for assertions on diagnostics.
    pub fn run_err(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            !out.status.success(),
            "{} {args:?} unexpectedly succeeded:\n{}",
            self.cli.name,
            describe_output(&out)
        );
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    /// `init`. Needed (and possible) only with [`Install::Mirror`]; see [`Install::DevOverrides`].
    pub fn init(&self) -> String {
        self.run_ok(&["init", "-input=false", "-no-color"])
    }

    /// `plan -detailed-exitcode`: 0 = no changes, 2 = changes; panics on errors (1).
    pub fn plan(&self) -> i32 {
        let args = ["plan", "-input=false", "-no-color", "-detailed-exitcode"];
        let out = self.run(&args);
        match out.status.code() {
            Some(c @ (0 | 2)) => c,
            _ => panic!(
                "{} {args:?} failed ({}) in {}:\n{}",
                self.cli.name,
                out.status,
                self.dir().display(),
                describe_output(&out)
            ),
        }
    }

    /// `plan -out` then `show -json` of that plan.
    pub fn plan_json(&self) -> serde_json::Value {
        self.run_ok(&["plan", "-input=false", "-no-color", "-out=tfplan"]);
        self.json(&["show", "-json", "-no-color", "tfplan"])
    }

    /// `apply -auto-approve`; returns stdout.
    pub fn apply(&self) -> String {
        self.run_ok(&["apply", "-input=false", "-no-color", "-auto-approve"])
    }

    /// `destroy -auto-approve`; returns stdout.
    pub fn destroy(&self) -> String {
        self.run_ok(&["destroy", "-input=false", "-no-color", "-auto-approve"])
    }

    /// `import ADDRESS ID`; returns stdout.
    pub fn import(&self, address: &str, id: &str) -> String {
        self.run_ok(&["import", "-input=false", "-no-color", address, id])
    }

    /// `show -json` of the state.
    pub fn show_json(&self) -> serde_json::Value {
        self.json(&["show", "-json", "-no-color"])
    }

    /// `output -json`.
    pub fn outputs_json(&self) -> serde_json::Value {
        self.json(&["output", "-json", "-no-color"])
    }

    /// `providers schema -json` (works without `init` under [`Install::DevOverrides`] with every
    /// CLI, Terraform 1.0.3 included).
    fn providers_schema(&self) -> serde_json::Value {
        self.json(&["providers", "schema", "-json"])
    }

    /// The schema of our provider from `providers schema -json`, whichever host the CLI uses.
    pub fn provider_schema(&self) -> serde_json::Value {
        let all = self.providers_schema();
        PROVIDER_HOSTS
            .iter()
            .find_map(|h| all["provider_schemas"].get(format!("{h}/{PROVIDER_SOURCE}")))
            .cloned()
            .unwrap_or_else(|| panic!("{}: no schema for {PROVIDER_SOURCE}: {all}", self.cli.name))
    }

    /// The state resources of `show -json` (root module), by address.
    pub fn state_resources(&self) -> BTreeMap<String, serde_json::Value> {
        let state = self.show_json();
        state["values"]["root_module"]["resources"]
            .as_array()
            .map(|rs| {
                rs.iter()
                    .filter_map(|r| Some((r["address"].as_str()?.to_string(), r.clone())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Runs the CLI and parses its stdout as JSON.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let stdout = self.run_ok(args);
        serde_json::from_str(&stdout).unwrap_or_else(|e| {
            panic!(
                "{} {args:?}: stdout is not JSON ({e}):\n{stdout}",
                self.cli.name
            )
        })
    }
}

/// stdout and stderr of a finished command, for panic messages.
pub fn describe_output(out: &Output) -> String {
    format!(
        "--- stdout ---\n{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// What client-go makes of `bytes` as a kubeconfig file (`kubectl config view --raw -o json`, with the file written
/// to `dir`), or kubectl's error: the real consumer's judgement of a kubeconfig.
pub fn client_go_view(dir: &Path, bytes: &[u8]) -> Result<serde_json::Value, String> {
    let file = dir.join("client-go-view-kubeconfig");
    std::fs::write(&file, bytes).expect("writing the kubeconfig to judge");
    let out = Command::new(bin_dir().join("kubectl"))
        .args(["config", "view", "--raw", "-o", "json", "--kubeconfig"])
        .arg(&file)
        .env_remove("KUBECONFIG")
        .output()
        .expect("running kubectl");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}

/// A deterministic pseudo-random sequence (xorshift64), for generated corpora that must be the same in every run.
pub struct Rng(pub u64);

impl Rng {
    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    /// One of `from`.
    pub fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// This machine's platform in the release zips' `OS_ARCH` form (`linux_amd64`).
pub fn release_platform() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("{}_{arch}", std::env::consts::OS)
}
