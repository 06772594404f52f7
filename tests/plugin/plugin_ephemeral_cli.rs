//! Ephemeral resources with the real CLIs: the toy provider of `support::plugin` (which declares the ephemeral
//! resource `toy_token`) is served in-process in debug mode and attached through `TF_REATTACH_PROVIDERS`.
//! * `tofu` (and `terraform` >= 1.10 from PATH) open and close `toy_token` and pass its result to an aliased
//!   provider's configuration; the token reaches neither the state nor the saved plan (`show -json`).
//! * Terraform 1.0.3, which knows nothing of ephemeral resources, still loads the schema and applies a managed
//!   resource of the same provider.

use std::sync::Arc;
use support::plugin::*;
use support::{Cli, Tf};
use tfsveltos::tfplugin::{self, ListenConfig};

const HEADER: &str = r#"
terraform {
  required_providers {
    toy = { source = "example/toy" }
  }
}
"#;

/// Serves the toy provider in this process and returns a working directory for `cli` attached to it.
async fn attached(cli: &Cli) -> (tfplugin::RunningServer, Arc<Seen>, Tf, tempfile::TempDir) {
    let (provider, seen) = toy_provider();
    let server = tfplugin::start(
        provider,
        ListenConfig {
            honour_shutdown: false,
            ..Default::default()
        },
    )
    .await
    .expect("server");
    let mirror = tempfile::tempdir().expect("empty mirror");
    let mut tf = Tf::with_mirror(cli, mirror.path());
    tf.env("TF_REATTACH_PROVIDERS", server.reattach_json("example/toy"));
    (server, seen, tf, mirror)
}

async fn run(tf: Tf, args: &'static [&'static str]) -> (Tf, String) {
    tokio::task::spawn_blocking(move || {
        let out = tf.run_ok(args);
        (tf, out)
    })
    .await
    .expect("CLI task")
}

async fn ephemeral_round_trip(cli: Cli) {
    let (server, seen, tf, _mirror) = attached(&cli).await;
    tf.write_main(&format!(
        r#"{HEADER}
ephemeral "toy_token" "t" {{
  name = "canary-name"
}}

provider "toy" {{
  alias = "second"
  token = ephemeral.toy_token.t.token
}}

resource "toy_thing" "x" {{
  provider = toy.second
  name     = "x"
}}
"#
    ));
    let (tf, _) = run(tf, &["plan", "-input=false", "-no-color", "-out=tfplan"]).await;
    let calls = seen.ephemeral_calls();
    assert!(
        calls.contains(&"open canary-name".to_owned())
            && calls.contains(&"close lease-canary-name".to_owned()),
        "{}: opened and closed during plan: {calls:?}",
        cli.name
    );
    let (tf, _) = run(
        tf,
        &[
            "apply",
            "-input=false",
            "-no-color",
            "-auto-approve",
            "tfplan",
        ],
    )
    .await;
    let configured = seen
        .configured
        .lock()
        .map(|c| c.clone())
        .expect("lock")
        .expect("configured");
    assert_eq!(
        configured.config.get_attr("token").as_str(),
        Some("tok-canary-name"),
        "{}: the aliased provider got the ephemeral result",
        cli.name
    );
    let state = std::fs::read_to_string(tf.dir().join("terraform.tfstate")).expect("state");
    let (_tf, plan) = run(tf, &["show", "-json", "-no-color", "tfplan"]).await;
    for (what, text) in [("terraform.tfstate", state), ("show -json tfplan", plan)] {
        assert!(
            !text.contains("tok-canary-name"),
            "{}: the ephemeral result is not in {what}",
            cli.name
        );
    }
    server.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ephemeral_with_tofu() {
    ephemeral_round_trip(Cli::tofu()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ephemeral_with_terraform() {
    match Cli::terraform_on_path() {
        Some(cli) => ephemeral_round_trip(cli).await,
        None if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("no terraform on PATH (needed under CI=true)")
        }
        None => eprintln!("skipped: ephemeral_with_terraform: no terraform on PATH"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terraform_1_0_3_ignores_declared_ephemeral_resources() {
    let cli = Cli::terraform_1_0_3();
    let (server, seen, tf, _mirror) = attached(&cli).await;
    tf.write_main(&format!(
        r#"{HEADER}
resource "toy_thing" "x" {{
  name = "x"
}}
"#
    ));
    let (tf, _) = run(tf, &["apply", "-input=false", "-no-color", "-auto-approve"]).await;
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tf.dir().join("terraform.tfstate")).expect("state"))
            .expect("state JSON");
    assert_eq!(
        state["resources"][0]["instances"][0]["attributes"]["id"],
        "id-x"
    );
    assert!(seen.ephemeral_calls().is_empty());
    server.shutdown();
}
