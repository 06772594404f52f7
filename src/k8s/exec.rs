//! Runs exec credential plugins (KEP-541) for exec-plugin access providers. Output is parsed, never logged.

use std::{process::Stdio, time::Duration};

use tokio::process::Command;

use crate::bridge::exec::{ExecCredentialStatus, ExecInvocation, parse_exec_credential};

/// How long a plugin may run.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// Runs the plugin and parses its ExecCredential. Errors name the provider and never quote the output.
pub async fn run(inv: &ExecInvocation) -> Result<ExecCredentialStatus, String> {
    let mut cmd = Command::new(&inv.command);
    cmd.args(&inv.args)
        .envs(inv.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .env("KUBERNETES_EXEC_INFO", &inv.exec_info)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = cmd.spawn().map_err(|e| {
        let hint = inv
            .install_hint
            .as_deref()
            .map(|h| format!(" ({h})"))
            .unwrap_or_default();
        format!(
            "exec provider {}: cannot start {:?}: {e}{hint}",
            inv.provider, inv.command
        )
    })?;
    let out = tokio::time::timeout(TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| {
            format!(
                "exec provider {}: {:?} did not finish within {TIMEOUT:?}",
                inv.provider, inv.command
            )
        })?
        .map_err(|e| format!("exec provider {}: {e}", inv.provider))?;
    if !out.status.success() {
        return Err(format!(
            "exec provider {}: {:?} exited with {} (its output is not shown, as it may hold credentials)",
            inv.provider, inv.command, out.status
        ));
    }
    parse_exec_credential(&out.stdout, &inv.api_version)
        .map_err(|e| format!("exec provider {}: {e}", inv.provider))
}
