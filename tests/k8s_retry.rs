//! One retry policy (`k8s::io` module documentation): against the real API server behind a small
//! fault-injecting HTTP proxy written here, a request that keeps failing gives up within the documented
//! bound after at most the documented number of requests, names the object, and the next request
//! succeeds once the proxy forwards again.
//!
//! The client under test is made the way the provider makes it (connection settings resolved by
//! `k8s::config`, client built by `k8s::io::client`) and talks plain HTTP to the proxy; the proxy
//! forwards to the real API server with the test environment's admin client.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::Instant;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, PostParams};
use tfsveltos::k8s::{config, io};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tonic::codegen::http;

/// Forward every request to the API server.
const FORWARD: u8 = 0;
/// Answer every request with HTTP 503 and a Kubernetes `Status` body.
const UNAVAILABLE: u8 = 1;
/// Read the request, then close the connection without answering (as a restarting server does).
const RESET: u8 = 2;

/// The fault-injecting proxy: its mode and how many requests it has received.
struct Proxy {
    mode: AtomicU8,
    requests: AtomicUsize,
    upstream: kube::Client,
}

impl Proxy {
    fn set(&self, mode: u8) {
        self.mode.store(mode, Ordering::SeqCst);
        self.requests.store(0, Ordering::SeqCst);
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Starts the proxy on a free local port; returns it and the port.
async fn start_proxy(upstream: kube::Client) -> (Arc<Proxy>, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let proxy = Arc::new(Proxy {
        mode: AtomicU8::new(FORWARD),
        requests: AtomicUsize::new(0),
        upstream,
    });
    let p = proxy.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(serve(p.clone(), stream));
        }
    });
    (proxy, port)
}

/// One request per connection (`Connection: close` on every answer).
async fn serve(proxy: Arc<Proxy>, mut stream: TcpStream) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    proxy.requests.fetch_add(1, Ordering::SeqCst);
    let (status, body) = match proxy.mode.load(Ordering::SeqCst) {
        RESET => return,
        UNAVAILABLE => (
            503,
            br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"injected by the test proxy","reason":"ServiceUnavailable","code":503}"#.to_vec(),
        ),
        _ => forward(&proxy.upstream, request).await,
    };
    let head = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(&body).await;
    let _ = stream.shutdown().await;
}

/// Reads one HTTP/1.1 request (head and `content-length` body).
async fn read_request(stream: &mut TcpStream) -> Option<http::Request<Vec<u8>>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, target) = (first.next()?, first.next()?);
    let mut builder = http::Request::builder().method(method).uri(target);
    let mut length = 0;
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':')?;
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        assert_ne!(
            name, "transfer-encoding",
            "the proxy reads content-length bodies only"
        );
        if name == "content-length" {
            length = value.parse().ok()?;
        }
        if matches!(name.as_str(), "content-type" | "accept") {
            builder = builder.header(name, value);
        }
    }
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    builder.body(body).ok()
}

async fn forward(upstream: &kube::Client, request: http::Request<Vec<u8>>) -> (u16, Vec<u8>) {
    let (parts, body) = request.into_parts();
    let request = http::Request::from_parts(parts, kube::client::Body::from(body));
    let response = upstream
        .send(request)
        .await
        .expect("forwarding to the API server");
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect_bytes()
        .await
        .expect("reading the API server's answer");
    (status, body.to_vec())
}

/// A client made as the provider makes one, for `http://127.0.0.1:<port>`.
fn provider_client(port: u16) -> kube::Client {
    let settings = config::KubeSettings {
        host: Some(format!("http://127.0.0.1:{port}")),
        ..config::KubeSettings::default()
    };
    config::connect(&settings, &|_| None).expect("client for the proxy")
}

#[tokio::test]
async fn a_failing_server_costs_a_bounded_number_of_requests_and_time() {
    let env = support::TestEnv::get();
    let admin = env.client().await;
    let ns = support::unique_namespace(&admin, "k8s-retry").await;
    let probe = ConfigMap {
        metadata: ObjectMeta {
            name: Some("probe".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    Api::<ConfigMap>::namespaced(admin.clone(), &ns)
        .create(&PostParams::default(), &probe)
        .await
        .expect("create the probe ConfigMap");

    let (proxy, port) = start_proxy(admin).await;
    let client = provider_client(port);
    let object = format!("ConfigMap {ns}/probe");

    // Forwarding: the request goes through and costs exactly one request.
    let got = io::get_opt::<ConfigMap>(&client, &ns, "probe")
        .await
        .expect("get through the forwarding proxy");
    assert!(
        got.is_some(),
        "the probe ConfigMap is read through the proxy"
    );
    assert_eq!(proxy.requests(), 1);

    for (mode, code) in [(UNAVAILABLE, Some(503)), (RESET, None)] {
        proxy.set(mode);
        let started = Instant::now();
        let err = io::get_opt::<ConfigMap>(&client, &ns, "probe")
            .await
            .expect_err("every request fails");
        let elapsed = started.elapsed();
        let requests = proxy.requests();
        eprintln!("mode {mode}: failed after {requests} requests in {elapsed:?}: {err}");
        assert!(
            (2..=io::MAX_ATTEMPTS as usize).contains(&requests),
            "mode {mode}: {requests} requests; the policy promises retries, and at most {}",
            io::MAX_ATTEMPTS
        );
        assert!(
            elapsed <= io::OPERATION_BOUND,
            "mode {mode}: took {elapsed:?}, more than the documented {:?}",
            io::OPERATION_BOUND
        );
        // Quick failures end well inside the retry window (backoffs sum to at most 7.75 s).
        assert!(elapsed <= io::RETRY_WINDOW, "mode {mode}: {elapsed:?}");
        assert!(
            err.to_string().starts_with(&format!("get {object}: ")),
            "the error names the verb and the object: {err}"
        );
        assert_eq!(err.code, code, "{err}");
        assert!(
            std::error::Error::source(&err).is_some(),
            "the cause is chained: {err:?}"
        );

        // The server is back: the next request succeeds at once.
        proxy.set(FORWARD);
        let got = io::get_opt::<ConfigMap>(&client, &ns, "probe")
            .await
            .expect("get once the proxy forwards again");
        assert!(got.is_some());
        assert_eq!(proxy.requests(), 1);
    }

    // A LIST (paginated) goes through the same policy.
    let listed = io::list::<ConfigMap>(&client, std::slice::from_ref(&ns), None)
        .await
        .expect("list through the proxy");
    assert!(
        listed
            .iter()
            .any(|c| c.metadata.name.as_deref() == Some("probe"))
    );
}
