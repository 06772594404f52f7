//! Exec access providers as the upstream access library drives them, scoped by the operator: a plugin that
//! behaves like upstream's `secretreader`, a providers file written like upstream's examples (`null`s included),
//! the providers file's order choosing the provider, `credentials.exec_providers` deciding which namespaces may
//! use a provider and which variables a profile may add. Each test checks what the plugin saw (it logs every
//! run) and what the bridge wrote and reported.
#![cfg(unix)]

use std::path::{Path, PathBuf};

use serde_json::{Value as Json, json};
use support::inventory::{Inv, apply_ok, bridge, entry, flat, one_diagnostic, state_clusters};
use support::{Cli, TestEnv, fixtures, unique_namespace, write_executable};
use tfsveltos::api::keys;

const SERVER: &str = "https://127.0.0.1:6443";

/// A plugin like upstream's `plugins/secretreader`: it takes `clusterName` from `KUBERNETES_EXEC_INFO`'s
/// `spec.cluster.config`, infers its namespace from its own `KUBECONFIG`'s current context (else `default`),
/// reads key `token` of Secret `<namespace>/<clusterName>` and answers it as the token. Each run appends
/// `run cluster=<clusterName> namespace=<namespace>` to the returned log.
fn secretreader_plugin(dir: &Path) -> (PathBuf, PathBuf) {
    let kubectl = TestEnv::get().bin.join("kubectl");
    let log = dir.join("runs.log");
    let script = dir.join("secretreader-plugin");
    write_executable(
        &script,
        &format!(
            "#!/bin/sh\nset -e\n\
             cluster=$(printf '%s' \"$KUBERNETES_EXEC_INFO\" | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"spec\"][\"cluster\"][\"config\"][\"clusterName\"])')\n\
             ns=$('{kubectl}' config view --minify -o 'jsonpath={{.contexts[0].context.namespace}}')\n\
             [ -n \"$ns\" ] || ns=default\n\
             echo \"run cluster=$cluster namespace=$ns\" >> '{log}'\n\
             token=$('{kubectl}' get secret -n \"$ns\" \"$cluster\" -o 'jsonpath={{.data.token}}' | base64 -d)\n\
             printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"%s\"}}}}' \"$token\"\n",
            kubectl = kubectl.display(),
            log = log.display(),
        ),
    );
    (script, log)
}

/// A copy of the admin kubeconfig whose current context's namespace is `ns` (the plugin's own KUBECONFIG).
fn kubeconfig_in(dir: &Path, ns: &str) -> PathBuf {
    let env = TestEnv::get();
    let copy = dir.join("plugin-kubeconfig");
    std::fs::copy(&env.kubeconfig, &copy).unwrap();
    let status = std::process::Command::new(env.bin.join("kubectl"))
        .args(["config", "set-context", "--current", "--namespace", ns])
        .arg("--kubeconfig")
        .arg(&copy)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    copy
}

/// One provider entry written exactly like those of upstream's `examples/controller-example/plugins/*/
/// provider-config.json` (`"args": null`, `"env": null`).
fn upstream_entry(name: &str, command: &Path) -> String {
    format!(
        r#"    {{
      "name": "{name}",
      "execConfig": {{
        "apiVersion": "client.authentication.k8s.io/v1",
        "args": null,
        "command": "{}",
        "env": null,
        "provideClusterInfo": true
      }}
    }}"#,
        command.display()
    )
}

/// A providers file with these entries, laid out as upstream's.
fn upstream_file(path: &Path, entries: &[String]) {
    std::fs::write(
        path,
        format!("{{\n  \"providers\": [\n{}\n  ]\n}}\n", entries.join(",\n")),
    )
    .unwrap();
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// An access provider `name` at [`SERVER`] whose exec extension is `config`.
fn access_provider(name: &str, config: Json) -> Json {
    json!({"name": name, "cluster": {"server": SERVER,
        "extensions": [{"name": keys::EXEC_EXTENSION, "extension": config}]}})
}

/// A bridge of `ns` whose `secretreader` provider (in `file`) is allowed for `ns`, run with the plugin's own
/// KUBECONFIG (in `ns`).
fn secretreader_bridge(inv: &Inv, cli: &Cli, ns: &str, file: &Path, scratch: &Path) -> support::Tf {
    let mut tf = inv.tf(cli, &scoped_bridge(ns, file, "secretreader", ""));
    tf.env("KUBECONFIG", kubeconfig_in(scratch, ns));
    tf
}

fn credentials(providers_file: &Path, exec_providers: &str) -> String {
    format!(
        "  credentials {{\n    exec_providers_file = \"{}\"\n    exec_providers = {{\n{exec_providers}\n    }}\n  }}",
        providers_file.display()
    )
}

/// A bridge of `ns` whose exec provider `name` (in `file`) is allowed for `ns`, with `more` of its scope's
/// attributes (`, profile_env = [...]`).
fn scoped_bridge(ns: &str, file: &Path, name: &str, more: &str) -> String {
    let scope = format!("      {name} = {{ namespaces = [\"{ns}\"]{more} }}");
    bridge(ns, &[ns], &credentials(file, &scope))
}

/// (a) A profile offers `kubeconfig-secretreader` then `secretreader`; the upstream-shaped providers file lists
/// `secretreader` first: the plugin runs (once, for this cluster name, in its own KUBECONFIG's namespace) and
/// its token is bridged, and `credential_source` says `exec:secretreader`. With the file's order reversed, the
/// built-in `kubeconfig-secretreader` is used (its command in the file is never run).
#[tokio::test(flavor = "multi_thread")]
async fn the_providers_file_order_picks_an_upstream_secretreader_plugin() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "upstream").await;
    let scratch = tempfile::tempdir().unwrap();
    let (plugin, log) = secretreader_plugin(scratch.path());
    let builtin_command = scratch
        .path()
        .join("never-run-kubeconfig-secretreader-plugin");
    inv.secret(&ns, "cluster-a", &[], &[("token", "upstream-token-a1")])
        .await;
    inv.secret(
        &ns,
        "kc",
        &[],
        &[(
            "value",
            &fixtures::unreachable_kubeconfig("builtin-token-b2"),
        )],
    )
    .await;
    inv.profile(
        &ns,
        "c1",
        &[],
        json!({"accessProviders": [
            access_provider(keys::SECRET_READER_PROVIDER, json!({"name": "kc", "key": "value"})),
            access_provider("secretreader", json!({"clusterName": "cluster-a"})),
        ]}),
    )
    .await;
    let file = scratch.path().join("provider-config.json");
    let secretreader = upstream_entry("secretreader", &plugin);
    let builtin = upstream_entry(keys::SECRET_READER_PROVIDER, &builtin_command);
    upstream_file(&file, &[secretreader.clone(), builtin.clone()]);
    let tf = secretreader_bridge(&inv, &Cli::tofu(), &ns, &file, scratch.path());
    apply_ok(&tf);
    assert_eq!(
        lines(&log),
        [format!("run cluster=cluster-a namespace={ns}")]
    );
    let kc = String::from_utf8(inv.bridged_kubeconfig(&ns, "c1").await.unwrap()).unwrap();
    assert!(
        kc.contains("upstream-token-a1") && !kc.contains("builtin-token-b2"),
        "{kc}"
    );
    let key = format!("{ns}/c1");
    assert_eq!(
        state_clusters(&tf)[&key]["credential_source"],
        "exec:secretreader"
    );
    // The file's order reversed: the built-in kubeconfig-secretreader comes first.
    upstream_file(&file, &[builtin, secretreader]);
    apply_ok(&tf);
    let kc = String::from_utf8(inv.bridged_kubeconfig(&ns, "c1").await.unwrap()).unwrap();
    assert!(kc.contains("builtin-token-b2"), "{kc}");
    assert_eq!(
        state_clusters(&tf)[&key]["credential_source"],
        format!("access-provider:kubeconfig-secretreader:{ns}/kc#value")
    );
    assert_eq!(
        lines(&log).len(),
        1,
        "the plugin ran again: {:?}",
        lines(&log)
    );
    tf.destroy();
}

/// (b) `exec_providers` allows `secretreader` in one namespace: a profile in another namespace naming it runs
/// no plugin, is not bridged, and the warning names that cluster and the attribute to set; the profile in the
/// allowed namespace is bridged.
#[tokio::test(flavor = "multi_thread")]
async fn an_exec_provider_runs_only_for_the_namespaces_it_is_allowed_in() {
    let inv = Inv::new().await;
    let allowed = unique_namespace(&inv.client, "scope-ok").await;
    let other = unique_namespace(&inv.client, "scope-no").await;
    let scratch = tempfile::tempdir().unwrap();
    let (plugin, log) = secretreader_plugin(scratch.path());
    let file = scratch.path().join("provider-config.json");
    upstream_file(&file, &[upstream_entry("secretreader", &plugin)]);
    for ns in [&allowed, &other] {
        inv.secret(ns, "cluster-a", &[], &[("token", "scoped-token")])
            .await;
        inv.profile(
            ns,
            "c1",
            &[],
            json!({"accessProviders": [access_provider("secretreader", json!({"clusterName": "cluster-a"}))]}),
        )
        .await;
    }
    let cli = Cli::tofu();
    let body = bridge(
        &allowed,
        &[&allowed, &other],
        &credentials(
            &file,
            &format!("      secretreader = {{ namespaces = [\"{allowed}\"] }}"),
        ),
    );
    let mut tf = inv.tf(&cli, &body);
    tf.env("KUBECONFIG", kubeconfig_in(scratch.path(), &allowed));
    let out = apply_ok(&tf);
    assert_eq!(
        lines(&log),
        [format!("run cluster=cluster-a namespace={allowed}")],
        "the plugin ran for a namespace it is not allowed in"
    );
    assert!(inv.bridged_kubeconfig(&allowed, "c1").await.is_some());
    assert!(inv.bridged_kubeconfig(&other, "c1").await.is_none());
    let w = one_diagnostic(&out, "Warning", "no usable credentials");
    let line = entry(w, &format!("{other}/c1"));
    assert!(
        flat(&line).contains(&format!(
            "exec provider secretreader is not allowed for namespace {other} \
             (credentials.exec_providers[\"secretreader\"].namespaces)"
        )),
        "{line}"
    );
    tf.destroy();
}

/// (c) A provider whose providers-file policy is `AppendIfNotExists` and whose `profile_env` lists `REGION` and
/// `ZONE`: a profile adding `REGION` and `ZONE` runs the plugin with `ZONE` from the profile and `REGION` from
/// the runner's environment (never overridden); a profile adding `OTHER` (not listed) runs no plugin and the
/// warning names the variable and the attribute.
#[tokio::test(flavor = "multi_thread")]
async fn profile_env_is_the_operators_allowlist_and_never_overrides_the_runner() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "penv").await;
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("runs.log");
    let script = scratch.path().join("env-plugin");
    write_executable(
        &script,
        &format!(
            "#!/bin/sh\n\
             echo \"run REGION=${{REGION-unset}} ZONE=${{ZONE-unset}} OTHER=${{OTHER-unset}}\" >> '{}'\n\
             printf '%s' '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"env-token\"}}}}'\n",
            log.display()
        ),
    );
    let file = scratch.path().join("providers.json");
    std::fs::write(
        &file,
        json!({"providers": [{"name": "tok", "execConfig": {"apiVersion": "client.authentication.k8s.io/v1",
            "command": script.display().to_string(), "args": null, "env": null},
            "profileSourcedEnvVarsPolicy": "AppendIfNotExists"}]})
        .to_string(),
    )
    .unwrap();
    let with_envs = |envs: Json| {
        json!({"accessProviders": [{"name": "tok", "cluster": {"server": SERVER,
            "extensions": [{"name": keys::ADDITIONAL_ENVS_EXTENSION, "extension": envs}]}}]})
    };
    inv.profile(
        &ns,
        "listed",
        &[],
        with_envs(json!({"REGION": "from-profile", "ZONE": "z1"})),
    )
    .await;
    inv.profile(
        &ns,
        "unlisted",
        &[],
        with_envs(json!({"ZONE": "z2", "OTHER": "x"})),
    )
    .await;
    let cli = Cli::tofu();
    let body = scoped_bridge(&ns, &file, "tok", r#", profile_env = ["REGION", "ZONE"]"#);
    let mut tf = inv.tf(&cli, &body);
    tf.env("REGION", "from-runner");
    let out = apply_ok(&tf);
    assert_eq!(
        lines(&log),
        ["run REGION=from-runner ZONE=z1 OTHER=unset"],
        "what the plugin saw"
    );
    assert!(inv.bridged_kubeconfig(&ns, "listed").await.is_some());
    assert!(inv.bridged_kubeconfig(&ns, "unlisted").await.is_none());
    let w = one_diagnostic(&out, "Warning", "exec provider refused");
    let line = flat(&entry(w, &format!("{ns}/unlisted")));
    assert!(
        line.contains("sets OTHER")
            && line.contains("credentials.exec_providers[\"tok\"].profile_env"),
        "{line}"
    );
    tf.destroy();
}

/// A plugin that fails at apply for one profile (its `clusterName` names a Secret that does not exist) is that
/// cluster's problem: on the bridge's first apply, with tofu and with Terraform, the apply succeeds with a
/// warning naming the cluster, every other cluster is registered, and the bridge is not tainted (the next plan is
/// an ordinary plan, not a replacement nor a refusal).
#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_failing_at_apply_leaves_the_bridge_untainted() {
    let mut clis = vec![Cli::tofu()];
    clis.extend(Cli::terraform_needed());
    for cli in clis {
        let inv = Inv::new().await;
        let ns = unique_namespace(&inv.client, "mintfail").await;
        let scratch = tempfile::tempdir().unwrap();
        let (plugin, _log) = secretreader_plugin(scratch.path());
        inv.secret(&ns, "cluster-a", &[], &[("token", "good-token")])
            .await;
        for (name, cluster) in [("good", "cluster-a"), ("broken", "no-such-secret")] {
            inv.profile(
                &ns,
                name,
                &[],
                json!({"accessProviders": [
                    access_provider("secretreader", json!({"clusterName": cluster})),
                ]}),
            )
            .await;
        }
        let file = scratch.path().join("provider-config.json");
        upstream_file(&file, &[upstream_entry("secretreader", &plugin)]);
        let tf = secretreader_bridge(&inv, &cli, &ns, &file, scratch.path());
        let out = flat(&apply_ok(&tf));
        assert!(
            out.contains(&format!("Cannot bridge ClusterProfile {ns}/broken"))
                || out.contains(&format!(
                    "Cannot mint credentials for ClusterProfile {ns}/broken"
                )),
            "{}: the warning names the cluster:\n{out}",
            cli.name
        );
        assert!(out.contains("strict = true makes this an error"), "{out}");
        assert!(inv.sc(&ns, "good").await.is_some(), "{}", cli.name);
        assert!(inv.sc(&ns, "broken").await.is_none(), "{}", cli.name);
        // Not tainted: the next plan is an ordinary one (the broken cluster still to do), not a replacement.
        let (ok, plan) = support::inventory::run(&tf, &["plan", "-input=false", "-no-color"]);
        assert!(ok, "{}: {plan}", cli.name);
        assert!(
            !plan.contains("tainted") && !plan.contains("must be replaced"),
            "{}: {plan}",
            cli.name
        );
        tf.destroy();
    }
}

// ---------------------------------------------------------------------------------------------
// KEP-5339 profile-sourced args and env, judged by the upstream access library (cia-oracle)
// ---------------------------------------------------------------------------------------------

/// The variables the recording plugin reports (set or not) and the bridge's `profile_env` may allow.
const WATCHED_ENV: [&str; 5] = ["FILE_VAR", "REGION", "TEAM", "LD_PRELOAD", "UNLISTED"];

/// A plugin that appends, per run, one JSON line `{"cluster", "config", "args", "env"}` to the returned log: the
/// `clusterName` and the whole `spec.cluster.config` of its `KUBERNETES_EXEC_INFO`, its arguments, and which of
/// [`WATCHED_ENV`] are set; it answers a token.
fn recording_plugin(dir: &Path) -> (PathBuf, PathBuf) {
    let log = dir.join("runs.jsonl");
    let script = dir.join("recording-plugin");
    write_executable(
        &script,
        &format!(
            "#!/usr/bin/env python3\nimport json, os, sys\n\
             config = json.loads(os.environ['KUBERNETES_EXEC_INFO'])['spec']['cluster'].get('config') or {{}}\n\
             env = [n for n in {watched:?} if n in os.environ]\n\
             with open('{log}', 'a') as f:\n    \
             f.write(json.dumps({{'cluster': config.get('clusterName'), 'config': config, 'args': sys.argv[1:], 'env': env}}) + '\\n')\n\
             print(json.dumps({{'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential', \
             'status': {{'token': 'recorded-token'}}}}))\n",
            watched = WATCHED_ENV,
            log = log.display(),
        ),
    );
    (script, log)
}

/// The runs of [`recording_plugin`], by cluster name.
fn recorded_runs(log: &Path) -> std::collections::BTreeMap<String, Vec<Json>> {
    let mut runs = std::collections::BTreeMap::<String, Vec<Json>>::new();
    for line in lines(log) {
        let run: Json = serde_json::from_str(&line).unwrap();
        let cluster = run["cluster"].as_str().unwrap_or_default().to_string();
        runs.entry(cluster).or_default().push(run);
    }
    runs
}

/// What a plugin is given: its arguments and the names of the variables it gets (sorted), or `None` when no plugin
/// runs (the profile is refused).
type Given = Option<(Vec<String>, Vec<String>)>;

fn strings(v: &Json) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect();
    out.sort();
    out
}

/// What `cia-oracle` (the upstream access library) passes to the plugin for the stored ClusterProfile `<ns>/<name>`
/// with `providers`, restricted to [`WATCHED_ENV`], and its whole answer.
fn oracle_given(bin: &Path, providers: &Path, dir: &Path, ns: &str, name: &str) -> (Given, Json) {
    let stored = TestEnv::get().kubectl(&[
        "get",
        "clusterprofiles.v1alpha1.multicluster.x-k8s.io",
        "-n",
        ns,
        name,
        "-o",
        "json",
    ]);
    let profile = dir.join(format!("{name}.profile.json"));
    std::fs::write(&profile, stored).unwrap();
    let out = std::process::Command::new(bin.join("cia-oracle"))
        .arg("-providers")
        .arg(providers)
        .arg("-profile")
        .arg(&profile)
        .output()
        .expect("running cia-oracle");
    let answer: Json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "cia-oracle answered no JSON ({e}): {}",
            support::describe_output(&out)
        )
    });
    if answer["error"].as_str().is_some_and(|e| !e.is_empty()) {
        return (None, answer);
    }
    let args: Vec<String> = answer["exec_args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect();
    let env = strings(&answer["exec_env"])
        .into_iter()
        .filter(|n| WATCHED_ENV.contains(&n.as_str()))
        .collect();
    (Some((args, env)), answer)
}

/// One profile of the differential corpus: its name (also its exec extension's `clusterName`), its profile-sourced
/// extensions, and the name under which the credential-models guide lists its difference, if it differs.
struct ExtCase {
    name: &'static str,
    extensions: Json,
    differs: Option<&'static str>,
}

fn ext_corpus() -> Vec<ExtCase> {
    let envs = |m: Json| json!({"name": keys::ADDITIONAL_ENVS_EXTENSION, "extension": m});
    let case = |name: &'static str, extra: Option<Json>, differs: Option<&'static str>| {
        let mut extensions =
            vec![json!({"name": keys::EXEC_EXTENSION, "extension": {"clusterName": name}})];
        extensions.extend(extra);
        ExtCase {
            name,
            extensions: Json::Array(extensions),
            differs,
        }
    };
    vec![
        case(
            "with-env",
            Some(envs(json!({"REGION": "eu", "TEAM": "a"}))),
            None,
        ),
        case("plain", None, None),
        case("file-var", Some(envs(json!({"FILE_VAR": "profile"}))), None),
        case(
            "args-object",
            Some(json!({"name": keys::ADDITIONAL_ARGS_EXTENSION,
                "extension": {"args": ["--from-profile"]}})),
            None,
        ),
        case(
            "preload",
            Some(envs(json!({"LD_PRELOAD": "/tmp/x.so"}))),
            Some("profile-env-denylist"),
        ),
        case(
            "unlisted",
            Some(envs(json!({"UNLISTED": "x"}))),
            Some("profile-env-allowlist"),
        ),
    ]
}

/// The differential test of KEP-5339 profile-sourced args and env, on ClusterProfiles as the API server stores them
/// (every extension an object): for each profile of the corpus, the arguments and variables the bridge's plugin run
/// received (recorded by the plugin) against those `cia-oracle` says the upstream access library passes for the
/// same stored profile and providers file (`Append`, `AppendIfNotExists`). They agree, or differ as the difference
/// the credential-models guide lists by that name says. Profile A's variables and exec config never reach profile
/// B's run: `plain` gets the file's arguments and variables only, and its own config.
#[tokio::test(flavor = "multi_thread")]
async fn profile_sourced_args_and_env_reach_the_plugin_as_upstream_passes_them() {
    let Some(bin) = support::sveltos::upstream_binaries() else {
        return;
    };
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "kep5339").await;
    let scratch = tempfile::tempdir().unwrap();
    let (plugin, log) = recording_plugin(scratch.path());
    let file = scratch.path().join("providers.json");
    std::fs::write(
        &file,
        json!({"providers": [{"name": "rec", "execConfig": {"apiVersion": "client.authentication.k8s.io/v1",
            "command": plugin.display().to_string(), "args": ["--base"],
            "env": [{"name": "FILE_VAR", "value": "file"}], "provideClusterInfo": true},
            "profileSourcedCLIArgsPolicy": "Append", "profileSourcedEnvVarsPolicy": "AppendIfNotExists"}]})
        .to_string(),
    )
    .unwrap();
    let corpus = ext_corpus();
    for case in &corpus {
        inv.profile(
            &ns,
            case.name,
            &[],
            json!({"accessProviders": [{"name": "rec",
                "cluster": {"server": SERVER, "extensions": case.extensions}}]}),
        )
        .await;
    }
    let env_names = r#", profile_env = ["REGION", "TEAM", "FILE_VAR"]"#;
    let body = scoped_bridge(&ns, &file, "rec", env_names);
    let tf = inv.tf(&Cli::tofu(), &body);
    let out = flat(&apply_ok(&tf));
    let runs = recorded_runs(&log);
    let guide = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guides/credential-models.md"),
    )
    .unwrap();
    let mut failures = Vec::new();
    for case in &corpus {
        let (oracle, answer) = oracle_given(&bin, &file, scratch.path(), &ns, case.name);
        let bridged: Given = runs.get(case.name).map(|r| {
            assert_eq!(r.len(), 1, "{}: one run per apply: {r:?}", case.name);
            let args = r[0]["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
            (args, strings(&r[0]["env"]))
        });
        support::inventory::report(&format!(
            "KEP-5339 differential: {}: upstream {oracle:?}, bridge {bridged:?}",
            case.name
        ));
        match case.differs {
            None if oracle != bridged => failures.push(format!(
                "{}: upstream passes {oracle:?}, the bridge {bridged:?}\n  oracle: {answer}",
                case.name
            )),
            Some(id) if oracle == bridged || bridged.is_some() => failures.push(format!(
                "{}: expected the listed difference `{id}` (upstream passes, the bridge refuses): upstream \
                 {oracle:?}, the bridge {bridged:?}",
                case.name
            )),
            Some(id) if !guide.contains(&format!("`{id}`")) => {
                failures.push(format!("{}: the guide does not list `{id}`", case.name))
            }
            _ => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // No leak: the profile without extensions got the file's arguments and variables and its own config only.
    let plain = &runs["plain"][0];
    assert_eq!(plain["args"], json!(["--base"]), "{plain}");
    assert_eq!(plain["env"], json!(["FILE_VAR"]), "{plain}");
    assert_eq!(plain["config"], json!({"clusterName": "plain"}), "{plain}");
    // The object in additional-args is refused for its cluster only, naming the extension.
    assert!(
        out.contains(&format!("{ns}/args-object"))
            && out.contains(&format!(
                "extension {} must be a list of strings",
                keys::ADDITIONAL_ARGS_EXTENSION
            )),
        "{out}"
    );
    assert!(inv.bridged_kubeconfig(&ns, "plain").await.is_some());
    assert!(inv.bridged_kubeconfig(&ns, "args-object").await.is_none());
    tf.destroy();
}

/// The EKS example (`examples/ephemeral-resources/sveltos_cluster_credentials`): its `providers.json`, the command
/// pointed at the example's `eks-token`, and ClusterProfiles naming their cluster and region in the exec extension
/// (an object, as the upstream CRD stores it); the AWS CLI it names (its argument) is a stand-in that records its
/// arguments and answers a v1beta1 ExecCredential. The bridge registers `prod-eu-1` with that token, `aws` having been run as
/// `eks get-token --cluster-name prod-eu-1 --region eu-west-1 --output json`; a profile whose cluster name is not
/// an EKS name (shell metacharacters) runs no `aws` and is not registered, with a warning naming it.
#[tokio::test(flavor = "multi_thread")]
async fn the_eks_example_reads_the_cluster_from_the_exec_extension() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "eks").await;
    let scratch = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/ephemeral-resources/sveltos_cluster_credentials");
    let mut providers: Json =
        serde_json::from_slice(&std::fs::read(example.join("providers.json")).unwrap()).unwrap();
    let bin = scratch.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let exec_config = &mut providers["providers"][0]["execConfig"];
    exec_config["command"] = example.join("eks-token").display().to_string().into();
    exec_config["args"] = json!([bin.join("aws").display().to_string()]);
    let file = scratch.path().join("providers.json");
    std::fs::write(&file, providers.to_string()).unwrap();
    let aws_log = scratch.path().join("aws.log");
    write_executable(
        &bin.join("aws"),
        &format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\n\
             printf '%s' '{{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"eks-token-1\"}}}}'\n",
            aws_log.display()
        ),
    );
    for (name, cluster) in [("prod-eu-1", "prod-eu-1"), ("evil", "x;touch /tmp/pwned")] {
        inv.profile(
            &ns,
            name,
            &[],
            json!({"accessProviders": [{"name": "eks-token", "cluster": {
                "server": "https://abc123.gr7.eu-west-1.eks.amazonaws.com",
                "extensions": [{"name": keys::EXEC_EXTENSION,
                    "extension": {"clusterName": cluster, "region": "eu-west-1"}}]}}]}),
        )
        .await;
    }
    let servers = r#", servers = ["*.eks.amazonaws.com"]"#;
    let body = scoped_bridge(&ns, &file, "\"eks-token\"", servers);
    let tf = inv.tf(&Cli::tofu(), &body);
    let out = flat(&apply_ok(&tf));
    assert_eq!(
        lines(&aws_log),
        ["eks get-token --cluster-name prod-eu-1 --region eu-west-1 --output json"],
        "what aws was run with:\n{out}"
    );
    let kc = String::from_utf8(inv.bridged_kubeconfig(&ns, "prod-eu-1").await.unwrap()).unwrap();
    assert!(kc.contains("eks-token-1"), "{kc}");
    assert!(inv.bridged_kubeconfig(&ns, "evil").await.is_none());
    assert!(
        out.contains(&format!("{ns}/evil")) && out.contains("clusterName"),
        "the warning names the cluster and the value at fault: {out}"
    );
    tf.destroy();
}
