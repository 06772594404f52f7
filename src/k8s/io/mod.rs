//! Reads and writes against the API server: LISTs, server-side apply with the provider's field
//! manager, deletes, and one retry policy for all of them.
//!
//! | File | What it is |
//! |---|---|
//! | `retry.rs` | The one retry policy ([`with_retry`]) and its bounds |
//! | `error.rs` | [`IoError`]: the verb, the object, the HTTP code and the cause |
//! | `list.rs` | LISTs: of objects, one request per namespace ([`list_each`]); of metadata, paginated within a [`ReadBudget`] ([`list_metadata_each`]); of objects others may bloat, paginated within a budget, each within a cap ([`list_bounded_each`], [`list_bounded`]) |
//! | `decode.rs` | Every answer decoded depth-safe ([`decode_object`]), a LIST's item by item; the items that do not decode ([`Undecodable`]) |
//! | `get.rs` | Reads of one object by name |
//! | `discovery.rs` | Discovery: the versions of a group the server serves (and the one it prefers), the resources of one version |
//! | `server_side_apply.rs` | Server-side apply, and adoption ([`take_ownership`]) |
//! | `delete.rs` | Deletes, with the owner's UID as a precondition ([`delete_owned`]) |
//! | `patch.rs` | Labels removed by a merge patch guarded by the owner's UID ([`remove_labels`]) |
//! | `target.rs` | Where an object lives: its [`api`] and the names its errors give it |
//!
//! # Retries
//!
//! There is exactly one retry layer: [`with_retry`]. Clients made by [`client`] have kube's own retry layer
//! turned off (it would otherwise retry 429/503/504 up to 15 times *inside* each of our attempts). What is
//! retried, how often and for how long: `retry.rs`.
//!
//! When the retries are exhausted the [`IoError`] names the verb, the kind and `namespace/name` (or the
//! collection), keeps the HTTP code, and chains the cause ([`IoCause`]).

mod decode;
mod delete;
mod discovery;
mod error;
mod get;
mod list;
mod patch;
mod retry;
mod server_side_apply;
mod target;

use kube::Client;

pub use decode::{ItemCap, PAGE_SIZE, Undecodable, decode_object};
pub use delete::{Deleted, delete, delete_owned};
pub use discovery::{DISCOVERY_BYTES, group_versions, preferred_version, serves};
pub use error::{IoCause, IoError};
pub use get::{Got, get, get_by_list, get_metadata, get_metadata_opt, get_opt};
pub use list::{
    ANSWER_BYTES, OWNED_BYTES, RUN_BYTES, ReadBudget, list, list_bounded, list_bounded_each,
    list_cluster_scoped, list_each, list_metadata, list_metadata_each,
};
pub use patch::{Patched, remove_labels};
pub use retry::{ATTEMPT_TIMEOUT, MAX_ATTEMPTS, OPERATION_BOUND, RETRY_WINDOW, with_retry};
pub use server_side_apply::{server_side_apply, take_ownership};
pub use target::api;

/// The body of the answer to `request`, read to at most `cap` bytes: `None` when it is longer (the rest is not
/// read). Without a cap, the whole body. An error answer (4xx, 5xx) is the API server's Status, as
/// [`Client::request_text`] gives it.
async fn capped_text(
    client: &Client,
    request: http::Request<Vec<u8>>,
    cap: Option<usize>,
) -> Result<Option<String>, kube::Error> {
    use futures::AsyncReadExt;
    let Some(cap) = cap else {
        return client.request_text(request).await.map(Some);
    };
    let body = client.request_stream(request).await?;
    let mut bytes = Vec::new();
    Box::pin(body)
        .take(cap as u64 + 1)
        .read_to_end(&mut bytes)
        .await
        // A transport failure while reading the body: retried, as the client's own failures are.
        .map_err(|e| kube::Error::Service(Box::new(e)))?;
    if bytes.len() > cap {
        return Ok(None);
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(kube::Error::FromUtf8)
}

/// Builds the client for `config` with kube's own retry layer turned off: [`with_retry`] is the only one.
///
/// Without a proxy the client is kube's stack as `Client::try_from` builds it (the TLS connector of `config`, its
/// timeouts, the cluster URL, authentication and impersonation headers, in kube's order) on a TCP connector that
/// sets `TCP_NODELAY`, which kube's leaves off. With Nagle's algorithm on, the first request on each new
/// connection waits for the API server's delayed ACK of the TLS handshake's last flight (about 40 ms on Linux):
/// measured, such waits were about half of a no-change plan of ten clusters (CHANGELOG). Left out of kube's
/// stack: its tracing layer (whose events `main.rs` turns off anyway) and the client's `valid_until` (nothing
/// here reads it). Through a proxy (`proxy_url`) the client is kube's as it is.
pub fn client(mut config: kube::Config) -> Result<Client, kube::Error> {
    use hyper_util::{client::legacy::connect::HttpConnector, rt::TokioExecutor};
    use kube::client::ConfigExt;
    use tower::ServiceBuilder;

    config.default_retry = false;
    if config.proxy_url.is_some() {
        return Client::try_from(config);
    }
    // First, as kube does: building the TLS connector may run an exec plugin for a client certificate, and a
    // failing plugin then fails here, once.
    let auth = config.auth_layer()?;
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Only fails when another thread installed one meanwhile: either is aws-lc.
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    }
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false);
    tcp.set_nodelay(true);
    let mut connector =
        hyper_timeout::TimeoutConnector::new(config.rustls_https_connector_with_connector(tcp)?);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let http = hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build(connector);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(auth)
        .layer(config.extra_headers_layer()?)
        .map_err(tower::BoxError::from)
        .service(http);
    Ok(Client::new(service, config.default_namespace))
}

#[cfg(all(test, target_os = "linux"))]
mod nodelay_tests {
    use std::io::{Read, Write};

    /// For each of this process's TCP sockets connected to `port`: whether it has `TCP_NODELAY`.
    fn sockets_to(port: u16) -> Vec<bool> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
            let Ok(fd) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            // SAFETY: getpeername and getsockopt only write into the buffers given, of the sizes given.
            unsafe {
                let mut addr: libc::sockaddr_in = std::mem::zeroed();
                let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
                if libc::getpeername(fd, &mut addr as *mut _ as *mut libc::sockaddr, &mut len) != 0
                    || addr.sin_family != libc::AF_INET as libc::sa_family_t
                    || u16::from_be(addr.sin_port) != port
                {
                    continue;
                }
                let (mut on, mut len): (libc::c_int, libc::socklen_t) = (0, 4);
                let got = libc::getsockopt(
                    fd,
                    libc::IPPROTO_TCP,
                    libc::TCP_NODELAY,
                    &mut on as *mut _ as *mut libc::c_void,
                    &mut len,
                );
                assert_eq!(got, 0);
                found.push(on != 0);
            }
        }
        found
    }

    #[tokio::test]
    async fn the_client_connects_with_nagle_off() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = conn.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            conn.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}",
            )
            .unwrap();
            // Held open until the sockets were looked at.
            let _ = done_rx.recv();
        });
        let config = kube::Config::new(format!("http://127.0.0.1:{port}").parse().unwrap());
        let client = super::client(config).unwrap();
        let request = http::Request::get("/version").body(Vec::new()).unwrap();
        assert_eq!(client.request_text(request).await.unwrap(), "{}");
        let sockets = sockets_to(port);
        done_tx.send(()).unwrap();
        server.join().unwrap();
        assert_eq!(sockets, vec![true], "one connection, TCP_NODELAY set");
    }
}
