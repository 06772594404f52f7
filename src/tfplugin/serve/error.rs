//! Why serving failed.

use crate::tfplugin::tls::TlsError;
use std::io;
use std::path::PathBuf;

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
