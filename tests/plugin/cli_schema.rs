//! The real CLIs (`tofu`, `terraform-1.0.3`, and the `terraform` on PATH) start the provider binary through
//! `dev_overrides` and read its schema with `providers schema -json`; `TF_LOG=DEBUG` shows the provider's log
//! lines; and `--debug` + `TF_REATTACH_PROVIDERS` lets every CLI use an already running provider.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use support::{Cli, PROVIDER_SOURCE, Tf, fixtures, provider_binary};

/// The resource and data source type names the provider declares.
fn declared_types() -> (BTreeSet<String>, BTreeSet<String>) {
    let p = tfsveltos::provider::registry::new();
    (
        p.resources()
            .iter()
            .map(|r| r.type_name().to_owned())
            .collect(),
        p.data_sources()
            .iter()
            .map(|d| d.type_name().to_owned())
            .collect(),
    )
}

fn check_schema(cli: &Cli, schema: &serde_json::Value, address: Option<&str>) {
    let schemas = schema["provider_schemas"]
        .as_object()
        .expect("provider_schemas");
    let (key, ours) = schemas
        .iter()
        .find(|(k, _)| {
            address.map_or(k.ends_with(PROVIDER_SOURCE), |a| {
                k.as_str() == a || k.ends_with(&format!("/{a}"))
            })
        })
        .unwrap_or_else(|| panic!("{}: our provider missing in {schemas:?}", cli.name));
    assert!(
        ours["provider"]["block"].is_object(),
        "{}: {key} has no provider block",
        cli.name
    );
    let names = |field: &str| -> BTreeSet<String> {
        ours[field]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    let (resources, data_sources) = declared_types();
    assert_eq!(names("resource_schemas"), resources, "{}", cli.name);
    assert_eq!(names("data_source_schemas"), data_sources, "{}", cli.name);
}

#[test]
fn every_cli_reads_the_schema_and_shows_provider_logs() {
    for cli in Cli::all() {
        let mut tf = Tf::new(&cli);
        tf.write_main(&fixtures::required_providers(PROVIDER_SOURCE, None));
        tf.env("TF_LOG", "DEBUG");
        let out = tf.run(&["providers", "schema", "-json"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{} failed:\n{stderr}", cli.name);
        let schema: serde_json::Value = serde_json::from_slice(&out.stdout).expect("schema JSON");
        check_schema(&cli, &schema, None);
        // Our hclog lines, re-logged by the host at their own level.
        assert!(
            stderr
                .lines()
                .any(|l| l.contains("[DEBUG]") && l.contains("served schema")),
            "{}: provider debug log missing:\n{stderr}",
            cli.name
        );
        assert!(
            stderr
                .lines()
                .any(|l| l.contains("[INFO]") && l.contains("plugin server started")),
            "{}",
            cli.name
        );
    }
}

struct DebugProvider(Child);

impl Drop for DebugProvider {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `terraform-provider-sveltos --debug` and returns it with its `TF_REATTACH_PROVIDERS` value.
fn start_debug_provider() -> (DebugProvider, String) {
    let mut child = Command::new(provider_binary())
        .arg("--debug")
        .env_remove("TF_PLUGIN_MAGIC_COOKIE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn provider --debug");
    let stdout = child.stdout.take().expect("stdout");
    let guard = DebugProvider(child);
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("read");
        if let Some(v) = line.trim().strip_prefix("TF_REATTACH_PROVIDERS='") {
            return (guard, v.trim_end_matches('\'').to_owned());
        }
    }
    panic!("--debug printed no TF_REATTACH_PROVIDERS line");
}

#[test]
fn debug_mode_reattach_works_with_every_cli() {
    let (_provider, reattach) = start_debug_provider();
    let parsed: serde_json::Value = serde_json::from_str(&reattach).expect("reattach JSON");
    let address = parsed
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("one provider");
    for cli in Cli::all() {
        // Two runs against the same process: reattached providers survive each CLI run.
        for _ in 0..2 {
            let mut tf = Tf::new(&cli);
            tf.write_main(&fixtures::required_providers(&address, None));
            tf.env("TF_REATTACH_PROVIDERS", &reattach);
            let out = tf.run(&["providers", "schema", "-json"]);
            assert!(
                out.status.success(),
                "{} with TF_REATTACH_PROVIDERS failed:\n{}",
                cli.name,
                String::from_utf8_lossy(&out.stderr)
            );
            let schema: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("schema JSON");
            check_schema(&cli, &schema, Some(&address));
        }
    }
}
