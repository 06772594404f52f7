//! The test environment itself: a real kube-apiserver with our CRDs, a member cluster, the real
//! CLIs, and nothing left running afterwards.

use std::process::{Command, Stdio};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ObjectMeta, PostParams};
use serde_json::json;
use support::{Cli, PROVIDER_SOURCE, TestEnv, Tf, fixtures};

fn cluster_profile_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("multicluster.x-k8s.io", "v1alpha1", "ClusterProfile"),
        "clusterprofiles",
    )
}

fn sveltos_cluster_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("lib.projectsveltos.io", "v1beta1", "SveltosCluster"),
        "sveltosclusters",
    )
}

#[tokio::test]
async fn crds_are_established_and_served() {
    let env = TestEnv::get();
    let client = env.client().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let ns = support::unique_namespace(&client, "crds").await;
    for (crd_name, ar) in [
        (
            "clusterprofiles.multicluster.x-k8s.io",
            cluster_profile_resource(),
        ),
        (
            "sveltosclusters.lib.projectsveltos.io",
            sveltos_cluster_resource(),
        ),
    ] {
        let crd = crds
            .get(crd_name)
            .await
            .unwrap_or_else(|e| panic!("CRD {crd_name} is not installed: {e}"));
        let established = crd
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .any(|c| c.type_ == "Established" && c.status == "True");
        assert!(established, "CRD {crd_name} is not Established: {crd:?}");
        let version = crd
            .spec
            .versions
            .iter()
            .find(|v| v.name == ar.version)
            .unwrap_or_else(|| panic!("CRD {crd_name} has no version {}", ar.version));
        assert!(version.served, "{crd_name} {} is not served", ar.version);
        assert_eq!(crd.spec.scope, "Namespaced", "{crd_name}");

        // served: listing works through the API
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &ar);
        let list = api
            .list(&Default::default())
            .await
            .unwrap_or_else(|e| panic!("listing {}: {e}", ar.plural));
        assert!(list.items.is_empty());
    }
}

#[tokio::test]
async fn cluster_profile_created_with_kube_is_read_back_with_kubectl() {
    let env = TestEnv::get();
    let client = env.client().await;
    let ns = support::unique_namespace(&client, "cp-roundtrip").await;
    let ar = cluster_profile_resource();
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &ar);
    let mut obj = DynamicObject::new("alpha", &ar).within(&ns);
    obj.data = json!({
        "spec": {
            "displayName": "Alpha cluster",
            "clusterManager": { "name": "tfsveltos-test" }
        }
    });
    api.create(&PostParams::default(), &obj)
        .await
        .expect("creating a ClusterProfile");

    let out = env.kubectl(&[
        "get",
        "clusterprofiles.v1alpha1.multicluster.x-k8s.io",
        "alpha",
        "-n",
        &ns,
        "-o",
        "json",
    ]);
    let got: serde_json::Value = serde_json::from_str(&out).expect("kubectl output is JSON");
    assert_eq!(got["apiVersion"], "multicluster.x-k8s.io/v1alpha1");
    assert_eq!(got["kind"], "ClusterProfile");
    assert_eq!(got["metadata"]["name"], "alpha");
    assert_eq!(got["metadata"]["namespace"], ns.as_str());
    assert_eq!(got["spec"]["displayName"], "Alpha cluster");
    assert_eq!(got["spec"]["clusterManager"]["name"], "tfsveltos-test");
}

#[tokio::test]
async fn apiserver_reports_v1_37() {
    let env = TestEnv::get();
    let info = env
        .client()
        .await
        .apiserver_version()
        .await
        .expect("GET /version");
    assert!(
        info.git_version.starts_with("v1.37."),
        "server version {info:?}"
    );
    assert_eq!(info.major, "1");
    assert_eq!(info.minor, "37");

    // kubectl parses both its own and the server's version
    let out = env.kubectl(&["version", "-o", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("kubectl version JSON");
    for side in ["clientVersion", "serverVersion"] {
        let git = v[side]["gitVersion"].as_str().unwrap_or_default();
        assert!(git.starts_with("v1.37."), "{side}: {v}");
    }
}

#[test]
fn clis_report_their_versions() {
    let tofu = Cli::tofu().version();
    assert!(tofu.starts_with("OpenTofu v1.12.6"), "tofu version: {tofu}");
    let tf = Cli::terraform_1_0_3().version();
    assert_eq!(tf, "Terraform v1.0.3");
    if let Some(cli) = Cli::terraform_needed() {
        let v = cli.version();
        assert!(v.starts_with("Terraform v1."), "terraform on PATH: {v}");
    }
}

/// The runner works with every CLI and its dev_overrides configuration. The configuration names
/// no provider: every CLI loads the schema of each required provider, even an unused one, so that
/// is left to the provider's own tests.
#[test]
fn tf_runner_plans_and_applies_with_every_cli() {
    for cli in Cli::all() {
        let tf = Tf::new(&cli);
        tf.write_main(
            r#"
variable "greeting" {
  type    = string
  default = "hello"
}
output "greeting" {
  value = "${var.greeting} from the test environment"
}
"#,
        );
        assert_eq!(tf.plan(), 2, "{}: an output to add is a change", cli.name);
        let applied = tf.apply();
        assert!(
            applied.contains("Apply complete"),
            "{}: {applied}",
            cli.name
        );
        assert_eq!(tf.plan(), 0, "{}: nothing left to change", cli.name);
        let outputs = tf.outputs_json();
        assert_eq!(
            outputs["greeting"]["value"], "hello from the test environment",
            "{}",
            cli.name
        );
        let state = tf.show_json();
        assert_eq!(
            state["values"]["outputs"]["greeting"]["value"], "hello from the test environment",
            "{}: {state}",
            cli.name
        );
        let plan = tf.plan_json();
        assert!(plan["format_version"].is_string(), "{}: {plan}", cli.name);
        tf.destroy();
    }
}

#[tokio::test]
async fn member_cluster_is_a_different_cluster() {
    let _writing = support::hub::writing().await;
    let env = TestEnv::get();
    let member_kc = env.member_kubeconfig();
    assert_ne!(
        TestEnv::server_url(&env.kubeconfig),
        TestEnv::server_url(member_kc),
        "main and member must be different servers"
    );
    let main = env.client().await;
    let member = env.member_client().await;

    // a namespace made on the main cluster does not exist on the member, and the other way round
    let ns_main = support::unique_namespace(&main, "only-main").await;
    let ns_member = support::unique_namespace(&member, "only-member").await;
    let main_ns: Api<Namespace> = Api::all(main.clone());
    let member_ns: Api<Namespace> = Api::all(member.clone());
    assert!(main_ns.get_opt(&ns_main).await.unwrap().is_some());
    assert!(member_ns.get_opt(&ns_main).await.unwrap().is_none());
    assert!(member_ns.get_opt(&ns_member).await.unwrap().is_some());
    assert!(main_ns.get_opt(&ns_member).await.unwrap().is_none());

    // the member answers with its own identity: its own kube-root objects, its own uid
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("identity".into()),
            ..Default::default()
        },
        data: Some([("cluster".to_string(), "member".to_string())].into()),
        ..Default::default()
    };
    Api::<ConfigMap>::namespaced(member.clone(), &ns_member)
        .create(&PostParams::default(), &cm)
        .await
        .expect("creating a ConfigMap on the member");
    let read = Api::<ConfigMap>::namespaced(member.clone(), &ns_member)
        .get("identity")
        .await
        .expect("reading it back");
    assert_eq!(read.data.unwrap()["cluster"], "member");
    let main_default = main_ns.get("default").await.unwrap();
    let member_default = member_ns.get("default").await.unwrap();
    assert_ne!(
        main_default.metadata.uid, member_default.metadata.uid,
        "the two clusters have separate storage"
    );
    let member_version = member.apiserver_version().await.unwrap();
    assert!(member_version.git_version.starts_with("v1.37."));
}

/// `up` then `down` of a separate environment leaves no process of it alive.
#[test]
fn up_then_down_leaves_no_process() {
    let env = TestEnv::start(false);
    let dir = env.dir.clone();
    let needle = dir.display().to_string();
    let pids = env.daemon_pids();
    assert_eq!(pids.len(), 2, "etcd and kube-apiserver: {pids:?}");
    assert!(pids.iter().all(|&p| support::pid_alive(p)));
    assert!(!support::pids_with_cmdline_containing(&needle).is_empty());
    assert!(env.member_kubeconfig.is_none());
    env.kubectl(&["get", "--raw", "/readyz"]);

    env.down();
    for p in &pids {
        assert!(!support::pid_alive(*p), "pid {p} survived down");
    }
    // A helper of `up` (its watchdog, a probe) killed with the daemons may take a moment to be reaped on a busy
    // machine: wait for the observable end, within a hang guard.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut left = support::pids_with_cmdline_containing(&needle);
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(200));
        left = support::pids_with_cmdline_containing(&needle);
    }
    let described: Vec<String> = left
        .iter()
        .map(|p| {
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            format!("{p}: {}", String::from_utf8_lossy(&cmd).replace('\0', " "))
        })
        .collect();
    assert!(
        left.is_empty(),
        "processes of {needle} survived: {described:?}"
    );
    assert!(!dir.exists(), "{needle} was not removed");
}

/// The watchdog of `up --owner-pid` tears the environment down when its owner dies without
/// cleaning up (as a panicking or killed test binary would).
#[test]
fn watchdog_tears_down_when_owner_dies() {
    let mut owner = Command::new("sleep")
        .arg("600")
        .stdin(Stdio::null())
        .spawn()
        .expect("spawning sleep");
    let out = Command::new(support::testenv_script())
        .args(["up", "--owner-pid", &owner.id().to_string()])
        .stderr(Stdio::inherit())
        .output()
        .expect("running scripts/testenv up");
    assert!(out.status.success(), "up failed");
    let vars = support::parse_exports(&String::from_utf8_lossy(&out.stdout));
    let dir = std::path::PathBuf::from(&vars["TESTENV_DIR"]);
    let needle = dir.display().to_string();
    let pids: Vec<u32> = std::fs::read_to_string(dir.join("pids"))
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|&p| support::pid_alive(p)));

    owner.kill().unwrap();
    owner.wait().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let left = support::pids_with_cmdline_containing(&needle);
        if left.is_empty() && !dir.exists() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the watchdog did not tear {needle} down: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(pids.iter().all(|&p| !support::pid_alive(p)));
}

/// dev_overrides: every CLI runs the provider cargo built, without `init`.
#[test]
fn dev_overrides_load_the_built_provider_with_every_cli() {
    for cli in Cli::all() {
        let tf = Tf::new(&cli);
        tf.write_main(&fixtures::required_providers(PROVIDER_SOURCE, None));
        let schema = tf.provider_schema();
        assert!(
            schema["provider"]["block"].is_object(),
            "{}: {schema}",
            cli.name
        );
        assert_eq!(tf.plan(), 0, "{}: an empty configuration", cli.name);
    }
}

/// filesystem_mirror: every CLI installs the provider from an unpacked mirror with `init`.
#[test]
fn filesystem_mirror_installs_the_provider_with_every_cli() {
    let mirror = tempfile::tempdir().unwrap();
    support::make_unpacked_mirror(mirror.path(), "0.1.0");
    for cli in Cli::all() {
        let tf = Tf::with_mirror(&cli, mirror.path());
        tf.write_main(&fixtures::required_providers(PROVIDER_SOURCE, None));
        let out = tf.init();
        assert!(
            out.contains("clusterinventory/sveltos"),
            "{}: {out}",
            cli.name
        );
        let lock = std::fs::read_to_string(tf.dir().join(".terraform.lock.hcl"))
            .unwrap_or_else(|e| panic!("{}: no lock file: {e}", cli.name));
        assert!(
            lock.contains("clusterinventory/sveltos"),
            "{}: {lock}",
            cli.name
        );
        assert!(lock.contains("0.1.0"), "{}: {lock}", cli.name);
        let schema = tf.provider_schema();
        assert!(schema["provider"]["block"].is_object(), "{}", cli.name);
    }
}

/// Run in a child process by [`missing_requirements_fail_under_ci_and_are_recorded_otherwise`]:
/// a test that finds one thing missing.
#[test]
#[ignore = "run in a child process by missing_requirements_fail_under_ci_and_are_recorded_otherwise"]
fn finds_something_missing() {
    assert!(support::needed(None::<()>, "the-missing-thing").is_none());
}

/// `support::needed`: a missing requirement fails the test under `CI=true`, and otherwise is a
/// skip recorded in `$TESTENV_TMPDIR/skipped` and written past libtest's output capture.
#[test]
fn missing_requirements_fail_under_ci_and_are_recorded_otherwise() {
    let run_dir = tempfile::tempdir().expect("tempdir");
    let log = run_dir.path().join("skipped");
    let child = |ci: &str| {
        Command::new(std::env::current_exe().expect("test binary"))
            .args(["--ignored", "--exact", "testenv::finds_something_missing"])
            .env("TESTENV_TMPDIR", run_dir.path())
            .env("CI", ci)
            .output()
            .expect("running the test binary")
    };
    let skipped = "skipped: e2e::testenv::finds_something_missing: the-missing-thing";

    let out = child("false");
    assert!(out.status.success(), "{}", support::describe_output(&out));
    let text = std::fs::read_to_string(&log).expect("the skip is recorded");
    assert_eq!(text, format!("{skipped}\n"));
    // Visible in a plain `cargo test` too: libtest does not capture it.
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(skipped),
        "{}",
        support::describe_output(&out)
    );

    let out = child("true");
    let all = support::describe_output(&out);
    assert!(!out.status.success(), "CI=true must fail:\n{all}");
    assert!(
        all.contains("the-missing-thing is missing (required when CI=true)"),
        "{all}"
    );
    let text = std::fs::read_to_string(&log).expect("skip log");
    assert!(
        text.contains(
            "missing: e2e::testenv::finds_something_missing: the-missing-thing (required when CI=true)"
        ),
        "{text}"
    );
}
