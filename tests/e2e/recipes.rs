//! The recipes of `examples/recipes` (see `docs/guides/running-in-ci.md`):
//!
//! * every configuration validates with every CLI that supports its syntax (the migration's `removed` blocks are
//!   rejected by Terraform 1.0.3, as its README says), with the `gavinbunney/kubectl` provider where a recipe
//!   names it (the benchmark's peer binary, `target/bench/peer-bin`, built here the way `scripts/bench` builds it
//!   when it is absent);
//! * the CI files are valid YAML with their schedule trigger and their one-run-at-a-time setting; the GitHub
//!   workflows pass the checks `tests/plugin/workflows.rs` applies to `.github/workflows`; every script is valid shell;
//!   every `tofu`/`terraform` subcommand and flag they run exists in both CLIs' help;
//! * the fleet's states differ where they must (name, claim namespace, selection, shard), and each state's RBAC
//!   binds only its own namespaces with the rules of `examples/rbac`;
//! * the handover order of `handover/README.md`, run with its files against the real API server: the
//!   SveltosCluster and its Secret keep their UIDs at every step, and the wrong order is refused;
//! * the migration from `kubectl_manifest`, run with its files: no SveltosCluster or Secret is deleted, the bridge
//!   owns them afterwards, the next plan is empty.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value as Json, json};
use support::workflow_lint::{Known, lint, parse_yaml};
use support::{
    Cli, Install, Tf, cli_config, fixtures,
    inventory::{Inv, text},
    unique_name, unique_namespace,
};
use tfsveltos::api::keys;

fn recipes() -> PathBuf {
    support::repo_root().join("examples/recipes")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn recipe(rel: &str) -> String {
    read(&recipes().join(rel))
}

// ---------------------------------------------------------------------------------------------------------------
// the kubectl provider (the benchmark's peer)
// ---------------------------------------------------------------------------------------------------------------

/// The directory holding `terraform-provider-kubectl` built from `baselines/peer` (as `scripts/bench` builds it, into
/// `<target>/bench/peer-bin`, keyed by the same stamp), building it when it is absent or stale. `None` (recorded
/// through `support::needed`: a failure under `CI=true`) when it cannot be built.
fn kubectl_provider_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    let found = DIR
        .get_or_init(|| {
            let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
                .parent()
                .expect("the target directory")
                .to_path_buf();
            let dir = target.join("bench").join("peer-bin");
            let binary = dir.join("terraform-provider-kubectl");
            let stamp = dir.join("stamp");
            let peer = support::repo_root().join("baselines/peer");
            let want = read(&peer.join("go.sum")) + &read(&peer.join("go.mod"));
            if binary.is_file() && std::fs::read_to_string(&stamp).ok().as_ref() == Some(&want) {
                return Some(dir);
            }
            eprintln!(
                "recipes: building the kubectl provider from baselines/peer (as scripts/bench does)"
            );
            std::fs::create_dir_all(&dir).ok()?;
            let built = Command::new("go")
                .args(["build", "-trimpath", "-ldflags", "-s -w", "-o"])
                .arg(&binary)
                .arg("github.com/gavinbunney/terraform-provider-kubectl")
                .current_dir(&peer)
                .env("CGO_ENABLED", "0")
                .status()
                .is_ok_and(|s| s.success());
            if !built {
                return None;
            }
            std::fs::write(&stamp, want).ok()?;
            Some(dir)
        })
        .clone();
    support::needed(
        found,
        "the gavinbunney/kubectl provider (target/bench/peer-bin, built from baselines/peer with `go`)",
    )
}

/// A working directory for `cli` whose CLI configuration also overrides `gavinbunney/kubectl` with `kubectl_dir`.
fn tf_with_kubectl(cli: &Cli, kubectl_dir: &Path) -> Tf {
    let tf = Tf::new(cli);
    let mut config = cli_config(&Install::DevOverrides);
    let mut lines = String::new();
    for host in support::PROVIDER_HOSTS {
        lines += &format!(
            "    \"{host}/gavinbunney/kubectl\" = {}\n",
            fixtures::hcl_string(&kubectl_dir.display().to_string())
        );
    }
    let at = config
        .find("  }\n  direct {}")
        .expect("the dev_overrides block");
    config.insert_str(at, &lines);
    tf.write_file(".tf-cli.rc", &config);
    tf
}

// ---------------------------------------------------------------------------------------------------------------
// validation
// ---------------------------------------------------------------------------------------------------------------

/// Directories under `examples/recipes` holding `.tf` files.
fn tf_dirs() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut has_tf = false;
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "tf") {
                has_tf = true;
            }
        }
        if has_tf {
            out.push(dir.to_path_buf());
        }
    }
    let mut out = Vec::new();
    walk(&recipes(), &mut out);
    out.sort();
    out
}

/// The `.tf` files of `dir`: (file name, text).
fn tf_files(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "tf" || x == "tofu"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                read(&p),
            )
        })
        .collect();
    out.sort();
    out
}

/// Validates `files` with `cli`: success expected, or, for a `removed` block on a CLI older than Terraform 1.7,
/// the block itself rejected.
fn validate(cli: &Cli, kubectl: Option<&Path>, at: &str, files: &[(String, String)]) {
    let tf = match kubectl {
        Some(dir) => tf_with_kubectl(cli, dir),
        None => Tf::new(cli),
    };
    for (name, text) in files {
        tf.write_file(name, text);
    }
    let out = tf.run(&["validate", "-no-color"]);
    let said = text(&out);
    let removed = files.iter().any(|(_, t)| t.contains("\nremoved {"));
    if removed && *cli == Cli::terraform_1_0_3() {
        assert!(
            !out.status.success()
                && said.contains("Unsupported block type")
                && said.contains("removed"),
            "{} validate of {at}: expected the `removed` block to be rejected:\n{said}",
            cli.name
        );
        return;
    }
    assert!(
        out.status.success(),
        "{} validate of {at} failed:\n{said}",
        cli.name
    );
}

#[test]
fn every_recipe_validates_with_every_cli() {
    let dirs = tf_dirs();
    let rel: Vec<String> = dirs
        .iter()
        .map(|d| d.strip_prefix(recipes()).unwrap().display().to_string())
        .collect();
    for want in [
        "scheduled-apply",
        "fleet-of-states/eu",
        "fleet-of-states/us",
        "handover/bridge-a",
        "handover/bridge-b",
        "migrate-from-kubectl-manifest",
    ] {
        assert!(rel.iter().any(|r| r == want), "{want} missing: {rel:?}");
    }
    let needs_kubectl = dirs.iter().any(|d| {
        tf_files(d)
            .iter()
            .any(|(_, t)| t.contains("gavinbunney/kubectl"))
    });
    let kubectl = if needs_kubectl {
        kubectl_provider_dir()
    } else {
        None
    };
    for cli in Cli::all() {
        for (dir, rel) in dirs.iter().zip(&rel) {
            let files = tf_files(dir);
            if files.iter().any(|(_, t)| t.contains("gavinbunney/kubectl")) {
                let Some(k) = &kubectl else { continue };
                validate(&cli, Some(k), rel, &files);
            } else {
                validate(&cli, None, rel, &files);
            }
        }
        // The migration's starting point, a file users compare with theirs.
        if let Some(k) = &kubectl {
            let before = recipe("migrate-from-kubectl-manifest/before.tf.example");
            validate(
                &cli,
                Some(k),
                "migrate-from-kubectl-manifest/before.tf.example",
                &[("main.tf".into(), before)],
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// CI files
// ---------------------------------------------------------------------------------------------------------------

/// The secrets the recipes' workflows tell the user to define.
const RECIPE_KNOWN: Known<'static> = Known {
    secrets: &["GITHUB_TOKEN", "MGMT_KUBECONFIG", "TF_BACKEND_CONFIG"],
    variables: &[],
};

/// Every `run:` script of a GitHub workflow.
fn github_scripts(wf: &Json) -> Vec<String> {
    wf["jobs"]
        .as_object()
        .into_iter()
        .flat_map(|jobs| jobs.values())
        .flat_map(|job| job["steps"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s["run"].as_str().map(String::from))
        .collect()
}

/// A GitLab job's `before_script` and `script`, as the one shell script GitLab runs.
fn gitlab_script(job: &Json) -> String {
    ["before_script", "script"]
        .iter()
        .flat_map(|k| job[*k].as_array().cloned().unwrap_or_default())
        .filter_map(|l| l.as_str().map(String::from))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `(cli, subcommand, flags)` of every `tofu`/`terraform` command in `script` (line continuations joined;
/// comments and `echo` lines left out). Flags are the options' names (`-out`, `-lock-timeout`).
fn invocations(script: &str) -> Vec<(String, String, Vec<String>)> {
    let joined = script.replace("\\\n", " ");
    let mut out = Vec::new();
    for line in joined.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with("echo") {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            if !matches!(*w, "tofu" | "terraform") {
                continue;
            }
            let Some(sub) = words.get(i + 1) else {
                continue;
            };
            let flags = words[i + 2..]
                .iter()
                .take_while(|a| !matches!(**a, ";" | "&&" | "||" | "|" | ">" | ">>"))
                .filter(|a| a.starts_with('-'))
                .map(|a| a.split('=').next().unwrap().to_string())
                .collect();
            out.push((w.to_string(), sub.to_string(), flags));
        }
    }
    out
}

/// Whether `help` lists option `flag` (followed by `=`, a space or the end of a line).
fn lists_flag(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(i, _)| {
        let before = help[..i].chars().last();
        let after = help[i + flag.len()..].chars().next();
        before.is_none_or(|c| c.is_whitespace())
            && after.is_none_or(|c| c == '=' || c.is_whitespace())
    })
}

/// Checks that every subcommand and flag of `calls` exists in the help of every CLI the suite has.
fn check_commands(calls: &[(String, String, Vec<String>)], at: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut clis = vec![Cli::tofu()];
    clis.extend(Cli::terraform_needed());
    for cli in &clis {
        let mut helps: BTreeMap<String, String> = BTreeMap::new();
        for (_, sub, flags) in calls {
            let help = helps.entry(sub.clone()).or_insert_with(|| {
                let out = Command::new(&cli.path)
                    .args([sub.as_str(), "-help"])
                    .env("CHECKPOINT_DISABLE", "1")
                    .env("TF_CLI_CONFIG_FILE", "/dev/null")
                    .output()
                    .expect("running the CLI");
                text(&out)
            });
            if !help.contains("Usage:") || help.contains("unknown command") {
                problems.push(format!("{at}: `{} {sub}` is not a subcommand", cli.name));
                continue;
            }
            for f in flags {
                if !lists_flag(help, f) {
                    problems.push(format!("{at}: `{} {sub}` has no option {f}", cli.name));
                }
            }
        }
    }
    problems
}

/// `sh -n` (syntax only) of `script`.
fn shell_syntax(script: &str, at: &str) -> Option<String> {
    let out = Command::new("sh")
        .args(["-n", "-c", script])
        .output()
        .expect("running sh");
    (!out.status.success()).then(|| format!("{at}: not valid shell: {}", text(&out)))
}

#[test]
fn github_workflows_pass_the_repositorys_workflow_checks_and_run_real_commands() {
    let mut problems = Vec::new();
    let mut groups = BTreeMap::new();
    for file in [
        "scheduled-apply/github-actions.yml",
        "plan-on-pr/github-actions.yml",
    ] {
        let text = recipe(file);
        problems.extend(lint(file, &text, &RECIPE_KNOWN));
        let wf = parse_yaml(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let scripts = github_scripts(&wf);
        for (n, s) in scripts.iter().enumerate() {
            // GitHub runs `run:` with `bash -e {0}`; the scripts use only POSIX syntax.
            problems.extend(shell_syntax(s, &format!("{file} script {}", n + 1)));
        }
        let calls: Vec<_> = scripts.iter().flat_map(|s| invocations(s)).collect();
        assert!(
            calls.iter().any(|(_, sub, _)| sub == "apply"),
            "{file}: runs no apply: {calls:?}"
        );
        problems.extend(check_commands(&calls, file));
        // One apply at a time per state: every job that applies is in a concurrency group that never cancels.
        for (id, job) in wf["jobs"].as_object().unwrap() {
            let applies = job["steps"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s["run"].as_str())
                .any(|r| invocations(r).iter().any(|(_, sub, _)| sub == "apply"));
            if !applies {
                continue;
            }
            let c = if job.get("concurrency").is_some() {
                &job["concurrency"]
            } else {
                &wf["concurrency"]
            };
            let group = c["group"]
                .as_str()
                .unwrap_or_else(|| panic!("{file}: job {id} applies outside a concurrency group"));
            assert_eq!(
                c["cancel-in-progress"],
                Json::Bool(false),
                "{file}: job {id}: a running apply must not be cancelled"
            );
            groups.insert(file, group.to_string());
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The scheduled workflow: cron schedule and manual trigger.
    let wf = parse_yaml(&recipe("scheduled-apply/github-actions.yml")).unwrap();
    let crons: Vec<&str> = wf["on"]["schedule"]
        .as_array()
        .expect("a schedule trigger")
        .iter()
        .filter_map(|s| s["cron"].as_str())
        .collect();
    assert!(
        !crons.is_empty() && crons.iter().all(|c| c.split_whitespace().count() == 5),
        "{crons:?}"
    );
    assert!(wf["on"].get("workflow_dispatch").is_some());
    // A merge and a scheduled run never apply side by side (one concurrency group).
    assert_eq!(
        groups.get("scheduled-apply/github-actions.yml"),
        groups.get("plan-on-pr/github-actions.yml"),
        "the apply on merge must share the scheduled workflow's concurrency group"
    );
    // The pull request's plan is shown, never applied.
    let review = parse_yaml(&recipe("plan-on-pr/github-actions.yml")).unwrap();
    assert_eq!(
        review["jobs"]["plan"]["if"],
        "github.event_name == 'pull_request'"
    );
    assert_eq!(review["jobs"]["apply"]["if"], "github.event_name == 'push'");
    let plan_calls: Vec<_> = github_scripts(&json!({"jobs": {"p": review["jobs"]["plan"]}}))
        .iter()
        .flat_map(|s| invocations(s))
        .collect();
    assert!(
        plan_calls.iter().all(|(_, sub, _)| sub != "apply"),
        "{plan_calls:?}"
    );
}

#[test]
fn gitlab_pipeline_runs_on_schedules_one_at_a_time_with_real_commands() {
    let file = "scheduled-apply/gitlab-ci.yml";
    let ci = parse_yaml(&recipe(file)).unwrap_or_else(|e| panic!("{file}: not valid YAML: {e}"));
    let job = &ci["sveltos-bridge"];
    assert!(job.is_object(), "{file}: job sveltos-bridge missing");
    let stages: Vec<&str> = ci["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Json::as_str)
        .collect();
    assert!(stages.contains(&job["stage"].as_str().unwrap()));
    let rules: Vec<&str> = job["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter_map(|r| r["if"].as_str())
        .collect();
    assert!(
        rules.contains(&"$CI_PIPELINE_SOURCE == \"schedule\""),
        "{rules:?}"
    );
    assert!(
        job["resource_group"]
            .as_str()
            .is_some_and(|g| !g.is_empty()),
        "{file}: no resource_group: two scheduled runs could overlap"
    );
    let script = gitlab_script(job);
    let mut problems: Vec<String> = shell_syntax(&script, file).into_iter().collect();
    let calls = invocations(&script);
    for sub in ["init", "plan", "apply"] {
        assert!(
            calls.iter().any(|(c, s, _)| c == "tofu" && s == sub),
            "{file}: no tofu {sub}: {calls:?}"
        );
    }
    let plan = calls.iter().find(|(_, s, _)| s == "plan").unwrap();
    for flag in ["-detailed-exitcode", "-lock-timeout", "-out"] {
        assert!(plan.2.iter().any(|f| f == flag), "plan without {flag}");
    }
    problems.extend(check_commands(&calls, file));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_command_parser_finds_flags_and_the_flag_check_catches_a_made_up_one() {
    let calls = invocations(
        "set +e\nterraform plan -input=false -lock-timeout=10m \\\n  -detailed-exitcode -out=tfplan\n# tofu destroy\necho tofu apply\nrc=$?; tofu apply -auto-approve tfplan && true",
    );
    assert_eq!(
        calls,
        vec![
            (
                "terraform".to_string(),
                "plan".to_string(),
                vec!["-input", "-lock-timeout", "-detailed-exitcode", "-out"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            ),
            (
                "tofu".to_string(),
                "apply".to_string(),
                vec!["-auto-approve".to_string()]
            ),
        ]
    );
    let bad = check_commands(
        &[(
            "tofu".into(),
            "plan".into(),
            vec!["-detailed-exit-code".into()],
        )],
        "case",
    );
    assert!(
        bad.iter().any(|p| p.contains("-detailed-exit-code")),
        "{bad:?}"
    );
    assert!(shell_syntax("if true; then", "case").is_some());
}

// ---------------------------------------------------------------------------------------------------------------
// the fleet split across states
// ---------------------------------------------------------------------------------------------------------------

/// The quoted values of the first line of `tf` that assigns `key` (`key = "v"` or `key = ["a", "b"]`).
fn assigned(tf: &str, key: &str) -> Vec<String> {
    let line = tf
        .lines()
        .map(str::trim)
        .find(|l| {
            l.split_once('=')
                .is_some_and(|(k, _)| k.trim() == key || k.trim() == format!("\"{key}\""))
        })
        .unwrap_or_else(|| panic!("no `{key} =` in:\n{tf}"));
    line.split_once('=')
        .unwrap()
        .1
        .split('"')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

/// The YAML documents of a multi-document file.
fn documents(yaml: &str) -> Vec<Json> {
    yaml.split("\n---")
        .map(|d| parse_yaml(d).unwrap_or_else(|e| panic!("{e}:\n{d}")))
        .filter(|d| d.is_object())
        .collect()
}

#[test]
fn fleet_states_differ_where_they_must_and_each_identity_writes_only_its_own_namespaces() {
    let claim_rules = documents(&read(
        &support::repo_root().join("examples/rbac/claim.yaml"),
    ))
    .into_iter()
    .find(|d| d["kind"] == "Role")
    .expect("claim.yaml's Role")["rules"]
        .clone();
    let mut cluster_roles = BTreeSet::new();
    for file in ["cluster-wide.yaml", "inventory-namespaces.yaml"] {
        for d in documents(&read(
            &support::repo_root().join("examples/rbac").join(file),
        )) {
            if d["kind"] == "ClusterRole" {
                cluster_roles.insert(d["metadata"]["name"].as_str().unwrap().to_string());
            }
        }
    }
    let mut seen: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for state in ["eu", "us"] {
        let tf = recipe(&format!("fleet-of-states/{state}/main.tf"));
        let name = assigned(&tf, "name");
        let claim = assigned(&tf, "claim_namespace");
        let namespaces = assigned(&tf, "namespaces");
        let shard = assigned(&tf, "sharding.projectsveltos.io/key");
        assert_eq!(name.len(), 1);
        assert_eq!(claim.len(), 1);
        assert_eq!(shard.len(), 1);
        for (what, values) in [
            ("name", &name),
            ("claim_namespace", &claim),
            ("namespaces", &namespaces),
            ("shard", &shard),
        ] {
            for v in values {
                assert!(
                    seen.entry(what).or_default().insert(v.clone()),
                    "{state}: {what} {v:?} is another state's too"
                );
            }
        }
        // Its RBAC: the identity lives in the claim namespace; writes are bound in its namespaces only.
        let rbac = documents(&recipe(&format!("fleet-of-states/rbac/{state}.yaml")));
        let mut bound = BTreeSet::new();
        for d in &rbac {
            let kind = d["kind"].as_str().unwrap();
            if kind == "Role" {
                assert_eq!(d["metadata"]["namespace"], claim[0].as_str());
                assert_eq!(d["rules"], claim_rules, "{state}: the claim Role's rules");
            }
            if kind == "RoleBinding" || kind == "ClusterRoleBinding" {
                for s in d["subjects"].as_array().unwrap() {
                    assert_eq!(s["namespace"], claim[0].as_str(), "{state}: {d}");
                }
                let role = d["roleRef"]["name"].as_str().unwrap();
                if d["roleRef"]["kind"] == "ClusterRole" {
                    assert!(
                        cluster_roles.contains(role),
                        "{state}: {role} is not a ClusterRole of examples/rbac"
                    );
                }
                if kind == "RoleBinding" {
                    bound.insert(d["metadata"]["namespace"].as_str().unwrap().to_string());
                }
            }
        }
        let mut want: BTreeSet<String> = namespaces.iter().cloned().collect();
        want.insert(claim[0].clone());
        assert_eq!(bound, want, "{state}: namespaces with RoleBindings");
    }
}

/// The fleet recipe's command for the shared ClusterRoles, as kubectl runs it from the recipe's directory
/// (`--dry-run=server`): exactly the two ClusterRoles, none of the files' bindings to the single-state identity.
#[tokio::test]
async fn fleet_recipe_applies_only_the_shared_cluster_roles() {
    let env = support::TestEnv::get();
    let dir = recipes().join("fleet-of-states");
    let readme = recipe("fleet-of-states/README.md");
    let line = readme
        .lines()
        .find(|l| l.starts_with("kubectl apply -l "))
        .expect("the README applies the ClusterRoles with a label selector");
    let words: Vec<&str> = line.split_whitespace().skip(1).collect();
    let mut args: Vec<String> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let after_f = i > 0 && words[i - 1] == "-f";
        args.push(if after_f {
            dir.join(w).display().to_string()
        } else {
            w.to_string()
        });
    }
    args.extend(["--dry-run=server", "-o", "name"].map(String::from));
    let out = env.kubectl(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let mut applied: Vec<&str> = out.lines().collect();
    applied.sort();
    assert_eq!(
        applied,
        [
            "clusterrole.rbac.authorization.k8s.io/sveltos-bridge-cluster",
            "clusterrole.rbac.authorization.k8s.io/sveltos-bridge-inventory"
        ],
        "{line}"
    );
}

// ---------------------------------------------------------------------------------------------------------------
// end to end: handover and migration
// ---------------------------------------------------------------------------------------------------------------

/// `text` with `from` replaced by `to`, which must occur.
fn replaced(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} is not in the recipe");
    text.replace(from, to)
}

/// Writes `terraform.tfvars.json`.
fn vars(tf: &Tf, v: Json) {
    tf.write_file("terraform.tfvars.json", &v.to_string());
}

/// UIDs of SveltosCluster `ns/name` and of its Secret `ns/name-sveltos-kubeconfig` (panics when one is missing).
async fn uids(inv: &Inv, ns: &str, name: &str) -> (String, String) {
    let ((sc, _), (secret, _)) = uids_and_versions(inv, ns, name).await;
    (sc, secret)
}

/// The UID and resourceVersion of cluster `ns/name`'s SveltosCluster and of its Secret.
async fn uids_and_versions(
    inv: &Inv,
    ns: &str,
    name: &str,
) -> ((String, String), (String, String)) {
    let sc = inv.sc(ns, name).await;
    let secret = inv
        .get_secret(ns, &format!("{name}-sveltos-kubeconfig"))
        .await;
    let both = |m: kube::api::ObjectMeta| (m.uid.unwrap(), m.resource_version.unwrap());
    match (sc, secret) {
        (Some(sc), Some(s)) => (both(sc.metadata), both(s.metadata)),
        (sc, s) => panic!(
            "{ns}/{name}: SveltosCluster present: {}, Secret present: {}",
            sc.is_some(),
            s.is_some()
        ),
    }
}

/// Asserts that cluster `ns/name` still has the objects of `want` (same UIDs), after `step`.
async fn assert_same(inv: &Inv, ns: &str, name: &str, want: &(String, String), step: &str) {
    assert_eq!(
        &uids(inv, ns, name).await,
        want,
        "{ns}/{name} was deleted or recreated by {step}"
    );
}

async fn owner_of(inv: &Inv, ns: &str, name: &str) -> Option<String> {
    let sc = inv.sc(ns, name).await?;
    sc.metadata.labels?.get(keys::BRIDGE_LABEL).cloned()
}

fn output_keys(tf: &Tf) -> Vec<String> {
    tf.outputs_json()["clusters"]["value"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| k.as_str().map(String::from))
        .collect()
}

/// The step of `handover/README.md` before step 1: the namespaces its `kubectl create namespace` lines name (the
/// configurations' default `claim_namespace`) are created as those lines would (already there from an earlier run
/// against the same control plane is fine: each run's bridge names, and so its claims, are its own).
async fn create_claim_namespaces(inv: &Inv) {
    let readme = recipe("handover/README.md");
    let names: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.trim().strip_prefix("kubectl create namespace "))
        .collect();
    assert_eq!(
        names,
        ["sveltos-bridge-a", "sveltos-bridge-b"],
        "the README's step"
    );
    for name in names {
        let ns: k8s_openapi::api::core::v1::Namespace =
            serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
        let api = kube::Api::<k8s_openapi::api::core::v1::Namespace>::all(inv.client.clone());
        match api.create(&Default::default(), &ns).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => panic!("creating namespace {name}: {e}"),
        }
    }
}

/// The order of `handover/README.md`, with its files: step 1 `b` adopts, step 2 `a` stops selecting, step 3 `b`
/// stops adopting; a run of `a` in between and the wrong order are tried too.
#[tokio::test]
async fn handover_keeps_the_cluster_registered() {
    let started = std::time::Instant::now();
    let inv = Inv::new().await;
    create_claim_namespaces(&inv).await;
    let ns = unique_namespace(&inv.client, "handover").await;
    for name in ["x", "y"] {
        inv.profile_with_secret(
            &ns,
            name,
            &[("env", "prod")],
            Json::Null,
            &fixtures::unreachable_kubeconfig(name),
        )
        .await;
    }
    let (a_name, b_name) = (unique_name("a"), unique_name("b"));
    let a_tf = replaced(
        &recipe("handover/bridge-a/main.tf"),
        "name            = \"a\"",
        &format!("name            = \"{a_name}\""),
    );
    let b_tf = replaced(
        &recipe("handover/bridge-b/main.tf"),
        "name            = \"b\"",
        &format!("name            = \"{b_name}\""),
    );
    let cli = Cli::tofu();
    let kubeconfig = inv.kubeconfig.display().to_string();
    let x = format!("{ns}/x");
    let a = Tf::new(&cli);
    a.write_main(&a_tf);
    let a_vars = |handed_over: &[&str]| {
        vars(
            &a,
            json!({"kubeconfig": kubeconfig, "namespaces": [ns], "handed_over": handed_over}),
        )
    };
    let b = Tf::new(&cli);
    b.write_main(&b_tf);
    let b_vars = |adopt: bool| {
        vars(
            &b,
            json!({"kubeconfig": kubeconfig, "taken_over": [x], "adopt": adopt}),
        )
    };

    // Before: bridge a registers x and y.
    a_vars(&[]);
    a.apply();
    let x_objects = uids(&inv, &ns, "x").await;
    assert_eq!(
        owner_of(&inv, &ns, "x").await.as_deref(),
        Some(a_name.as_str())
    );

    // The wrong order (a first) is refused by max_removals = 0, before anything is written.
    a_vars(&[x.as_str()]);
    let refused = a.run_err(&["plan", "-input=false", "-no-color"]);
    assert!(
        support::inventory::flat(&refused)
            .contains("This plan would deregister 1 clusters, more than max_removals = 0"),
        "{refused}"
    );
    assert_same(&inv, &ns, "x", &x_objects, "the refused plan").await;
    a_vars(&[]);

    // Step 1: b selects x with adopt = true and applies.
    b_vars(true);
    let out = b.apply();
    assert_same(&inv, &ns, "x", &x_objects, "step 1 (b adopts)").await;
    assert_eq!(
        owner_of(&inv, &ns, "x").await.as_deref(),
        Some(b_name.as_str()),
        "{out}"
    );
    let shard = inv
        .sc(&ns, "x")
        .await
        .unwrap()
        .metadata
        .annotations
        .unwrap_or_default()["sharding.projectsveltos.io/key"]
        .clone();
    assert_eq!(shard, "b", "b's shard annotation");
    assert_eq!(output_keys(&b), vec![x.clone()]);
    assert_eq!(b.plan(), 0, "b's plan after step 1");

    // A scheduled run of a in between (still selecting x): x is a name collision, left alone.
    let between = support::inventory::apply_ok(&a);
    assert!(
        support::inventory::flat(&between).contains(&format!("is managed by bridge \"{b_name}\"")),
        "{between}"
    );
    assert_same(&inv, &ns, "x", &x_objects, "a run of a between the steps").await;
    assert_eq!(
        owner_of(&inv, &ns, "x").await.as_deref(),
        Some(b_name.as_str())
    );
    assert_eq!(output_keys(&a), vec![format!("{ns}/y")]);
    assert_eq!(b.plan(), 0, "b's plan after a's run");

    // Step 2: a stops selecting x and applies; it deregisters nothing.
    a_vars(&[x.as_str()]);
    let (ok, planned) = support::inventory::run(&a, &["plan", "-input=false", "-no-color"]);
    assert!(ok, "{planned}");
    assert!(!planned.contains("This plan deregisters"), "{planned}");
    a.apply();
    assert_same(&inv, &ns, "x", &x_objects, "step 2 (a stops selecting)").await;
    assert_eq!(a.plan(), 0, "a's plan after step 2");
    assert_eq!(b.plan(), 0, "b's plan after step 2");

    // Step 3: b stops adopting; nothing is written to the cluster's objects (same resourceVersions).
    let written = uids_and_versions(&inv, &ns, "x").await;
    b_vars(false);
    b.apply();
    assert_eq!(
        uids_and_versions(&inv, &ns, "x").await,
        written,
        "step 3 (adopt = false) wrote to x's objects"
    );
    assert_same(&inv, &ns, "x", &x_objects, "step 3 (adopt = false)").await;
    assert_eq!(b.plan(), 0, "b's plan after step 3");
    assert_eq!(a.plan(), 0, "a's plan after step 3");

    // Destroying a leaves x registered (y goes); destroying b deregisters x.
    a.destroy();
    assert_same(&inv, &ns, "x", &x_objects, "destroying a").await;
    assert!(inv.sc(&ns, "y").await.is_none(), "a's own cluster y");
    b.destroy();
    assert!(
        inv.sc(&ns, "x").await.is_none(),
        "destroying b deregisters x"
    );
    assert!(
        inv.get_secret(&ns, "x-sveltos-kubeconfig").await.is_none(),
        "and deletes its Secret"
    );
    support::inventory::report(&format!(
        "recipes::handover_keeps_the_cluster_registered: {:.1} s",
        started.elapsed().as_secs_f64()
    ));
}

/// The CLIs that support `removed` blocks with `lifecycle { destroy = false }`: tofu, and the `terraform` on PATH.
fn clis_with_removed() -> Vec<Cli> {
    let mut clis = vec![Cli::tofu()];
    clis.extend(Cli::terraform_needed());
    clis
}

/// `before.tf.example` applied with the kubectl provider, then `main.tf` (the `removed` blocks and the bridge with
/// `adopt = true`): the SveltosClusters and Secrets keep their UIDs, the bridge owns them, the next plan is empty.
#[tokio::test]
async fn migration_from_kubectl_manifest_deletes_nothing() {
    let Some(kubectl) = kubectl_provider_dir() else {
        return;
    };
    let inv = Inv::new().await;
    for cli in clis_with_removed() {
        let started = std::time::Instant::now();
        let ns = unique_namespace(&inv.client, "migrate").await;
        let names = ["c1", "c2"];
        for name in names {
            inv.profile_with_secret(
                &ns,
                name,
                &[("tier", "gold")],
                Json::Null,
                &fixtures::unreachable_kubeconfig(name),
            )
            .await;
        }
        let keys: Vec<String> = names.iter().map(|n| format!("{ns}/{n}")).collect();
        let kubeconfig = inv.kubeconfig.display().to_string();
        let tf = tf_with_kubectl(&cli, &kubectl);

        // Before: kubectl_manifest resources.
        tf.write_main(&recipe("migrate-from-kubectl-manifest/before.tf.example"));
        let kubeconfigs: serde_json::Map<String, Json> = keys
            .iter()
            .map(|k| {
                (
                    k.clone(),
                    Json::from(fixtures::unreachable_kubeconfig("old")),
                )
            })
            .collect();
        vars(
            &tf,
            json!({"kubeconfig": kubeconfig, "clusters": keys, "kubeconfigs": kubeconfigs}),
        );
        tf.apply();
        let mut before = BTreeMap::new();
        for n in names {
            before.insert(n, uids(&inv, &ns, n).await);
            assert_eq!(owner_of(&inv, &ns, n).await, None);
        }

        // After: removed blocks and the bridge with adopt = true.
        let bridge = unique_name("fleet");
        tf.write_main(&replaced(
            &recipe("migrate-from-kubectl-manifest/main.tf"),
            "name       = \"fleet\"",
            &format!("name       = \"{bridge}\""),
        ));
        vars(&tf, json!({"kubeconfig": kubeconfig, "namespaces": [ns]}));
        let plan = tf.plan_json();
        let changes = plan["resource_changes"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for rc in &changes {
            let actions = &rc["change"]["actions"];
            assert!(
                !actions.as_array().unwrap().iter().any(|a| a == "delete"),
                "{}: {} would be destroyed: {actions}",
                cli.name,
                rc["address"]
            );
        }
        assert!(
            changes.iter().any(|rc| rc["type"] == "kubectl_manifest"
                && rc["change"]["actions"] == json!(["forget"])),
            "{}: the kubectl_manifest resources are not forgotten: {changes:?}",
            cli.name
        );
        let out = tf.apply();
        for n in names {
            assert_same(
                &inv,
                &ns,
                n,
                &before[n],
                &format!("{} migration apply", cli.name),
            )
            .await;
            assert_eq!(
                owner_of(&inv, &ns, n).await.as_deref(),
                Some(bridge.as_str()),
                "{out}"
            );
        }
        let state = tf.state_resources();
        assert!(
            state.keys().all(|a| !a.starts_with("kubectl_manifest.")),
            "{}: {:?}",
            cli.name,
            state.keys()
        );
        assert_eq!(
            tf.outputs_json()["bridged_clusters"]["value"],
            json!(keys),
            "{}",
            cli.name
        );
        assert_eq!(tf.plan(), 0, "{}: the plan after the migration", cli.name);
        // The bridge owns them: its destroy deregisters them.
        tf.destroy();
        for n in names {
            assert!(inv.sc(&ns, n).await.is_none(), "{}: {n}", cli.name);
        }
        support::inventory::report(&format!(
            "recipes::migration_from_kubectl_manifest_deletes_nothing ({}): {:.1} s",
            cli.name,
            started.elapsed().as_secs_f64()
        ));
    }
}

/// `scheduled-apply/main.tf` as its scheduler runs it (its `backend.tf` aside: the suite keeps the state locally):
/// the apply registers what the inventory holds and the next plan is empty (exit code 0); a ClusterProfile without
/// credentials fails the run, naming it, after every other cluster is registered (`fail_on_skipped`); `destroy` is
/// refused (`prevent_destroy`).
#[tokio::test]
async fn scheduled_apply_recipe_registers_then_fails_naming_what_it_left_out() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "sched").await;
    for name in ["p1", "p2"] {
        inv.profile_with_secret(
            &ns,
            name,
            &[],
            Json::Null,
            &fixtures::unreachable_kubeconfig(name),
        )
        .await;
    }
    let bridge = unique_name("fleet");
    let main = replaced(
        &recipe("scheduled-apply/main.tf"),
        "name       = \"fleet\"",
        &format!("name       = \"{bridge}\""),
    );
    let tf = Tf::new(&Cli::tofu());
    tf.write_main(&main);
    let kubeconfig = inv.kubeconfig.display().to_string();
    vars(&tf, json!({"kubeconfig": kubeconfig, "namespaces": [ns]}));
    tf.apply();
    let bridged = |tf: &Tf| -> Vec<String> {
        tf.outputs_json()["bridged_clusters"]["value"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|k| k.as_str().map(String::from))
            .collect()
    };
    assert_eq!(bridged(&tf), [format!("{ns}/p1"), format!("{ns}/p2")]);
    // Exit code 0 ends the run without writing anything, not even the bridge's claim: the claim and each
    // cluster's objects keep their resourceVersion across the plan.
    let claim = format!("sveltos-bridge-{bridge}");
    let written = || {
        let env = support::TestEnv::get();
        let claim = env.kubectl(&[
            "get",
            "configmap",
            "-n",
            "default",
            &claim,
            "-o",
            "jsonpath={.metadata.resourceVersion}",
        ]);
        let objects = env.kubectl(&[
            "get",
            "sveltoscluster,secret",
            "-n",
            &ns,
            "-o",
            "jsonpath={range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}",
        ]);
        assert!(!claim.trim().is_empty(), "no claim {claim}");
        assert!(objects.contains("p1-sveltos-kubeconfig="), "{objects}");
        format!("claim={claim} {objects}")
    };
    let before = written();
    let plan = tf.run(&["plan", "-detailed-exitcode", "-input=false", "-no-color"]);
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan));
    assert_eq!(written(), before, "the no-change run wrote something");

    // One more cluster with credentials, one without: the run registers the first, then fails naming the other.
    inv.profile_with_secret(
        &ns,
        "p3",
        &[],
        Json::Null,
        &fixtures::unreachable_kubeconfig("p3"),
    )
    .await;
    inv.profile(&ns, "p4", &[], Json::Null).await;
    let failed = tf.run_err(&["apply", "-auto-approve", "-input=false", "-no-color"]);
    assert!(
        support::inventory::flat(&failed).contains(&format!("{ns}/p4")),
        "{failed}"
    );
    assert_eq!(
        owner_of(&inv, &ns, "p3").await.as_deref(),
        Some(bridge.as_str()),
        "p3 registered before the run failed"
    );
    assert_eq!(owner_of(&inv, &ns, "p4").await, None);

    let refused = tf.run_err(&["destroy", "-auto-approve", "-input=false", "-no-color"]);
    assert!(
        support::inventory::flat(&refused).contains("prevent_destroy"),
        "{refused}"
    );
    tf.write_main(&replaced(
        &main,
        "prevent_destroy = true",
        "prevent_destroy = false",
    ));
    tf.destroy();
}
