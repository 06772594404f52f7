//! The running server: TLS, the gRPC services (provider, health, controller, stdio), the accept loop, shutdown.

use super::listen::{Conn, ListenAddr, ListenConfig, Listener, bind};
use super::{
    CORE_PROTOCOL_VERSION, MAX_MESSAGE_SIZE, PROTOCOL_VERSION, SHUTDOWN_GRACE, ServeError,
    TLS_HANDSHAKE_TIMEOUT,
};
use crate::tfplugin::pb::plugin as goplugin;
use crate::tfplugin::pb::tfplugin6::provider_server::ProviderServer;
use crate::tfplugin::provider::Provider;
use crate::tfplugin::server::ProviderService;
use crate::tfplugin::tls;
use base64::Engine as _;
use rustls::pki_types::CertificateDer;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

/// A running server.
pub struct RunningServer {
    addr: ListenAddr,
    server_cert: Option<CertificateDer<'static>>,
    pub(super) shutdown: watch::Sender<bool>,
    pub(super) task: JoinHandle<Result<(), ServeError>>,
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

/// Starts serving `provider` and returns once listening.
pub async fn start(
    provider: Arc<dyn Provider>,
    cfg: ListenConfig,
) -> Result<RunningServer, ServeError> {
    let (tls_config, server_cert) = match &cfg.client_cert_pem {
        Some(pem) => {
            let (config, cert) = pinned_tls(pem)?;
            (Some(config), Some(cert))
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

    let router = tonic::transport::Server::builder()
        .add_service(health_service)
        .add_service(controller)
        .add_service(stdio)
        .add_service(provider_service);
    let task = tokio::spawn(async move {
        // Owned by the task: the socket directory goes when the server stops.
        let _private_dir = private_dir;
        let result = serve_until_shutdown(router, incoming, shutdown_rx).await;
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

/// A server configuration for mutual TLS that accepts only the client certificate in `client_cert_pem`, and the
/// certificate of the identity generated for it.
fn pinned_tls(
    client_cert_pem: &[u8],
) -> Result<(Arc<rustls::ServerConfig>, CertificateDer<'static>), ServeError> {
    let client_cert = tls::parse_pem_cert(client_cert_pem)?;
    let identity = tls::generate_server_identity()?;
    let config = tls::server_config(&identity, client_cert)?;
    Ok((Arc::new(config), identity.cert))
}

/// Serves `router` on `incoming` until `shutdown` says stop, then lets in-flight calls finish for at most
/// `SHUTDOWN_GRACE`.
async fn serve_until_shutdown(
    router: tonic::transport::server::Router,
    incoming: tokio_stream::wrappers::ReceiverStream<io::Result<Conn>>,
    shutdown: watch::Receiver<bool>,
) -> Result<(), ServeError> {
    let mut signal_rx = shutdown.clone();
    let mut grace_rx = shutdown;
    let server = router.serve_with_incoming_shutdown(incoming, async move {
        // An error means the sender is gone, which also means stop.
        let _ = signal_rx.wait_for(|stop| *stop).await;
    });
    tokio::pin!(server);
    tokio::select! {
        r = &mut server => r.map_err(ServeError::from),
        _ = async {
            let _ = grace_rx.wait_for(|stop| *stop).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => {
            debug!("in-flight calls did not finish within the shutdown grace period");
            Ok(())
        }
    }
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
