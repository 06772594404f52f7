//! Tests of the real binary's plugin behaviour: the magic-cookie and client-certificate guards, the single handshake
//! line on stdout, the private Unix socket (directory mode 0700, removed on exit), health over mutual TLS, refusal
//! of clients without the host's certificate, protocol negotiation, `--debug`, and prompt exit on
//! `GRPCController.Shutdown`.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};
use support::plugin::*;
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
        "PLUGIN_UNIX_SOCKET_DIR",
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

/// Starts the binary as Terraform would, with `cert` as the host's client certificate; returns the child, its stdout
/// after the handshake line, and the parsed handshake.
fn spawn_plugin(cert: &ClientCert) -> (Child, BufReader<ChildStdout>, Handshake) {
    let mut child = base_command()
        .env(MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE)
        .env("PLUGIN_PROTOCOL_VERSIONS", "5,6")
        .env("PLUGIN_CLIENT_CERT", &cert.pem)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("handshake line");
    assert!(line.ends_with('\n'), "{line:?}");
    let hs = parse_handshake(&line);
    (child, stdout, hs)
}

/// The mode bits and owner of `dir`.
fn mode_and_owner(dir: &Path) -> (u32, u32) {
    let meta = std::fs::symlink_metadata(dir).expect("socket directory exists");
    assert!(meta.is_dir(), "{} is a directory", dir.display());
    (meta.permissions().mode() & 0o7777, meta.uid())
}

fn current_uid() -> u32 {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .expect("own uid")
}

async fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        assert!(
            started.elapsed() < within,
            "plugin did not exit within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[test]
fn refuses_to_serve_without_client_certificate() {
    let out = base_command()
        .env(MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE)
        .env("PLUGIN_PROTOCOL_VERSIONS", "6")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "no handshake line: {:?}", out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("PLUGIN_CLIENT_CERT"), "{err}");
}

#[tokio::test]
async fn handshake_health_and_shutdown() {
    let cert = terraform_like_client_cert();
    let (mut child, mut stdout, hs) = spawn_plugin(&cert);
    let socket = hs.addr.unix_path().to_path_buf();
    let dir = socket.parent().expect("socket directory").to_path_buf();
    assert_eq!(
        mode_and_owner(&dir),
        (0o700, current_uid()),
        "{} is private to its owner",
        dir.display()
    );
    let server_cert = hs.cert.expect("AutoMTLS certificate");

    let channel = mtls_channel(&hs.addr, server_cert, &cert)
        .await
        .expect("mTLS");
    assert_serving(&channel).await;

    let started = Instant::now();
    pb::plugin::grpc_controller_client::GrpcControllerClient::new(channel.clone())
        .shutdown(pb::plugin::Empty {})
        .await
        .expect("shutdown");
    drop(channel);
    let status = wait_exit(&mut child, Duration::from_secs(5)).await;
    assert!(status.success(), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "exit took {:?}",
        started.elapsed()
    );
    assert!(!dir.exists(), "{} removed on exit", dir.display());

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

/// `GetMetadata` through `channel`, with a time limit so that a refused handshake cannot hang the test.
async fn metadata_call(
    channel: Result<tonic::transport::Channel, tonic::transport::Error>,
) -> Result<(), String> {
    let call = async {
        let mut c = pb::tfplugin6::provider_client::ProviderClient::new(
            channel.map_err(|e| e.to_string())?,
        );
        c.get_metadata(pb::tfplugin6::get_metadata::Request {})
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    };
    tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .map_err(|_| "timed out".to_owned())?
}

#[tokio::test]
async fn clients_without_the_host_certificate_cannot_call() {
    let cert = terraform_like_client_cert();
    let (mut child, _stdout, hs) = spawn_plugin(&cert);
    let server_cert = hs.cert.clone().expect("AutoMTLS certificate");

    // Plaintext gRPC on the socket: refused.
    let plain = metadata_call(plain_channel(&hs.addr).await).await;
    assert!(plain.is_err(), "plaintext call must fail");

    // TLS with another certificate of the same shape: refused.
    let intruder = terraform_like_client_cert();
    let other = metadata_call(mtls_channel(&hs.addr, server_cert.clone(), &intruder).await).await;
    assert!(other.is_err(), "a foreign client certificate must fail");

    // The host's certificate: accepted.
    metadata_call(mtls_channel(&hs.addr, server_cert, &cert).await)
        .await
        .expect("the host's certificate is accepted");

    // Another local user cannot even reach the socket (needs root to act as another user).
    if current_uid() == 0 {
        let out = Command::new("python3")
            .args([
                "-c",
                "import socket,sys\n\
                 s=socket.socket(socket.AF_UNIX)\n\
                 try:\n  s.connect(sys.argv[1])\nexcept PermissionError:\n  sys.exit(13)\n\
                 sys.exit(0)",
            ])
            .arg(hs.addr.unix_path())
            .uid(65534)
            .gid(65534)
            .output()
            .expect("python3 as nobody");
        assert_eq!(
            out.status.code(),
            Some(13),
            "another user must get EACCES connecting to the socket: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    } else {
        eprintln!("skipped: second-user connect check: the test does not run as root");
    }

    child.kill().expect("kill");
    child.wait().expect("wait");
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
    let reattach = reattach.unwrap_or_else(|| panic!("no TF_REATTACH_PROVIDERS line in {text:?}"));
    let v: serde_json::Value = serde_json::from_str(&reattach).expect("JSON");
    let p = &v["clusterinventory/sveltos"];
    assert_eq!(p["Protocol"], "grpc");
    assert_eq!(p["ProtocolVersion"], 6);
    assert_eq!(p["Pid"], child.id());
    assert_eq!(p["Test"], true);
    assert_eq!(p["Addr"]["Network"], "unix");
    let socket = PathBuf::from(p["Addr"]["String"].as_str().expect("socket path"));
    let dir = socket.parent().expect("directory").to_path_buf();
    assert_eq!(mode_and_owner(&dir), (0o700, current_uid()));

    // Ctrl-C stops it and removes the directory.
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(status.success());
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status:?}");
    assert!(!dir.exists(), "{} removed on exit", dir.display());
}
