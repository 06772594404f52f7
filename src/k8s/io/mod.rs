//! Reads and writes against the API server: LISTs, server-side apply with the provider's field
//! manager, deletes, and one retry policy for all of them.
//!
//! | File | What it is |
//! |---|---|
//! | `retry.rs` | The one retry policy ([`with_retry`]) and its bounds |
//! | `error.rs` | [`IoError`]: the verb, the object, the HTTP code and the cause |
//! | `list.rs` | LISTs: of objects, one request per namespace ([`list_each`]); of metadata, paginated within a [`ReadBudget`] ([`list_metadata_each`], its first page sized to what the caller expects with [`list_metadata_expecting`]); of objects others may bloat, paginated within a budget, each within a cap ([`list_bounded_each`], [`list_bounded`]) |
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
    ANSWER_BYTES, FIRST_ANSWER_BYTES, FIRST_PAGE_ITEMS, OWNED_BYTES, RUN_BYTES, ReadBudget,
    first_page_items, list, list_bounded, list_bounded_each, list_cluster_scoped, list_each,
    list_metadata, list_metadata_each, list_metadata_expecting,
};
pub use patch::{Patched, remove_labels};
pub use retry::{ATTEMPT_TIMEOUT, MAX_ATTEMPTS, OPERATION_BOUND, RETRY_WINDOW, with_retry};
pub use server_side_apply::{server_side_apply, take_ownership};
pub use target::api;

/// The body of the answer to `request`, read to at most `cap` bytes: `None` when it is longer (the rest is not
/// read). Without a cap, the whole body. An error answer (4xx, 5xx) is the API server's Status, as
/// [`Client::request_text`] gives it. Each chunk is appended to one buffer as it arrives, and that buffer becomes
/// the text: `request_text` collects the chunks, copies them into one buffer and copies that into its text, which
/// holds two copies of the answer at once (2 x 12.6 MB for the LIST of 10,000 SveltosClusters); `read_to_end` would
/// fill the buffer's spare room with zeros, making all of it resident.
async fn capped_text(
    client: &Client,
    request: http::Request<Vec<u8>>,
    cap: Option<usize>,
) -> Result<Option<String>, kube::Error> {
    use futures::AsyncBufReadExt;
    let mut body = Box::pin(client.request_stream(request).await?);
    let mut bytes = Vec::new();
    loop {
        // A transport failure while reading the body: retried, as the client's own failures are.
        let chunk = body.fill_buf().await.map_err(body_error)?;
        if chunk.is_empty() {
            break;
        }
        let n = chunk.len();
        if cap.is_some_and(|cap| bytes.len() + n > cap) {
            return Ok(None);
        }
        bytes.extend_from_slice(chunk);
        body.consume_unpin(n);
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(kube::Error::FromUtf8)
}

/// A failure while reading an answer's body as kube's client had it: kube hands it over wrapped in an
/// `io::Error`, which is taken off (a transport failure then reads `ServiceError: ...`, once).
fn body_error(e: std::io::Error) -> kube::Error {
    e.downcast::<kube::Error>()
        .unwrap_or_else(|e| kube::Error::Service(Box::new(e)))
}

/// Builds the client for `config` with kube's own retry layer turned off: [`with_retry`] is the only one.
pub fn client(mut config: kube::Config) -> Result<Client, kube::Error> {
    config.default_retry = false;
    client_of(config)
}

/// Builds kube's client stack for `config` as `Client::try_from` does (the TLS connector of `config`, its
/// timeouts, an HTTP or HTTPS proxy's tunnel with its basic authentication, the cluster URL, kube's retry of
/// 429/503/504 answers when `default_retry`, authentication and impersonation headers, in kube's order), on a TCP
/// connector that sets `TCP_NODELAY`, which kube's leaves off. With Nagle's algorithm on, the first request on
/// each new connection waits for the delayed ACK of the TLS handshake's last flight (about 40 ms on Linux):
/// measured, such waits were about half of a no-change plan of ten clusters (CHANGELOG). Left out of kube's
/// stack: its tracing layer (whose events `main.rs` turns off anyway) and the client's `valid_until` (nothing
/// here reads it). A proxy of another scheme is kube's error, with the proxy URL's user information left out (kube
/// would print a password). The provider's clients come from [`client`]; the benchmark's raw client
/// (`baselines/limit`) comes from here, with kube's retry on.
pub fn client_of(config: kube::Config) -> Result<Client, kube::Error> {
    use hyper_util::client::legacy::connect::{HttpConnector, proxy::Tunnel};
    use kube::client::ConfigExt;

    // Before anything runs (an exec plugin for the TLS connector): a proxy this stack cannot use.
    if let Some(proxy) = &config.proxy_url
        && !matches!(proxy.scheme_str(), Some("http" | "https"))
    {
        return Err(unusable_proxy(proxy));
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
    match config.proxy_url.clone() {
        None => stack(config, auth, tcp),
        Some(proxy) if proxy.scheme_str() == Some("http") => {
            let tunnel = proxy_auth(&proxy, Tunnel::new(proxy.clone(), tcp));
            stack(config, auth, tunnel)
        }
        // https: any other scheme was refused above.
        Some(proxy) => {
            let tls = config.rustls_https_connector_with_connector(tcp)?;
            let tunnel = proxy_auth(&proxy, Tunnel::new(proxy.clone(), tls));
            stack(config, auth, tunnel)
        }
    }
}

/// kube's error for a proxy of a scheme other than `http` and `https` (socks5 is a kube feature not built in),
/// naming the proxy without its user information.
fn unusable_proxy(proxy: &http::Uri) -> kube::Error {
    let mut parts = http::uri::Parts::default();
    parts.scheme = proxy.scheme().cloned();
    parts.authority = proxy.authority().and_then(|a| {
        let host = a
            .as_str()
            .rsplit_once('@')
            .map_or(a.as_str(), |(_, host)| host);
        host.parse().ok()
    });
    parts.path_and_query = Some(http::uri::PathAndQuery::from_static("/"));
    let proxy_url = Box::new(http::Uri::from_parts(parts).unwrap_or_default());
    if proxy.scheme_str() == Some("socks5") {
        kube::Error::ProxyProtocolDisabled {
            proxy_url,
            protocol_feature: "kube/socks5",
        }
    } else {
        kube::Error::ProxyProtocolUnsupported { proxy_url }
    }
}

/// The stack above the connection: TLS to the API server, the timeouts, then kube's layers.
fn stack<C>(
    config: kube::Config,
    auth: Option<kube::client::middleware::AuthLayer>,
    connector: C,
) -> Result<Client, kube::Error>
where
    C: tower::Service<http::Uri> + Clone + Send + Sync + 'static,
    C::Response: hyper_util::client::legacy::connect::Connection
        + hyper::rt::Read
        + hyper::rt::Write
        + Send
        + Unpin
        + 'static,
    C::Future: Send + 'static,
    C::Error: std::error::Error + Send + Sync + 'static,
{
    use kube::client::{ConfigExt, retry::RetryPolicy};
    use tower::{ServiceBuilder, retry::RetryLayer};

    let mut connector = hyper_timeout::TimeoutConnector::new(
        config.rustls_https_connector_with_connector(connector)?,
    );
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let http = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build(connector);
    let retry = config
        .default_retry
        .then(|| RetryLayer::new(RetryPolicy::server_retry()));
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(retry)
        .option_layer(auth)
        .layer(config.extra_headers_layer()?)
        .map_err(tower::BoxError::from)
        .service(http);
    Ok(Client::new(service, config.default_namespace))
}

/// The proxy's basic authentication, from the user information of its URL (percent-decoded), as kube sends it.
fn proxy_auth<C>(
    proxy: &http::Uri,
    tunnel: hyper_util::client::legacy::connect::proxy::Tunnel<C>,
) -> hyper_util::client::legacy::connect::proxy::Tunnel<C> {
    use base64::Engine;

    let Some((user_info, _)) = proxy.authority().and_then(|a| a.as_str().split_once('@')) else {
        return tunnel;
    };
    let decoded: Vec<u8> = percent_encoding::percent_decode_str(user_info).collect();
    let value = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(decoded)
    );
    match http::HeaderValue::from_str(&value) {
        Ok(header) => tunnel.with_auth(header),
        Err(_) => tunnel,
    }
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

    /// Reads one request head from `conn`.
    fn head(conn: &mut std::net::TcpStream) -> String {
        let mut buf = [0u8; 4096];
        let mut got = Vec::new();
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = conn.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&got).into_owned()
    }

    /// One request through a client of `config` to a loopback server on `listener` (which first answers a
    /// CONNECT when `tunnel`): the heads the server read, and whether each socket of this process to it has
    /// `TCP_NODELAY`.
    async fn one_request(
        listener: std::net::TcpListener,
        config: kube::Config,
        tunnel: bool,
    ) -> (Vec<String>, Vec<bool>) {
        let port = listener.local_addr().unwrap().port();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut heads = Vec::new();
            if tunnel {
                heads.push(head(&mut conn));
                conn.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .unwrap();
            }
            heads.push(head(&mut conn));
            conn.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}",
            )
            .unwrap();
            // Held open until the sockets were looked at.
            let _ = done_rx.recv();
            heads
        });
        let client = super::client(config).unwrap();
        let request = http::Request::get("/version").body(Vec::new()).unwrap();
        assert_eq!(client.request_text(request).await.unwrap(), "{}");
        let sockets = sockets_to(port);
        done_tx.send(()).unwrap();
        (server.join().unwrap(), sockets)
    }

    #[tokio::test]
    async fn the_client_connects_with_nagle_off() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let config = kube::Config::new(format!("http://127.0.0.1:{port}").parse().unwrap());
        let (_, sockets) = one_request(listener, config, false).await;
        assert_eq!(sockets, vec![true], "one connection, TCP_NODELAY set");
    }

    /// Through an HTTP proxy too: the tunnel's connection has Nagle off, and the proxy gets the CONNECT with the
    /// basic authentication of the proxy URL, percent-decoded.
    #[tokio::test]
    async fn the_client_connects_through_a_proxy_with_nagle_off() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut config = kube::Config::new("http://api.cluster.invalid:6443".parse().unwrap());
        config.proxy_url = Some(
            format!("http://me:p%40ss@127.0.0.1:{port}")
                .parse()
                .unwrap(),
        );
        let (heads, sockets) = one_request(listener, config, true).await;
        assert_eq!(
            sockets,
            vec![true],
            "one connection to the proxy, TCP_NODELAY set"
        );
        assert!(
            heads[0].starts_with("CONNECT api.cluster.invalid:6443 HTTP/1.1\r\n"),
            "{heads:?}"
        );
        // base64("me:p@ss")
        assert!(
            heads[0].contains("\r\nproxy-authorization: Basic bWU6cEBzcw==\r\n")
                || heads[0].contains("\r\nProxy-Authorization: Basic bWU6cEBzcw==\r\n"),
            "{heads:?}"
        );
        assert!(
            heads[1].starts_with("GET /version HTTP/1.1\r\n"),
            "{heads:?}"
        );
    }

    /// A body cut short: the error is kube's own transport error, not that error wrapped twice.
    #[tokio::test]
    async fn a_body_cut_short_is_one_transport_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            head(&mut conn);
            conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{\"a\"")
                .unwrap();
        });
        let config = kube::Config::new(format!("http://127.0.0.1:{port}").parse().unwrap());
        let client = super::client(config).unwrap();
        let request = http::Request::get("/api").body(Vec::new()).unwrap();
        let error = super::capped_text(&client, request, None)
            .await
            .unwrap_err();
        server.join().unwrap();
        let text = error.to_string();
        assert!(matches!(error, kube::Error::Service(_)), "{error:?}");
        assert_eq!(text.matches("ServiceError").count(), 1, "{text}");
    }

    /// A proxy this client cannot use is refused before anything runs, and the error does not print the
    /// password of its URL.
    #[test]
    fn an_unusable_proxy_is_named_without_its_password() {
        for (url, feature) in [
            ("socks5://me:s3cret@127.0.0.1:1080", true),
            ("ftp://me:s3cret@proxy.example:21/x", false),
        ] {
            let mut config = kube::Config::new("https://127.0.0.1:6443".parse().unwrap());
            config.proxy_url = Some(url.parse().unwrap());
            let error = super::client(config).err().expect("refused");
            let text = format!("{error} {error:?}");
            assert!(!text.contains("s3cret") && !text.contains("me:"), "{text}");
            assert!(
                text.contains(if feature {
                    "kube/socks5"
                } else {
                    "unsupported"
                }),
                "{text}"
            );
            assert!(
                text.contains(url.split('@').nth(1).unwrap().split('/').next().unwrap()),
                "{text}"
            );
        }
    }
}
