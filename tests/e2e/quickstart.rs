//! The quickstart example (examples/quickstart) against the local control plane with the demo's inventory
//! (scripts/demo): a Secret next to its profile in the seed format (key `config`), a KEP push-format Secret (key
//! `Config`) in a namespace labelled as the `sveltos` consumer's, and a `kubeconfig-secretreader` access provider
//! naming a Secret. The quickstart sets no `credentials` block, so this is also the test of the defaults a new user
//! gets. Two tests: its `tofu test`, and its README's "Run it" steps run as written, from `scripts/install` to
//! `tofu destroy`. (scripts/test also runs scripts/demo itself.)

use std::path::Path;

use serde_json::json;
use support::{Cli, TestEnv, Tf, fixtures, inventory::Inv, unique_namespace};
use tfsveltos::api::keys;

/// Both tests apply a bridge named `quickstart` (the example's default) with its claim in `default`: one at a time.
static QUICKSTART: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The demo's inventory in two fresh namespaces (returned): team-a's cluster-1 in the seed format, team-b's
/// cluster-2 in the KEP push format (in a third namespace, labelled as the `sveltos` consumer's) and cluster-3
/// through a `kubeconfig-secretreader` access provider.
async fn demo_inventory(env: &TestEnv, inv: &Inv) -> (String, String) {
    let a = unique_namespace(&inv.client, "qsa").await;
    let b = unique_namespace(&inv.client, "qsb").await;
    let consumer_ns = unique_namespace(&inv.client, "qsinv").await;
    inv.label_namespace(&consumer_ns, keys::CONSUMER_NAMESPACE_LABEL, "sveltos")
        .await;
    let member = String::from_utf8(std::fs::read(env.member_kubeconfig()).unwrap()).unwrap();
    inv.profile(&a, "cluster-1", &[("env", "prod")], json!(null))
        .await;
    inv.secret(
        &a,
        "cluster-1-kubeconfig",
        &[(keys::CLUSTER_PROFILE_LABEL, "cluster-1")],
        &[("config", &member)],
    )
    .await;
    inv.profile(&b, "cluster-2", &[("env", "staging")], json!(null))
        .await;
    inv.secret(
        &consumer_ns,
        &format!("{b}-cluster-2"),
        &[
            (keys::CLUSTER_PROFILE_LABEL, "cluster-2"),
            (keys::CLUSTER_PROFILE_NAMESPACE_LABEL, &b),
        ],
        &[("Config", &member)],
    )
    .await;
    inv.secret(&b, "cluster-3-access", &[], &[("value", &member)])
        .await;
    inv.profile(
        &b,
        "cluster-3",
        &[("env", "prod")],
        fixtures::secret_reader_status(
            &member,
            json!({"name": "cluster-3-access", "key": "value"}),
        ),
    )
    .await;
    (a, b)
}

/// The SveltosClusters of the bridge `quickstart` in namespaces `a` and `b`.
fn bridged(env: &TestEnv, a: &str, b: &str) -> Vec<String> {
    let mut names = Vec::new();
    for ns in [a, b] {
        let out = env.kubectl(&[
            "get",
            "sveltoscluster",
            "-n",
            ns,
            "-l",
            "sveltos.clusterinventory.io/bridge=quickstart",
            "-o",
            "name",
        ]);
        names.extend(
            out.lines()
                .map(|l| format!("{ns}/{}", l.rsplit('/').next().unwrap())),
        );
    }
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn quickstart_tofu_test_passes_on_the_demo_inventory() {
    let _one_at_a_time = QUICKSTART.lock().await;
    let env = TestEnv::get();
    let inv = Inv::new().await;
    let (a, b) = demo_inventory(env, &inv).await;

    let example = || {
        let tf = Tf::new(&Cli::tofu());
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/quickstart");
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".tf") || name.ends_with(".tftest.hcl") {
                tf.write_file(&name, &std::fs::read_to_string(e.path()).unwrap());
            }
        }
        tf
    };
    let vars = [
        format!("-var=kubeconfig={}", env.kubeconfig.display()),
        format!("-var=namespaces=[\"{a}\",\"{b}\"]"),
    ];
    let with_vars = |args: &[&str]| -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        all.extend(vars.iter().cloned());
        all
    };
    let run = |tf: &Tf, args: &[&str]| {
        let all = with_vars(args);
        tf.run(&all.iter().map(String::as_str).collect::<Vec<_>>())
    };
    // While the README's bridge `quickstart` exists in another state, the test fails naming the reason.
    let applied = example();
    let out = run(
        &applied,
        &["apply", "-auto-approve", "-input=false", "-no-color"],
    );
    assert!(out.status.success(), "{}", support::describe_output(&out));
    let tf = example();
    let out = run(&tf, &["test", "-no-color"]);
    let text = support::describe_output(&out);
    assert!(
        !out.status.success(),
        "tofu test passed next to the applied bridge:\n{text}"
    );
    assert!(
        support::inventory::flat(&text).contains("Bridge name already used by another state"),
        "{text}"
    );
    let out = run(
        &applied,
        &["destroy", "-auto-approve", "-input=false", "-no-color"],
    );
    assert!(out.status.success(), "{}", support::describe_output(&out));

    let out = run(&tf, &["test", "-no-color"]);
    let out = support::describe_output(&out);
    assert!(out.contains("2 passed, 0 failed"), "{out}");
    // `tofu test` destroys what it applied.
    let left = env.kubectl(&[
        "get",
        "sveltoscluster",
        "-A",
        "-l",
        "sveltos.clusterinventory.io/bridge=quickstart",
        "-o",
        "name",
    ]);
    assert!(left.trim().is_empty(), "left behind: {left}");
}

/// The commands of the "Run it" block of examples/quickstart/README.md, one per line.
fn run_it_commands() -> Vec<String> {
    let path = support::repo_root().join("examples/quickstart/README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let section = &readme[readme.find("## Run it").expect("a \"Run it\" section")..];
    let start = section.find("```sh\n").expect("a sh block") + "```sh\n".len();
    let block = &section[start..start + section[start..].find("```").unwrap()];
    block.lines().map(str::to_string).collect()
}

/// The README's steps, run by bash as written, in a fresh HOME and a directory laid out as a clone: `scripts/install`
/// (given the test build with `--binary` instead of building a release: what it does with the binary is the same),
/// `cd examples/quickstart`, `tofu init` with no CLI configuration, plan, apply (approved), the outputs,
/// kubectl, destroy. The one addition: the control plane is shared with other tests, so `TF_VAR_namespaces` narrows
/// the run to this test's namespaces, as the README's example narrows it with `-var`.
#[tokio::test(flavor = "multi_thread")]
async fn quickstart_readme_runs_as_written() {
    let _one_at_a_time = QUICKSTART.lock().await;
    let env = TestEnv::get();
    let inv = Inv::new().await;
    let (a, b) = demo_inventory(env, &inv).await;
    let commands = run_it_commands();
    assert!(commands[0].starts_with("scripts/install "), "{commands:?}");
    assert!(
        commands[1].starts_with("cd examples/quickstart"),
        "{commands:?}"
    );

    let (home, clone) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let example = clone.path().join("examples/quickstart");
    std::fs::create_dir_all(&example).unwrap();
    let source = support::repo_root().join("examples/quickstart");
    for e in std::fs::read_dir(&source).unwrap().flatten() {
        std::fs::copy(e.path(), example.join(e.file_name())).unwrap();
    }
    let install = format!(
        "{} --binary {}",
        support::repo_root().join("scripts/install").display(),
        support::provider_binary().display()
    );
    let script = format!(
        "set -euo pipefail\n{}\n{}\n",
        commands[0].replacen("scripts/install", &install, 1),
        commands[1..].join("\n")
    );
    let out = run_script(env, home.path(), clone.path(), &script, &[&a, &b]);
    let text = support::describe_output(&out);
    assert!(out.status.success(), "the README's steps failed:\n{text}");
    for cluster in [
        format!("{a}/cluster-1"),
        format!("{b}/cluster-2"),
        format!("{b}/cluster-3"),
    ] {
        assert!(
            text.contains(&cluster),
            "tofu output profiles lists {cluster}:\n{text}"
        );
    }
    for name in ["cluster-1", "cluster-2", "cluster-3"] {
        let listed = format!("{name}   ");
        assert!(
            text.contains(&listed),
            "kubectl get lists the SveltosCluster {name}:\n{text}"
        );
    }
    assert!(text.contains("Destroy complete!"), "{text}");
    assert!(
        bridged(env, &a, &b).is_empty(),
        "tofu destroy left SveltosClusters"
    );
}

/// Runs `script` with bash in `dir`, as a user's shell would: `HOME=home`, no CLI configuration, the test
/// environment's `tofu` and `kubectl` first on PATH, `KUBECONFIG` for the control plane. The `yes` a user types
/// at apply's and destroy's prompts comes from `TF_CLI_ARGS_apply`/`TF_CLI_ARGS_destroy` (`-auto-approve`): the
/// CLI reads its standard input buffered, so answers piped to the script would all go to its first command.
fn run_script(
    env: &TestEnv,
    home: &Path,
    dir: &Path,
    script: &str,
    namespaces: &[&str],
) -> std::process::Output {
    let path = format!(
        "{}:{}",
        support::bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("HOME", home)
        .env("PATH", path)
        .env("KUBECONFIG", &env.kubeconfig)
        .env("TF_VAR_namespaces", json!(namespaces).to_string())
        .env("TF_CLI_ARGS", "-no-color")
        .env("TF_CLI_ARGS_apply", "-auto-approve")
        .env("TF_CLI_ARGS_destroy", "-auto-approve")
        .env("CHECKPOINT_DISABLE", "1")
        .env_remove("TF_CLI_CONFIG_FILE")
        .env_remove("TOFU_CLI_CONFIG_FILE")
        .env_remove("KUBE_CONFIG_PATH")
        .env_remove("KUBE_CONFIG_PATHS")
        .env_remove("TF_DATA_DIR")
        .env_remove("TF_PLUGIN_CACHE_DIR")
        .env_remove("TF_LOG")
        .env_remove("XDG_DATA_HOME")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running bash")
}
