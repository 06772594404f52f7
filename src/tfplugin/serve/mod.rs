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

use super::pb::plugin as goplugin;
use super::pb::tfplugin6::provider_server::ProviderServer;
use super::provider::Provider;
use super::server::ProviderService;
use super::tls::{self, TlsError};
use base64::Engine as _;
use rustls::pki_types::CertificateDer;
use std::fmt;
use std::io::{self, Write as _};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

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

/// Why serving failed.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Not started by Terraform / OpenTofu (the magic cookie is missing).
    #[error(
        "This binary is a plugin for Terraform and OpenTofu. It is not meant to be run directly:\n\
         run `terraform` or `tofu` instead, which start it automatically.\n\n\
         To debug the provider, run it with --debug and follow the instructions it prints\n\
         (export the TF_REATTACH_PROVIDERS value it shows, then run terraform/tofu in the same shell)."
    )]
    NotStartedByTerraform,
    /// The host does not speak protocol 6.
    #[error(
        "the plugin host offers protocol versions {0:?}, but this provider only supports protocol 6"
    )]
    UnsupportedProtocol(String),
    /// The host sent no client certificate, so the connection could not be authenticated.
    #[error(
        "PLUGIN_CLIENT_CERT is not set: refusing to serve without the plugin host's client certificate \
         (Terraform and OpenTofu always send one; to run the provider by hand, use --debug)"
    )]
    ClientCertRequired,
    /// `PLUGIN_MIN_PORT` or `PLUGIN_MAX_PORT` is not a port number.
    #[error("{name}={value:?} is not a port number")]
    PortVariable {
        /// The variable's name.
        name: &'static str,
        /// Its value.
        value: String,
        /// Why it did not parse.
        #[source]
        source: std::num::ParseIntError,
    },
    /// `PLUGIN_MIN_PORT` is above `PLUGIN_MAX_PORT`.
    #[error("PLUGIN_MIN_PORT {min} is greater than PLUGIN_MAX_PORT {max}")]
    PortRange {
        /// Lowest port.
        min: u16,
        /// Highest port.
        max: u16,
    },
    /// No port in the range could be bound.
    #[error("cannot listen: no free port between {min} and {max}")]
    NoFreePort {
        /// Lowest port.
        min: u16,
        /// Highest port.
        max: u16,
    },
    /// The private socket directory could not be created.
    #[error("cannot create a private socket directory under {}: {source}", parent.display())]
    SocketDir {
        /// Where it was to be created.
        parent: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// Binding the listener failed.
    #[error("cannot listen on {what}: {source}")]
    Bind {
        /// The socket path or address.
        what: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// TLS setup failed.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// I/O failure (writing the handshake, waiting for signals).
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// The gRPC server failed.
    #[error("gRPC server error: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The server task panicked or was cancelled.
    #[error("server task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A Unix socket in a fresh directory of mode 0700 created under `parent` (default: the temporary directory);
    /// the directory is removed when the server stops. Only on Unix platforms.
    Unix {
        /// The directory in which the private directory is created.
        parent: Option<PathBuf>,
    },
    /// TCP on 127.0.0.1, on the first free port of `min_port..=max_port` (both 0: any free port).
    Tcp {
        /// Lowest port to try.
        min_port: u16,
        /// Highest port to try.
        max_port: u16,
    },
}

impl Default for Transport {
    /// A Unix socket where the platform has them, else TCP on loopback (as go-plugin).
    fn default() -> Self {
        if cfg!(unix) {
            Transport::Unix { parent: None }
        } else {
            Transport::Tcp {
                min_port: 0,
                max_port: 0,
            }
        }
    }
}

/// The address a server listens on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddr {
    /// A Unix socket path.
    Unix(PathBuf),
    /// A loopback TCP address.
    Tcp(SocketAddr),
}

impl ListenAddr {
    /// go-plugin's network name: `unix` or `tcp`.
    pub fn network(&self) -> &'static str {
        match self {
            ListenAddr::Unix(_) => "unix",
            ListenAddr::Tcp(_) => "tcp",
        }
    }
}

impl fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddr::Unix(p) => write!(f, "{}", p.display()),
            ListenAddr::Tcp(a) => write!(f, "{a}"),
        }
    }
}

/// Listening parameters for [`start`].
#[derive(Debug, Clone, Default)]
pub struct ListenConfig {
    /// The host's client certificate (PEM); enables mutual TLS pinned to it.
    pub client_cert_pem: Option<Vec<u8>>,
    /// Where to listen.
    pub transport: Transport,
    /// Whether `GRPCController.Shutdown` stops the server (false in debug mode).
    pub honour_shutdown: bool,
}

impl ListenConfig {
    /// Reads `PLUGIN_CLIENT_CERT`, and `PLUGIN_UNIX_SOCKET_DIR` (Unix) or `PLUGIN_MIN_PORT` / `PLUGIN_MAX_PORT`
    /// (elsewhere).
    pub fn from_env() -> Result<Self, ServeError> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let port = |name: &'static str| -> Result<u16, ServeError> {
            match var(name) {
                Some(v) => v.trim().parse().map_err(|source| ServeError::PortVariable {
                    name,
                    value: v,
                    source,
                }),
                None => Ok(0),
            }
        };
        let transport = match Transport::default() {
            Transport::Unix { .. } => Transport::Unix {
                parent: var("PLUGIN_UNIX_SOCKET_DIR").map(PathBuf::from),
            },
            Transport::Tcp { .. } => Transport::Tcp {
                min_port: port("PLUGIN_MIN_PORT")?,
                max_port: port("PLUGIN_MAX_PORT")?,
            },
        };
        Ok(Self {
            client_cert_pem: var("PLUGIN_CLIENT_CERT").map(String::into_bytes),
            transport,
            honour_shutdown: true,
        })
    }
}

/// A running server.
pub struct RunningServer {
    addr: ListenAddr,
    server_cert: Option<CertificateDer<'static>>,
    shutdown: watch::Sender<bool>,
    task: JoinHandle<Result<(), ServeError>>,
}

impl RunningServer {
    /// The address served.
    pub fn addr(&self) -> &ListenAddr {
        &self.addr
    }

    /// The generated server certificate (DER), when serving TLS.
    pub fn server_cert(&self) -> Option<&CertificateDer<'static>> {
        self.server_cert.as_ref()
    }

    /// The go-plugin handshake line (without the newline).
    pub fn handshake_line(&self) -> String {
        let cert = self
            .server_cert
            .as_ref()
            .map(|c| base64::engine::general_purpose::STANDARD_NO_PAD.encode(c.as_ref()))
            .unwrap_or_default();
        format!(
            "{CORE_PROTOCOL_VERSION}|{PROTOCOL_VERSION}|{}|{}|grpc|{cert}",
            self.addr.network(),
            self.addr
        )
    }

    /// The `TF_REATTACH_PROVIDERS` JSON for this server, keyed by `provider_address` (see
    /// [`ServeOptions::provider_address`]).
    pub fn reattach_json(&self, provider_address: &str) -> String {
        serde_json::json!({
            provider_address: {
                "Protocol": "grpc",
                "ProtocolVersion": PROTOCOL_VERSION,
                "Pid": std::process::id(),
                "Test": true,
                "Addr": { "Network": self.addr.network(), "String": self.addr.to_string() },
            }
        })
        .to_string()
    }

    /// Asks the server to stop (as `GRPCController.Shutdown` does).
    pub fn shutdown(&self) {
        // Sending fails only when the server already stopped.
        let _ = self.shutdown.send(true);
    }

    /// Waits until the server has stopped (and its socket directory is gone).
    pub async fn wait(self) -> Result<(), ServeError> {
        self.task.await?
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

/// A directory only this user can enter, removed (with the socket in it) on drop.
struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    /// Creates a fresh directory of mode 0700 under `parent`. `mkdir` fails on an existing name (symlinks
    /// included), so a name planted by someone else is never used.
    #[cfg(unix)]
    fn create(parent: &Path) -> io::Result<Self> {
        use std::hash::{BuildHasher as _, Hasher as _};
        use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
        let mut last = io::Error::other("no attempt made");
        for attempt in 0u32..32 {
            // RandomState is seeded randomly per process; the name only needs to be hard to guess ahead of time.
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u32(attempt);
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            let path = parent.join(format!("tfplugin-{:016x}", h.finish()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    let dir = Self { path };
                    // The umask may have removed bits the owner needs; never adds any for others.
                    std::fs::set_permissions(&dir.path, std::fs::Permissions::from_mode(0o700))?;
                    return Ok(dir);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            debug!(error = %e, "removing the socket directory failed");
        }
    }
}

/// A bound listener of either kind.
enum Listener {
    Tcp(TcpListener),
    #[cfg(unix)]
    Unix(tokio::net::UnixListener),
}

impl Listener {
    /// The next connection and a description of its peer for logs.
    async fn accept(&self) -> io::Result<(Box<dyn Io>, String)> {
        match self {
            Listener::Tcp(l) => {
                let (stream, peer) = l.accept().await?;
                if let Err(e) = stream.set_nodelay(true) {
                    debug!(error = %e, "TCP_NODELAY not set");
                }
                Ok((Box::new(stream), peer.to_string()))
            }
            #[cfg(unix)]
            Listener::Unix(l) => {
                let (stream, _) = l.accept().await?;
                Ok((Box::new(stream), "unix socket peer".to_owned()))
            }
        }
    }
}

async fn bind_tcp(min_port: u16, max_port: u16) -> Result<TcpListener, ServeError> {
    let bind_err = |port: u16| {
        move |source| ServeError::Bind {
            what: format!("127.0.0.1:{port}"),
            source,
        }
    };
    if min_port == 0 && max_port == 0 {
        return TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(bind_err(0));
    }
    let (min, max) = (
        min_port.max(1),
        if max_port == 0 { u16::MAX } else { max_port },
    );
    if min > max {
        return Err(ServeError::PortRange { min, max });
    }
    for port in min..=max {
        if let Ok(l) = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await {
            return Ok(l);
        }
    }
    Err(ServeError::NoFreePort { min, max })
}

/// Binds the listener for `transport`; the private directory, if any, must outlive the server.
async fn bind(
    transport: &Transport,
) -> Result<(Listener, ListenAddr, Option<PrivateDir>), ServeError> {
    match transport {
        Transport::Tcp { min_port, max_port } => {
            let l = bind_tcp(*min_port, *max_port).await?;
            let addr = l.local_addr().map_err(ServeError::Io)?;
            Ok((Listener::Tcp(l), ListenAddr::Tcp(addr), None))
        }
        #[cfg(unix)]
        Transport::Unix { parent } => {
            let parent = parent.clone().unwrap_or_else(std::env::temp_dir);
            let dir = PrivateDir::create(&parent)
                .map_err(|source| ServeError::SocketDir { parent, source })?;
            let path = dir.path.join(SOCKET_NAME);
            let l = tokio::net::UnixListener::bind(&path).map_err(|source| ServeError::Bind {
                what: path.display().to_string(),
                source,
            })?;
            Ok((Listener::Unix(l), ListenAddr::Unix(path), Some(dir)))
        }
        #[cfg(not(unix))]
        Transport::Unix { .. } => Err(ServeError::Bind {
            what: "a Unix socket".to_owned(),
            source: io::Error::from(io::ErrorKind::Unsupported),
        }),
    }
}

/// Starts serving `provider` and returns once listening.
pub async fn start(
    provider: Arc<dyn Provider>,
    cfg: ListenConfig,
) -> Result<RunningServer, ServeError> {
    let (tls_config, server_cert) = match &cfg.client_cert_pem {
        Some(pem) => {
            let client_cert = tls::parse_pem_cert(pem)?;
            let identity = tls::generate_server_identity()?;
            let config = tls::server_config(&identity, client_cert)?;
            (Some(Arc::new(config)), Some(identity.cert))
        }
        None => (None, None),
    };
    let (listener, addr, private_dir) = bind(&cfg.transport).await?;
    let (shutdown_tx, shutdown_rx) = watch::channel(false);

    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    health_reporter
        .set_service_status("plugin", tonic_health::ServingStatus::Serving)
        .await;

    let provider_service = ProviderServer::new(ProviderService::new(provider))
        .max_decoding_message_size(MAX_MESSAGE_SIZE)
        .max_encoding_message_size(MAX_MESSAGE_SIZE);
    let controller = goplugin::grpc_controller_server::GrpcControllerServer::new(Controller {
        shutdown: shutdown_tx.clone(),
        honour: cfg.honour_shutdown,
    });
    let stdio = goplugin::grpc_stdio_server::GrpcStdioServer::new(Stdio {
        shutdown: shutdown_rx.clone(),
    });

    let (conn_tx, conn_rx) = mpsc::channel::<io::Result<Conn>>(16);
    let accept_task = tokio::spawn(accept_loop(listener, tls_config, conn_tx));
    let incoming = tokio_stream::wrappers::ReceiverStream::new(conn_rx);

    let mut signal_rx = shutdown_rx.clone();
    let mut grace_rx = shutdown_rx;
    let task = tokio::spawn(async move {
        // Owned by the task: the socket directory goes when the server stops.
        let _private_dir = private_dir;
        let server = tonic::transport::Server::builder()
            .add_service(health_service)
            .add_service(controller)
            .add_service(stdio)
            .add_service(provider_service)
            .serve_with_incoming_shutdown(incoming, async move {
                // An error means the sender is gone, which also means stop.
                let _ = signal_rx.wait_for(|stop| *stop).await;
            });
        tokio::pin!(server);
        let result = tokio::select! {
            r = &mut server => r.map_err(ServeError::from),
            _ = async {
                let _ = grace_rx.wait_for(|stop| *stop).await;
                tokio::time::sleep(SHUTDOWN_GRACE).await;
            } => {
                debug!("in-flight calls did not finish within the shutdown grace period");
                Ok(())
            }
        };
        accept_task.abort();
        result
    });
    Ok(RunningServer {
        addr,
        server_cert,
        shutdown: shutdown_tx,
        task,
    })
}

async fn accept_loop(
    listener: Listener,
    tls: Option<Arc<rustls::ServerConfig>>,
    tx: mpsc::Sender<io::Result<Conn>>,
) {
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let tx = tx.clone();
        match &acceptor {
            None => {
                if tx.send(Ok(Conn(stream))).await.is_err() {
                    return;
                }
            }
            Some(acceptor) => {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await
                    {
                        Ok(Ok(tls)) => {
                            // Fails only once the server stopped accepting.
                            let _ = tx.send(Ok(Conn(Box::new(tls)))).await;
                        }
                        Ok(Err(e)) => warn!(%peer, error = %e, "TLS handshake refused"),
                        Err(_) => warn!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        }
    }
}

/// A byte stream the server can serve on: TCP, Unix socket, or TLS over either.
trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

/// An accepted connection, plain or TLS.
struct Conn(Box<dyn Io>);

impl tonic::transport::server::Connected for Conn {
    type ConnectInfo = ();
    fn connect_info(&self) -> Self::ConnectInfo {}
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }
}

/// `GRPCController`: the host asks the plugin to exit.
struct Controller {
    shutdown: watch::Sender<bool>,
    honour: bool,
}

#[tonic::async_trait]
impl goplugin::grpc_controller_server::GrpcController for Controller {
    async fn shutdown(
        &self,
        _req: tonic::Request<goplugin::Empty>,
    ) -> Result<tonic::Response<goplugin::Empty>, tonic::Status> {
        if self.honour {
            info!("shutdown requested by the plugin host");
            let _ = self.shutdown.send(true);
        } else {
            debug!("ignoring shutdown request in debug mode");
        }
        Ok(tonic::Response::new(goplugin::Empty {}))
    }
}

/// `GRPCStdio`: logs go to stderr directly, so the stream carries nothing and ends at shutdown.
struct Stdio {
    shutdown: watch::Receiver<bool>,
}

#[tonic::async_trait]
impl goplugin::grpc_stdio_server::GrpcStdio for Stdio {
    type StreamStdioStream = Pin<
        Box<
            dyn futures::Stream<Item = Result<goplugin::StdioData, tonic::Status>> + Send + 'static,
        >,
    >;

    async fn stream_stdio(
        &self,
        _req: tonic::Request<()>,
    ) -> Result<tonic::Response<Self::StreamStdioStream>, tonic::Status> {
        use futures::StreamExt as _;
        let mut rx = self.shutdown.clone();
        let stream = futures::stream::once(async move {
            let _ = rx.wait_for(|stop| *stop).await;
        })
        .filter_map(|()| async { None });
        Ok(tonic::Response::new(Box::pin(stream)))
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
