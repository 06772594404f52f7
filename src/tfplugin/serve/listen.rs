//! Where the server listens: the transport, the private socket directory, binding, the accepted connection.

use super::{SOCKET_NAME, ServeError};
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tracing::debug;

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

/// A directory only this user can enter, removed (with the socket in it) on drop.
pub(super) struct PrivateDir {
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
pub(super) enum Listener {
    Tcp(TcpListener),
    #[cfg(unix)]
    Unix(tokio::net::UnixListener),
}

impl Listener {
    /// The next connection and a description of its peer for logs.
    pub(super) async fn accept(&self) -> io::Result<(Box<dyn Io>, String)> {
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
pub(super) async fn bind(
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

/// A byte stream the server can serve on: TCP, Unix socket, or TLS over either.
pub(super) trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

/// An accepted connection, plain or TLS.
pub(super) struct Conn(pub(super) Box<dyn Io>);

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
