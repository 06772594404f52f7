//! Serving a provider the way go-plugin hosts (Terraform, OpenTofu) expect.
//!
//! * Normal mode ([`serve`]): refuse to run without the magic cookie; negotiate protocol 6 from
//!   `PLUGIN_PROTOCOL_VERSIONS`; refuse to run without the host's client certificate (`PLUGIN_CLIENT_CERT`, which
//!   Terraform and OpenTofu always send); listen on a Unix socket inside a fresh directory of mode 0700 (under
//!   `PLUGIN_UNIX_SOCKET_DIR`, else the temporary directory), or, on platforms without Unix sockets, on
//!   127.0.0.1 within `PLUGIN_MIN_PORT..=PLUGIN_MAX_PORT`; serve mutual TLS pinned to the host's certificate;
//!   print exactly one handshake line `1|6|unix|<socket path>|grpc|<base64 server cert>` on stdout; serve until
//!   `GRPCController.Shutdown`, then remove the socket directory. Interrupts are ignored (the host forwards
//!   Ctrl-C as `StopProvider` and then shuts the plugin down).
//! * Debug mode (`ServeOptions::debug`): the same private socket, print a ready-to-paste `TF_REATTACH_PROVIDERS`
//!   value keyed by the provider's source address, serve until Ctrl-C (controller shutdowns are ignored, so several
//!   CLI runs can reuse the process). A reattach entry has no field for certificates, so Terraform and OpenTofu
//!   connect without TLS: the socket directory's mode is what keeps other local users out.
//!
//! [`start`] is the same server without the environment handling, for tests and embedding.

mod error;
mod listen;
mod running;

pub use error::ServeError;
pub use listen::{ListenAddr, ListenConfig, Transport};
pub use running::{RunningServer, start};

use super::provider::Provider;
use std::io::{self, Write as _};
use std::sync::Arc;
use std::time::Duration;
use tracing::{debug, info};

/// Environment variable holding go-plugin's magic cookie for Terraform providers.
pub const MAGIC_COOKIE_KEY: &str = "TF_PLUGIN_MAGIC_COOKIE";
/// The magic cookie value Terraform and OpenTofu set.
pub const MAGIC_COOKIE_VALUE: &str =
    "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";
/// The plugin protocol version served.
pub const PROTOCOL_VERSION: u32 = 6;
/// go-plugin core protocol version (first handshake field).
const CORE_PROTOCOL_VERSION: u32 = 1;
/// Largest gRPC message accepted or sent (as Terraform's own limit).
pub const MAX_MESSAGE_SIZE: usize = 256 << 20;
/// How long in-flight calls may take to finish after a shutdown request.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(1500);
/// Limit for a client's TLS handshake.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// File name of the socket inside its private directory.
const SOCKET_NAME: &str = "plugin.sock";

/// How to serve a provider.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The provider's source address as a configuration writes it in `required_providers`, used as the key of the
    /// `TF_REATTACH_PROVIDERS` entry printed in debug mode. A short `namespace/type` address (e.g. `example/thing`)
    /// works with both CLIs: each resolves it against its own default registry (`registry.terraform.io` for
    /// Terraform, `registry.opentofu.org` for OpenTofu), exactly as it resolves the configuration's `source`.
    pub provider_address: String,
    /// Debug mode: serve without a plugin host and print a `TF_REATTACH_PROVIDERS` value instead of the handshake.
    pub debug: bool,
}

impl ServeOptions {
    /// Options for the provider at `provider_address` (see [`ServeOptions::provider_address`]).
    pub fn new(provider_address: impl Into<String>) -> Self {
        Self {
            provider_address: provider_address.into(),
            debug: false,
        }
    }

    /// Sets debug mode.
    pub fn debug(mut self, debug: bool) -> Self {
        self.debug = debug;
        self
    }
}

/// Serves `provider` as configured by the environment (see the module docs) until Terraform shuts it down.
pub async fn serve(provider: Arc<dyn Provider>, opts: ServeOptions) -> Result<(), ServeError> {
    if opts.debug {
        return serve_debug(provider, &opts).await;
    }
    if std::env::var(MAGIC_COOKIE_KEY).ok().as_deref() != Some(MAGIC_COOKIE_VALUE) {
        return Err(ServeError::NotStartedByTerraform);
    }
    negotiate_protocol(std::env::var("PLUGIN_PROTOCOL_VERSIONS").ok().as_deref())?;
    let cfg = ListenConfig::from_env()?;
    if cfg.client_cert_pem.is_none() {
        return Err(ServeError::ClientCertRequired);
    }
    // Listen for interrupts before the host can send one (the default action would kill the process).
    let mut interrupts = Interrupts::new()?;
    let server = start(provider, cfg).await?;
    {
        let mut out = io::stdout().lock();
        writeln!(out, "{}", server.handshake_line())?;
        out.flush()?;
    }
    info!(address = %server.addr(), tls = server.server_cert().is_some(), "plugin server started");
    // The host forwards interrupts as StopProvider and shuts us down; ignore the signal itself, as go-plugin does.
    let ignore_interrupts = tokio::spawn(async move {
        while interrupts.next().await.is_ok() {
            debug!("interrupt received, ignoring (the plugin host manages shutdown)");
        }
    });
    let result = server.wait().await;
    ignore_interrupts.abort();
    info!("plugin server stopped");
    result
}

/// Interrupts (SIGINT / Ctrl-C), registered when created so that none is missed afterwards.
struct Interrupts {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
}

impl Interrupts {
    fn new() -> io::Result<Self> {
        Ok(Self {
            #[cfg(unix)]
            signal: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?,
        })
    }

    /// The next interrupt.
    async fn next(&mut self) -> io::Result<()> {
        #[cfg(unix)]
        {
            match self.signal.recv().await {
                Some(()) => Ok(()),
                None => Err(io::Error::other("signal stream ended")),
            }
        }
        #[cfg(not(unix))]
        {
            tokio::signal::ctrl_c().await
        }
    }
}

async fn serve_debug(provider: Arc<dyn Provider>, opts: &ServeOptions) -> Result<(), ServeError> {
    let mut cfg = ListenConfig::from_env()?;
    // A reattach entry cannot carry certificates: Terraform and OpenTofu connect in plaintext, over the socket in
    // the private directory.
    cfg.client_cert_pem = None;
    cfg.honour_shutdown = false;
    let mut interrupts = Interrupts::new()?;
    let server = start(provider, cfg).await?;
    {
        let mut out = io::stdout().lock();
        writeln!(
            out,
            "Provider started. To attach Terraform or OpenTofu, set TF_REATTACH_PROVIDERS in their environment:\n\n\
             \tTF_REATTACH_PROVIDERS='{}'\n\n\
             Press Ctrl-C to stop the provider.",
            server.reattach_json(&opts.provider_address)
        )?;
        out.flush()?;
    }
    info!(address = %server.addr(), "debug plugin server started");
    let RunningServer { shutdown, task, .. } = server;
    tokio::pin!(task);
    tokio::select! {
        r = interrupts.next() => r?,
        // The server only stops by itself on failure.
        r = &mut task => return r?,
    }
    info!("interrupt received, stopping");
    // The receiver lives in the server task, which is awaited next.
    let _ = shutdown.send(true);
    task.await?
}

/// Checks that the host offers protocol 6 (`PLUGIN_PROTOCOL_VERSIONS` is a comma-separated list; absent = any).
pub fn negotiate_protocol(offered: Option<&str>) -> Result<u32, ServeError> {
    let Some(list) = offered.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(PROTOCOL_VERSION);
    };
    if list
        .split(',')
        .any(|v| v.trim().parse::<u32>().ok() == Some(PROTOCOL_VERSION))
    {
        Ok(PROTOCOL_VERSION)
    } else {
        Err(ServeError::UnsupportedProtocol(list.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_negotiation() {
        assert_eq!(negotiate_protocol(None).ok(), Some(6));
        assert_eq!(negotiate_protocol(Some("")).ok(), Some(6));
        assert_eq!(negotiate_protocol(Some("5,6")).ok(), Some(6));
        assert!(negotiate_protocol(Some("4,5")).is_err());
    }
}
