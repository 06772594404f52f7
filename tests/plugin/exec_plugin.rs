//! Exec credential plugins run by `k8s::exec`, with real tiny plugin scripts: output caps, process-group
//! kill on timeout, redacted stderr on failure.
#![cfg(unix)]

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use support::{pid_alive, write_executable};
use tfsveltos::{
    domain::exec::ExecInvocation,
    k8s::exec::{ExecRunError, OUTPUT_CAP, run_with_timeout},
};

const API: &str = "client.authentication.k8s.io/v1";

/// Writes an executable `/bin/sh` script and returns its path.
fn plugin(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    write_executable(&path, &format!("#!/bin/sh\n{body}\n"));
    path
}

fn invocation(command: &Path, env: &[(&str, &str)]) -> ExecInvocation {
    ExecInvocation {
        provider: "test".into(),
        command: command.to_string_lossy().into_owned(),
        args: Vec::new(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        if_unset: Default::default(),
        exec_info: format!(
            r#"{{"apiVersion":"{API}","kind":"ExecCredential","spec":{{"interactive":false}}}}"#
        ),
        install_hint: None,
        api_version: API.into(),
    }
}

#[tokio::test]
async fn a_working_plugin_yields_its_credential() {
    let dir = tempfile::tempdir().unwrap();
    let p = plugin(
        dir.path(),
        "ok",
        &format!(
            r#"printf '%s' '{{"apiVersion":"{API}","kind":"ExecCredential","status":{{"token":"t-1"}}}}'"#
        ),
    );
    let cred = run_with_timeout(&invocation(&p, &[]), Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(cred.token.as_deref(), Some("t-1"));
}

#[tokio::test]
async fn ten_mebibytes_of_output_are_cut_at_one() {
    let dir = tempfile::tempdir().unwrap();
    let p = plugin(
        dir.path(),
        "flood",
        "head -c 10485760 /dev/zero | tr '\\0' 'a'",
    );
    let start = Instant::now();
    let err = run_with_timeout(&invocation(&p, &[]), Duration::from_secs(30))
        .await
        .unwrap_err();
    println!("10 MiB plugin stopped after {:?}: {err}", start.elapsed());
    assert!(
        matches!(
            err,
            ExecRunError::OutputTooLarge {
                stream: "stdout",
                limit: OUTPUT_CAP,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("more than 1048576 bytes to stdout"),
        "{err}"
    );

    let p = plugin(
        dir.path(),
        "flood-stderr",
        "head -c 10485760 /dev/zero | tr '\\0' 'e' >&2",
    );
    let err = run_with_timeout(&invocation(&p, &[]), Duration::from_secs(30))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ExecRunError::OutputTooLarge {
                stream: "stderr",
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_timed_out_plugin_leaves_no_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    let (inv, pids) = hanging_plugin(dir.path());
    let start = Instant::now();
    let err = run_with_timeout(&inv, Duration::from_millis(1500))
        .await
        .unwrap_err();
    let took = start.elapsed();
    println!("timed out after {took:?}: {err}");
    assert!(matches!(err, ExecRunError::Timeout { .. }), "{err:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_all_gone(&pids, "the timeout");
}

/// A plugin that forks a sleeping child (which keeps stdout open), records both pids in the returned file, then
/// sleeps itself.
fn hanging_plugin(dir: &Path) -> (ExecInvocation, PathBuf) {
    let pids = dir.join("pids");
    let p = plugin(
        dir,
        "hang",
        "sleep 300 &\necho \"$$ $!\" > \"$PID_FILE\"\nsleep 300",
    );
    (
        invocation(&p, &[("PID_FILE", pids.to_str().unwrap())]),
        pids,
    )
}

/// The two pids the `hang` plugin recorded (itself and its child) are gone within 5 s.
fn assert_all_gone(pid_file: &Path, after: &str) {
    let recorded = std::fs::read_to_string(pid_file).unwrap();
    let pids: Vec<u32> = recorded
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "{recorded}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|p| pid_alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    for pid in pids {
        assert!(!pid_alive(pid), "process {pid} survived {after}");
    }
}

/// A run that is dropped (its plan or apply cancelled) takes the plugin's whole process group with it, not only
/// the plugin.
#[tokio::test]
async fn a_dropped_plugin_run_leaves_no_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    let (inv, pids) = hanging_plugin(dir.path());
    // Dropped long before its own timeout.
    let dropped = tokio::time::timeout(
        Duration::from_millis(800),
        run_with_timeout(&inv, Duration::from_secs(120)),
    )
    .await;
    assert!(dropped.is_err(), "the run should still be going");
    assert_all_gone(&pids, "the dropped run");
}

#[tokio::test]
async fn a_failing_plugin_shows_redacted_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.c2lnLWNhbmFyeS1zaWduYXR1cmU";
    let p = plugin(
        dir.path(),
        "fail",
        &format!(
            "echo 'starting login' >&2\n\
             echo 'got token=canary-tok-1 from cache' >&2\n\
             echo 'Authorization: Bearer canary-bearer-2' >&2\n\
             echo 'id_token {jwt}' >&2\n\
             echo '-----BEGIN PRIVATE KEY-----' >&2\n\
             echo 'MIIEvQIBADANcanary3' >&2\n\
             echo '-----END PRIVATE KEY-----' >&2\n\
             echo 'password=\"canary pw 4\"' >&2\n\
             echo 'error: the identity provider refused the request' >&2\n\
             exit 3"
        ),
    );
    let err = run_with_timeout(&invocation(&p, &[]), Duration::from_secs(20))
        .await
        .unwrap_err();
    let ExecRunError::Failed { status, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(status.code(), Some(3));
    let shown = format!("{err}\n{err:?}");
    println!("{err}");
    for secret in ["canary", "eyJ", "MIIEvQ"] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
    for kept in [
        "exited with",
        "starting login",
        "error: the identity provider refused the request",
        "<redacted",
    ] {
        assert!(shown.contains(kept), "{kept} missing from {shown}");
    }
}

#[tokio::test]
async fn a_missing_plugin_names_the_command() {
    let err = run_with_timeout(
        &invocation(Path::new("/nonexistent/get-token"), &[]),
        Duration::from_secs(5),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ExecRunError::Spawn { .. }), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/get-token"), "{err}");
    assert!(std::error::Error::source(&err).is_some());
}

/// KEP-5339 profile-sourced arguments and variables reach only the run of the profile that gives them (the upstream
/// access library appends them to the provider's shared configuration, so they leak into later profiles' runs).
/// One providers-file entry (`Append`, `Replace`) and two profiles, A with arguments (the list upstream's library
/// reads) and a variable, B with neither; their runs are built by `domain::exec::invocation` and run by
/// `k8s::exec` with a plugin that records its arguments and `TEAM`, in the order A, B, A, B: A gets its own once
/// each time, B never gets A's.
#[tokio::test]
async fn profile_args_and_env_reach_only_their_own_run() {
    use std::collections::BTreeMap;
    use tfsveltos::{
        api::{AccessProvider, keys},
        domain::exec::{ExecScope, NamespaceScope, ProvidersFile, invocation},
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("runs.log");
    let p = plugin(
        dir.path(),
        "rec",
        &format!(
            "echo \"args=$* team=${{TEAM-unset}}\" >> '{}'\n\
             printf '%s' '{{\"apiVersion\":\"{API}\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"t\"}}}}'",
            log.display()
        ),
    );
    let file = serde_json::json!({"providers": [{"name": "rec", "execConfig": {"apiVersion": API,
        "command": p.display().to_string(), "args": ["--base"]},
        "profileSourcedCLIArgsPolicy": "Append", "profileSourcedEnvVarsPolicy": "Replace"}]});
    let scope = ExecScope {
        namespaces: NamespaceScope::Any,
        servers: Default::default(),
        profile_env: ["TEAM".to_string()].into(),
    };
    let file = ProvidersFile::parse(file.to_string().as_bytes())
        .unwrap()
        .scoped(&BTreeMap::from([("rec".to_string(), scope)]));
    let profile = |extensions: serde_json::Value| -> AccessProvider {
        serde_json::from_value(serde_json::json!({"name": "rec",
            "cluster": {"server": "https://10.0.0.1:6443", "extensions": extensions}}))
        .unwrap()
    };
    let a = profile(serde_json::json!([
        {"name": keys::ADDITIONAL_ARGS_EXTENSION, "extension": ["--from-a"]},
        {"name": keys::ADDITIONAL_ENVS_EXTENSION, "extension": {"TEAM": "a"}},
    ]));
    let b = profile(serde_json::json!([]));
    let entry = file.get("rec").unwrap();
    for access in [&a, &b, &a, &b] {
        let inv = invocation(entry, access).unwrap();
        run_with_timeout(&inv, Duration::from_secs(20))
            .await
            .unwrap();
    }
    let runs = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        runs.lines().collect::<Vec<_>>(),
        [
            "args=--base --from-a team=a",
            "args=--base team=unset",
            "args=--base --from-a team=a",
            "args=--base team=unset",
        ],
        "what each run got"
    );
}
