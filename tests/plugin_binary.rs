//! Tests of the real binary's plugin behaviour: the magic-cookie guard, the single handshake line on stdout, health
//! over mutual TLS, port range, protocol negotiation, and prompt exit on `GRPCController.Shutdown`.

mod plugin_common;

use plugin_common::*;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tfsveltos::tfplugin::{MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE};

const BIN: &str = env!("CARGO_BIN_EXE_terraform-provider-sveltos");

fn base_command() -> Command {
    let mut c = Command::new(BIN);
    for var in [
        MAGIC_COOKIE_KEY,
        "PLUGIN_PROTOCOL_VERSIONS",
        "PLUGIN_CLIENT_CERT",
        "PLUGIN_MIN_PORT",
        "PLUGIN_MAX_PORT",
    ] {
        c.env_remove(var);
    }
    c.env("TF_LOG_PROVIDER", "DEBUG");
    c
}

#[test]
fn without_magic_cookie_prints_help_and_exits_1() {
    let out = base_command().output().expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "nothing on stdout");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("plugin for Terraform and OpenTofu"), "{err}");
    assert!(err.contains("--debug"), "{err}");
    assert!(err.contains("TF_REATTACH_PROVIDERS"), "{err}");
}

#[test]
fn unsupported_protocol_versions_fail() {
    let out = base_command()
        .env(MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE)
        .env("PLUGIN_PROTOCOL_VERSIONS", "4,5")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
}

#[test]
fn version_and_help_flags() {
    let out = base_command().arg("--version").output().expect("run");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
    let out = base_command().arg("--help").output().expect("run");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--debug"));
}

#[tokio::test]
async fn handshake_health_and_shutdown() {
    let cert = terraform_like_client_cert();
    // Find a free port to use as a one-port range.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let mut child = base_command()
        .env(MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE)
        .env("PLUGIN_PROTOCOL_VERSIONS", "5,6")
        .env("PLUGIN_CLIENT_CERT", &cert.pem)
        .env("PLUGIN_MIN_PORT", port.to_string())
        .env("PLUGIN_MAX_PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("handshake line");
    assert!(line.ends_with('\n'));
    let hs = parse_handshake(&line);
    assert_eq!(
        hs.addr.port(),
        port,
        "PLUGIN_MIN_PORT/PLUGIN_MAX_PORT honoured"
    );
    let server_cert = hs.cert.expect("AutoMTLS certificate");

    let channel = mtls_channel(hs.addr, server_cert, &cert)
        .await
        .expect("mTLS");
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel.clone());
    let st = health
        .check(tonic_health::pb::HealthCheckRequest {
            service: "plugin".into(),
        })
        .await
        .expect("health")
        .into_inner();
    assert_eq!(
        st.status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );

    let started = Instant::now();
    pb::plugin::grpc_controller_client::GrpcControllerClient::new(channel.clone())
        .shutdown(pb::plugin::Empty {})
        .await
        .expect("shutdown");
    drop(health);
    drop(channel);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "plugin did not exit after Shutdown"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert!(status.success(), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "exit took {:?}",
        started.elapsed()
    );

    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("rest of stdout");
    assert!(
        rest.is_empty(),
        "exactly one line on stdout, then nothing: {rest:?}"
    );

    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    let logs: Vec<serde_json::Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stderr line is hclog JSON"))
        .collect();
    assert!(
        logs.iter()
            .any(|l| l["@message"] == "shutdown requested by the plugin host"
                && l["@level"] == "info")
    );
    for l in &logs {
        assert!(
            l["@timestamp"].is_string() && l["@module"].is_string() && l["@level"].is_string(),
            "{l}"
        );
    }
}

#[test]
fn debug_mode_prints_reattach_value() {
    let mut child = base_command()
        .arg("--debug")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut text = String::new();
    let mut reattach = None;
    for _ in 0..10 {
        let mut line = String::new();
        if stdout.read_line(&mut line).expect("read") == 0 {
            break;
        }
        text.push_str(&line);
        if let Some(v) = line.trim().strip_prefix("TF_REATTACH_PROVIDERS='") {
            reattach = Some(v.trim_end_matches('\'').to_owned());
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let reattach = reattach.unwrap_or_else(|| panic!("no TF_REATTACH_PROVIDERS line in {text:?}"));
    let v: serde_json::Value = serde_json::from_str(&reattach).expect("JSON");
    let p = &v["registry.terraform.io/clusterinventory/sveltos"];
    assert_eq!(p["Protocol"], "grpc");
    assert_eq!(p["ProtocolVersion"], 6);
    assert_eq!(p["Pid"], child.id());
    assert_eq!(p["Test"], true);
    assert_eq!(p["Addr"]["Network"], "tcp");
    assert!(
        p["Addr"]["String"]
            .as_str()
            .is_some_and(|a| a.starts_with("127.0.0.1:"))
    );
}
