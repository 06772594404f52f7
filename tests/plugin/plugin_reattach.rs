//! `--debug` with the real CLIs: the `TF_REATTACH_PROVIDERS` value the binary prints, keyed by the short source
//! address `clusterinventory/sveltos`, attaches `tofu`, `terraform` (from PATH) and Terraform 1.0.3 to the running
//! process over its private Unix socket. The working directories use a filesystem mirror that is empty, so a CLI
//! that ignored the reattach entry would find no provider and fail.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use support::{Cli, Tf};

const CONFIG: &str = r#"
terraform {
  required_providers {
    sveltos = { source = "clusterinventory/sveltos" }
  }
}
"#;

/// The provider in debug mode, logging at DEBUG to a pipe.
struct DebugProvider {
    child: Child,
    reattach: String,
}

impl DebugProvider {
    fn start() -> DebugProvider {
        let mut child = Command::new(support::provider_binary())
            .arg("--debug")
            .env("TF_LOG_PROVIDER", "DEBUG")
            .env_remove("PLUGIN_CLIENT_CERT")
            .env_remove("PLUGIN_UNIX_SOCKET_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn provider --debug");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut text = String::new();
        let reattach = loop {
            let mut line = String::new();
            if stdout.read_line(&mut line).expect("read") == 0 {
                panic!("no TF_REATTACH_PROVIDERS line in {text:?}");
            }
            text.push_str(&line);
            if let Some(v) = line.trim().strip_prefix("TF_REATTACH_PROVIDERS='") {
                break v.trim_end_matches('\'').to_owned();
            }
        };
        DebugProvider { child, reattach }
    }

    /// Stops the process with Ctrl-C and returns its stderr (hclog JSON lines).
    fn stop(mut self) -> String {
        let status = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("kill -INT");
        assert!(status.success());
        let status = self.child.wait().expect("wait");
        assert!(status.success(), "{status:?}");
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut stderr)
            .expect("stderr");
        stderr
    }
}

fn reattach_works_with(cli: &Cli) {
    let provider = DebugProvider::start();
    let v: serde_json::Value = serde_json::from_str(&provider.reattach).expect("JSON");
    assert!(
        v.get("clusterinventory/sveltos").is_some(),
        "keyed by the short source address: {v}"
    );
    let mirror = tempfile::tempdir().expect("empty mirror");
    let mut tf = Tf::with_mirror(cli, mirror.path());
    tf.env("TF_REATTACH_PROVIDERS", &provider.reattach);
    tf.write_main(CONFIG);
    let schema = tf.provider_schema();
    assert!(
        schema["resource_schemas"]
            .get("sveltos_cluster_inventory_bridge")
            .is_some(),
        "{}: schema served by the reattached provider: {schema}",
        cli.name
    );
    let logs = provider.stop();
    assert!(
        logs.lines()
            .any(|l| l.contains("\"tf_rpc\":\"GetProviderSchema\"")),
        "{}: the debug process served the schema call:\n{logs}",
        cli.name
    );
}

#[test]
fn reattach_with_tofu() {
    reattach_works_with(&Cli::tofu());
}

#[test]
fn reattach_with_terraform_1_0_3() {
    reattach_works_with(&Cli::terraform_1_0_3());
}

#[test]
fn reattach_with_terraform() {
    match Cli::terraform_on_path() {
        Some(cli) => reattach_works_with(&cli),
        None if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("no terraform on PATH (needed under CI=true)")
        }
        None => eprintln!("skipped: reattach_with_terraform: no terraform on PATH"),
    }
}
