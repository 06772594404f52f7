//! Serving a provider the way go-plugin hosts (Terraform, OpenTofu) expect.
//!
//! * Normal mode ([`serve`]): refuse to run without the magic cookie; negotiate protocol 6 from
//!   `PLUGIN_PROTOCOL_VERSIONS`; listen on loopback within `PLUGIN_MIN_PORT..=PLUGIN_MAX_PORT`; with
//!   `PLUGIN_CLIENT_CERT`, serve mutual TLS pinned to that certificate; print exactly one handshake line
//!   `1|6|tcp|127.0.0.1:PORT|grpc|<base64 server cert>` on stdout; serve until `GRPCController.Shutdown`.
//!   Interrupts are ignored (the host forwards Ctrl-C as `StopProvider` and then shuts the plugin down).
//! * Debug mode (`ServeOptions::debug`): no TLS, print a ready-to-paste `TF_REATTACH_PROVIDERS` value, serve until
//!   Ctrl-C (controller shutdowns are ignored, so several CLI runs can reuse the process).
//!
//! [`start`] is the same server without the environment handling, for tests and embedding.

use super::pb::plugin as goplugin;
use super::pb::tfplugin6::provider_server::ProviderServer;
use super::provider::Provider;
use super::server::ProviderService;
use super::tls::{self, TlsError};
use base64::Engine as _;
use rustls::pki_types::CertificateDer;
use std::io::{self, Write as _};
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
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

/// How to serve a provider.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The provider's registry address, e.g. `registry.terraform.io/example/thing` (used in debug mode output).
    pub provider_address: String,
    /// Debug mode: serve without TLS and print a `TF_REATTACH_PROVIDERS` value instead of the handshake.
    pub debug: bool,
}

impl ServeOptions {
    /// Options for the provider at `provider_address`.
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
    /// `PLUGIN_MIN_PORT` / `PLUGIN_MAX_PORT` are invalid or no port in the range is free.
    #[error("cannot listen: {0}")]
    Listen(String),
    /// TLS setup failed.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// I/O failure.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// The gRPC server failed.
    #[error("gRPC server error: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The server task panicked or was cancelled.
    #[error("server task failed: {0}")]
    Task(String),
}

/// Listening parameters for [`start`].
#[derive(Debug, Clone, Default)]
pub struct ListenConfig {
    /// The host's client certificate (PEM); enables mutual TLS pinned to it.
    pub client_cert_pem: Option<Vec<u8>>,
    /// Lowest port to try (0 together with `max_port == 0`: any free port).
    pub min_port: u16,
    /// Highest port to try.
    pub max_port: u16,
    /// Whether `GRPCController.Shutdown` stops the server (false in debug mode).
    pub honour_shutdown: bool,
}

impl ListenConfig {
    /// Reads `PLUGIN_CLIENT_CERT`, `PLUGIN_MIN_PORT` and `PLUGIN_MAX_PORT`.
    pub fn from_env() -> Result<Self, ServeError> {
        let port = |name: &str| -> Result<u16, ServeError> {
            match std::env::var(name) {
                Ok(v) if !v.trim().is_empty() => v
                    .trim()
                    .parse()
                    .map_err(|_| ServeError::Listen(format!("{name}={v:?} is not a port number"))),
                _ => Ok(0),
            }
        };
        let client_cert_pem = std::env::var("PLUGIN_CLIENT_CERT")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .map(String::into_bytes);
        Ok(Self {
            client_cert_pem,
            min_port: port("PLUGIN_MIN_PORT")?,
            max_port: port("PLUGIN_MAX_PORT")?,
            honour_shutdown: true,
        })
    }
}

/// A running server.
pub struct RunningServer {
    addr: SocketAddr,
    server_cert: Option<CertificateDer<'static>>,
    shutdown: watch::Sender<bool>,
    task: JoinHandle<Result<(), ServeError>>,
}

impl RunningServer {
    /// The loopback address served.
    pub fn addr(&self) -> SocketAddr {
        self.addr
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
            "{CORE_PROTOCOL_VERSION}|{PROTOCOL_VERSION}|tcp|{}|grpc|{cert}",
            self.addr
        )
    }

    /// The `TF_REATTACH_PROVIDERS` JSON for this server and `provider_address`.
    pub fn reattach_json(&self, provider_address: &str) -> String {
        serde_json::json!({
            provider_address: {
                "Protocol": "grpc",
                "ProtocolVersion": PROTOCOL_VERSION,
                "Pid": std::process::id(),
                "Test": true,
                "Addr": { "Network": "tcp", "String": self.addr.to_string() },
            }
        })
        .to_string()
    }

    /// Asks the server to stop (as `GRPCController.Shutdown` does).
    pub fn shutdown(&self) {
        let _ = self.shutdown.send(true);
    }

    /// Waits until the server has stopped.
    pub async fn wait(self) -> Result<(), ServeError> {
        self.task
            .await
            .map_err(|e| ServeError::Task(e.to_string()))?
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
    let server = start(provider, ListenConfig::from_env()?).await?;
    {
        let mut out = io::stdout().lock();
        writeln!(out, "{}", server.handshake_line())?;
        out.flush()?;
    }
    info!(address = %server.addr(), tls = server.server_cert().is_some(), "plugin server started");
    // The host forwards interrupts as StopProvider and shuts us down; ignore the signal itself, as go-plugin does.
    let ignore_interrupts = tokio::spawn(async {
        while tokio::signal::ctrl_c().await.is_ok() {
            debug!("interrupt received, ignoring (the plugin host manages shutdown)");
        }
    });
    let result = server.wait().await;
    ignore_interrupts.abort();
    info!("plugin server stopped");
    result
}

async fn serve_debug(provider: Arc<dyn Provider>, opts: &ServeOptions) -> Result<(), ServeError> {
    let server = start(
        provider,
        ListenConfig {
            honour_shutdown: false,
            ..ListenConfig::default()
        },
    )
    .await?;
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
        r = tokio::signal::ctrl_c() => r?,
        // The server only stops by itself on failure.
        r = &mut task => return r.map_err(|e| ServeError::Task(e.to_string()))?,
    }
    info!("interrupt received, stopping");
    let _ = shutdown.send(true);
    task.await.map_err(|e| ServeError::Task(e.to_string()))?
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

async fn bind(min_port: u16, max_port: u16) -> Result<TcpListener, ServeError> {
    if min_port == 0 && max_port == 0 {
        return Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?);
    }
    let (lo, hi) = (
        min_port.max(1),
        if max_port == 0 { u16::MAX } else { max_port },
    );
    if lo > hi {
        return Err(ServeError::Listen(format!(
            "PLUGIN_MIN_PORT {lo} is greater than PLUGIN_MAX_PORT {hi}"
        )));
    }
    for port in lo..=hi {
        if let Ok(l) = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await {
            return Ok(l);
        }
    }
    Err(ServeError::Listen(format!(
        "no free port between {lo} and {hi}"
    )))
}

/// Starts serving `provider` on loopback and returns once listening.
pub async fn start(
    provider: Arc<dyn Provider>,
    cfg: ListenConfig,
) -> Result<RunningServer, ServeError> {
    let listener = bind(cfg.min_port, cfg.max_port).await?;
    let addr = listener.local_addr()?;
    let (tls_config, server_cert) = match &cfg.client_cert_pem {
        Some(pem) => {
            let client_cert = tls::parse_pem_cert(pem)?;
            let identity = tls::generate_server_identity()?;
            let config = tls::server_config(&identity, client_cert)?;
            (Some(Arc::new(config)), Some(identity.cert))
        }
        None => (None, None),
    };
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
        let server = tonic::transport::Server::builder()
            .tcp_nodelay(true)
            .add_service(health_service)
            .add_service(controller)
            .add_service(stdio)
            .add_service(provider_service)
            .serve_with_incoming_shutdown(incoming, async move {
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
    listener: TcpListener,
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
        let _ = stream.set_nodelay(true);
        let tx = tx.clone();
        match &acceptor {
            None => {
                if tx.send(Ok(Conn::Plain(stream))).await.is_err() {
                    return;
                }
            }
            Some(acceptor) => {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await
                    {
                        Ok(Ok(tls)) => {
                            let _ = tx.send(Ok(Conn::Tls(Box::new(tls)))).await;
                        }
                        Ok(Err(e)) => warn!(%peer, error = %e, "TLS handshake refused"),
                        Err(_) => warn!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        }
    }
}

/// An accepted connection, plain or TLS.
enum Conn {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>),
}

impl tonic::transport::server::Connected for Conn {
    type ConnectInfo = Option<SocketAddr>;
    fn connect_info(&self) -> Self::ConnectInfo {
        match self {
            Conn::Plain(s) => s.peer_addr().ok(),
            Conn::Tls(s) => s.get_ref().0.peer_addr().ok(),
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_flush(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Conn::Plain(s) => s.is_write_vectored(),
            Conn::Tls(s) => s.is_write_vectored(),
        }
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
