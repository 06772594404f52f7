//! Runs exec credential plugins (KEP-541) for exec-plugin access providers.
//!
//! The plugin runs in a process group of its own with stdin closed; stdout and stderr are read with a cap of
//! [`OUTPUT_CAP`] each; past [`TIMEOUT`] (or the cap) the whole group is killed, so a plugin that forks
//! leaves nothing behind. Its stdout is parsed, never logged; when it fails, the error carries the last lines
//! of its stderr with whatever looks like a credential removed ([`redact_secrets`]).

use std::{
    io,
    process::{ExitStatus, Stdio},
    time::Duration,
};

use tokio::{
    io::{AsyncRead, AsyncReadExt},
    process::{Child, Command},
};

use crate::domain::exec::{
    ExecCredentialStatus, ExecError, ExecInvocation, parse_exec_credential, redact_secrets,
};

/// How long a plugin may run.
pub const TIMEOUT: Duration = Duration::from_secs(60);
/// The most a plugin may write to stdout, and separately to stderr (1 MiB).
pub const OUTPUT_CAP: usize = 1 << 20;
/// How many of the last stderr lines a failure error shows.
pub const STDERR_TAIL_LINES: usize = 10;
/// How many characters of each stderr line a failure error shows.
const STDERR_LINE_CHARS: usize = 300;

/// Why a plugin run gave no credential. No variant holds the plugin's stdout; stderr only redacted.
#[derive(Debug, thiserror::Error)]
pub enum ExecRunError {
    /// The command could not be started.
    #[error("exec provider {provider}: cannot start {command:?}{hint}")]
    Spawn {
        /// The provider's name.
        provider: String,
        /// The command.
        command: String,
        /// ` (<install hint>)`, or empty.
        hint: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The plugin ran past the timeout; its process group was killed.
    #[error(
        "exec provider {provider}: {command:?} did not finish within {timeout:?}; it and every process it started were killed"
    )]
    Timeout {
        /// The provider's name.
        provider: String,
        /// The command.
        command: String,
        /// The timeout.
        timeout: Duration,
    },
    /// The plugin wrote more than [`OUTPUT_CAP`] to one stream; its process group was killed.
    #[error(
        "exec provider {provider}: {command:?} wrote more than {limit} bytes to {stream}; it and every process it started were killed"
    )]
    OutputTooLarge {
        /// The provider's name.
        provider: String,
        /// The command.
        command: String,
        /// `stdout` or `stderr`.
        stream: &'static str,
        /// The cap.
        limit: usize,
    },
    /// Reading the plugin's output or waiting for it failed.
    #[error("exec provider {provider}: running {command:?} failed")]
    Io {
        /// The provider's name.
        provider: String,
        /// The command.
        command: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The plugin exited unsuccessfully.
    #[error(
        "exec provider {provider}: {command:?} exited with {status}{}",
        tail_text(stderr_tail)
    )]
    Failed {
        /// The provider's name.
        provider: String,
        /// The command.
        command: String,
        /// How it exited.
        status: ExitStatus,
        /// The last lines of its stderr, credentials redacted.
        stderr_tail: String,
    },
    /// The plugin's answer is not a usable ExecCredential.
    #[error("exec provider {provider}: {source}")]
    Credential {
        /// The provider's name.
        provider: String,
        /// What is wrong with the answer.
        #[source]
        source: ExecError,
    },
}

fn tail_text(tail: &str) -> String {
    if tail.is_empty() {
        " (no stderr output)".into()
    } else {
        format!("; last lines of its stderr (credentials redacted):\n{tail}")
    }
}

/// Runs the plugin with [`TIMEOUT`] and parses its ExecCredential.
pub async fn run(inv: &ExecInvocation) -> Result<ExecCredentialStatus, ExecRunError> {
    run_with_timeout(inv, TIMEOUT).await
}

/// Runs the plugin with the given timeout and parses its ExecCredential.
pub async fn run_with_timeout(
    inv: &ExecInvocation,
    timeout: Duration,
) -> Result<ExecCredentialStatus, ExecRunError> {
    let child = spawn_plugin(inv)?;
    let (status, out, err) = wait_for_plugin(inv, child, timeout).await?;
    if !status.success() {
        return Err(ExecRunError::Failed {
            provider: inv.provider.clone(),
            command: inv.command.clone(),
            status,
            stderr_tail: stderr_tail(&err),
        });
    }
    parse_exec_credential(&out, &inv.api_version).map_err(|source| ExecRunError::Credential {
        provider: inv.provider.clone(),
        source,
    })
}

/// Starts the plugin ([`plugin_command`]); the error names the install hint when the provider has one.
fn spawn_plugin(inv: &ExecInvocation) -> Result<Child, ExecRunError> {
    plugin_command(inv)
        .spawn()
        .map_err(|source| ExecRunError::Spawn {
            provider: inv.provider.clone(),
            command: inv.command.clone(),
            hint: inv
                .install_hint
                .as_deref()
                .map(|h| format!(" ({h})"))
                .unwrap_or_default(),
            source,
        })
}

/// Waits for the started plugin to exit within `timeout`, reading its stdout and stderr with the cap: its exit
/// status and both outputs. When it cannot be read, runs too long or writes too much, its whole process group is
/// killed.
async fn wait_for_plugin(
    inv: &ExecInvocation,
    mut child: Child,
    timeout: Duration,
) -> Result<(ExitStatus, Vec<u8>, Vec<u8>), ExecRunError> {
    // If this future is dropped (a cancelled plan or apply), the guard kills the plugin's whole process group:
    // `kill_on_drop` alone would reach the plugin, not what it started.
    let mut group = GroupGuard(child.id().and_then(|p| i32::try_from(p).ok()));
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        group.0 = None;
        kill_group(&mut child).await;
        return Err(ExecRunError::Io {
            provider: inv.provider.clone(),
            command: inv.command.clone(),
            source: io::Error::other("the plugin's output pipes are missing"),
        });
    };
    let outcome = tokio::time::timeout(timeout, async {
        let (out, err) =
            tokio::try_join!(read_capped(stdout, "stdout"), read_capped(stderr, "stderr"))?;
        let status = child.wait().await.map_err(ReadError::Io)?;
        Ok::<_, ReadError>((status, out, err))
    })
    .await;
    match outcome {
        Ok(Ok(done)) => {
            // Reaped: its pid may be reused from now on.
            group.0 = None;
            Ok(done)
        }
        Ok(Err(e)) => {
            group.0 = None;
            kill_group(&mut child).await;
            Err(e.for_plugin(inv))
        }
        Err(_) => {
            group.0 = None;
            kill_group(&mut child).await;
            Err(ExecRunError::Timeout {
                provider: inv.provider.clone(),
                command: inv.command.clone(),
                timeout,
            })
        }
    }
}

/// The plugin's command: its arguments and environment (a variable it sets only if unset is left to the
/// provider's own when that is set), `KUBERNETES_EXEC_INFO`, no stdin, both outputs piped, in a process group of its
/// own, killed when dropped.
fn plugin_command(inv: &ExecInvocation) -> Command {
    let mut cmd = Command::new(&inv.command);
    cmd.args(&inv.args)
        .envs(
            inv.env
                .iter()
                .filter(|(k, _)| !(inv.if_unset.contains(k) && std::env::var_os(k).is_some()))
                .map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .env("KUBERNETES_EXEC_INFO", &inv.exec_info)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    cmd
}

enum ReadError {
    TooLarge(&'static str),
    Io(io::Error),
}

impl ReadError {
    /// The error of running `inv`'s plugin whose output could not be read.
    fn for_plugin(self, inv: &ExecInvocation) -> ExecRunError {
        match self {
            ReadError::TooLarge(stream) => ExecRunError::OutputTooLarge {
                provider: inv.provider.clone(),
                command: inv.command.clone(),
                stream,
                limit: OUTPUT_CAP,
            },
            ReadError::Io(source) => ExecRunError::Io {
                provider: inv.provider.clone(),
                command: inv.command.clone(),
                source,
            },
        }
    }
}

/// Reads a stream to its end, or fails as soon as it passes [`OUTPUT_CAP`].
async fn read_capped(
    stream: impl AsyncRead + Unpin,
    name: &'static str,
) -> Result<Vec<u8>, ReadError> {
    let mut buf = Vec::new();
    stream
        .take(OUTPUT_CAP as u64 + 1)
        .read_to_end(&mut buf)
        .await
        .map_err(ReadError::Io)?;
    if buf.len() > OUTPUT_CAP {
        return Err(ReadError::TooLarge(name));
    }
    Ok(buf)
}

/// Kills the process group `pid` leads when dropped, unless disarmed (`None`) once the plugin was reaped.
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.0 {
            // SAFETY: kill(2) with a negative pid signals the process group the plugin leads (created by
            // `process_group(0)` at spawn); it is not reaped yet (the guard is disarmed once it is).
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
}

/// Kills the plugin's whole process group (it is the group's leader), then reaps the plugin itself.
async fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) with a negative pid signals the process group the plugin leads (created by
        // `process_group(0)` at spawn); the plugin is not yet reaped, so its pid still names that group.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.start_kill();
    let _ = child.wait().await;
}

/// The last [`STDERR_TAIL_LINES`] non-empty lines of `stderr`, credentials redacted, each shortened.
pub fn stderr_tail(stderr: &[u8]) -> String {
    let text = redact_secrets(&String::from_utf8_lossy(stderr));
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(STDERR_TAIL_LINES)..]
        .iter()
        .map(|l| {
            let mut line: String = l.chars().take(STDERR_LINE_CHARS).collect();
            if l.chars().count() > STDERR_LINE_CHARS {
                line.push('…');
            }
            format!("  {line}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_keeps_the_last_lines_redacted() {
        let mut err = String::new();
        for i in 0..30 {
            err.push_str(&format!("line {i}\n"));
        }
        err.push_str("token=canary-9 rejected\n\n");
        let tail = stderr_tail(err.as_bytes());
        assert_eq!(tail.lines().count(), STDERR_TAIL_LINES);
        assert!(tail.starts_with("  line 21"), "{tail}");
        assert!(tail.ends_with("token=<redacted> rejected"), "{tail}");
        assert!(stderr_tail(&[b'x'; 5000]).chars().count() < STDERR_LINE_CHARS + 10);
        assert_eq!(stderr_tail(b""), "");
    }
}
