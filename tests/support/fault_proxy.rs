//! A fault-injecting HTTP proxy in front of the real API server, for tests of the retry policy and of what
//! happens when the API server fails or restarts.
//!
//! The proxy listens on plain HTTP on a local port (the provider reaches it with `host =
//! "http://127.0.0.1:<port>"`, no credentials) and forwards each request to the real API server with the
//! admin client it was given, one request per connection (`Connection: close` on every answer). Its
//! [`Mode`] decides what a request gets:
//!
//! * [`Mode::Forward`]: the API server's answer;
//! * [`Mode::Unavailable`]: HTTP 503 with a Kubernetes `Status` body;
//! * [`Mode::Reset`]: nothing: the request is read and the connection closed;
//! * [`Mode::Down`]: an API server that was killed and is restarting: the listening socket is closed (new
//!   connections are refused by the kernel), and every request in flight, read or being forwarded, is dropped
//!   with a TCP reset instead of an answer. Back in [`Mode::Forward`] the proxy listens on the same port again.
//!
//! [`FaultProxy::cut_after_writes`] arms an automatic switch to [`Mode::Down`] when a given number of
//! writes (any method but GET) has arrived, so that a test can cut the "API server" in the middle of an apply
//! it does not control; [`FaultProxy::wait_cut`] waits for that moment. The write that trips the cut is done
//! by the API server but its answer is lost (a server killed between committing a write and answering it);
//! other requests in flight at that moment may or may not have reached it.
//!
//! [`FaultProxy::hold_writes_after`] makes a run's writes hang where the test chooses, for tests of `timeouts`:
//! once a given number of writes to some resources has gone through, every later one is held, unanswered and
//! never forwarded, until the client gives up on it. Of those writes, the API server has then carried out
//! exactly the ones let through ([`FaultProxy::let_through`]), whenever the run stops.
//!
//! [`FaultProxy::answers`] lists the requests answered, in order, so that a test can see what the provider asked
//! between two of its own steps (for instance that it read an object back while waiting for it to go).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tonic::codegen::http;

/// What the proxy does with the requests it receives (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Forward every request to the API server.
    Forward,
    /// Answer every request with HTTP 503 and a Kubernetes `Status` body.
    Unavailable,
    /// Read the request, then close the connection without answering.
    Reset,
    /// Refuse new connections and drop in-flight requests with a TCP reset (a killed, restarting server).
    Down,
}

/// A running proxy (it stops with the tokio runtime that started it).
pub struct FaultProxy {
    shared: Arc<Shared>,
    port: u16,
}

struct Shared {
    mode: watch::Sender<Mode>,
    /// Requests read since the last [`FaultProxy::set`].
    requests: AtomicUsize,
    /// Writes (any method but GET) read since the proxy started.
    writes: AtomicUsize,
    /// Requests dropped in flight by [`Mode::Down`] since the proxy started.
    dropped: AtomicUsize,
    /// Switch to [`Mode::Down`] once this many writes have arrived.
    cut_after: Mutex<Option<usize>>,
    /// When the proxy last went [`Mode::Down`].
    cut_at: Mutex<Option<Instant>>,
    /// The `Authorization` headers of the requests received (never forwarded: the proxy uses its own client).
    authorizations: Mutex<Vec<String>>,
    /// Bytes of the answers' bodies sent to clients since the proxy started.
    answered: AtomicUsize,
    /// Each answer sent: `METHOD uri` and its body's size.
    answers: Mutex<Vec<(String, usize)>>,
    /// Each request read: `METHOD uri`, in the order they arrived.
    asked: Mutex<Vec<String>>,
    /// The writes to hold, when armed.
    hold: Mutex<Option<Hold>>,
    /// Writes let through by [`Hold`]s since the proxy started.
    let_through: AtomicUsize,
    /// Writes held since the proxy started.
    held: AtomicUsize,
    upstream: kube::Client,
}

/// Which writes [`FaultProxy::hold_writes_after`] holds.
struct Hold {
    /// The resources (a segment of the request's path, e.g. `secrets`) whose writes are counted and held.
    resources: Vec<String>,
    /// How many more of them go through before every later one is held.
    pass: usize,
}

impl Shared {
    fn set(&self, mode: Mode) {
        if mode == Mode::Down {
            *self.cut_at.lock().unwrap() = Some(Instant::now());
        }
        self.requests.store(0, Ordering::SeqCst);
        self.mode.send_replace(mode);
    }

    /// Whether a write to `path` is held (counting it against the armed [`Hold`]).
    fn holds(&self, path: &str) -> bool {
        let mut hold = self.hold.lock().unwrap();
        let Some(h) = hold.as_mut() else {
            return false;
        };
        if !path
            .split('/')
            .any(|seg| h.resources.iter().any(|r| r == seg))
        {
            return false;
        }
        if h.pass > 0 {
            h.pass -= 1;
            self.let_through.fetch_add(1, Ordering::SeqCst);
            return false;
        }
        self.held.fetch_add(1, Ordering::SeqCst);
        true
    }
}

impl FaultProxy {
    /// Starts a proxy in [`Mode::Forward`] on a free local port, forwarding with `upstream`.
    pub async fn start(upstream: kube::Client) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (mode, _) = watch::channel(Mode::Forward);
        let shared = Arc::new(Shared {
            mode,
            requests: AtomicUsize::new(0),
            writes: AtomicUsize::new(0),
            dropped: AtomicUsize::new(0),
            cut_after: Mutex::new(None),
            cut_at: Mutex::new(None),
            authorizations: Mutex::new(Vec::new()),
            answered: AtomicUsize::new(0),
            answers: Mutex::new(Vec::new()),
            asked: Mutex::new(Vec::new()),
            hold: Mutex::new(None),
            let_through: AtomicUsize::new(0),
            held: AtomicUsize::new(0),
            upstream,
        });
        tokio::spawn(accept_loop(shared.clone(), listener, addr));
        FaultProxy {
            shared,
            port: addr.port(),
        }
    }

    /// Bytes of answer bodies the proxy has sent to its clients.
    pub fn answered_bytes(&self) -> usize {
        self.shared.answered.load(Ordering::SeqCst)
    }

    /// The `n` largest answers sent: `METHOD uri` and body size, largest first.
    pub fn largest_answers(&self, n: usize) -> Vec<(String, usize)> {
        let mut all = self.shared.answers.lock().unwrap().clone();
        all.sort_by_key(|a| std::cmp::Reverse(a.1));
        all.truncate(n);
        all
    }

    /// Every answer sent so far, as `METHOD uri`, in the order sent: what the provider asked, so that a test can
    /// tell what it did between two of its own steps.
    pub fn answers(&self) -> Vec<String> {
        let all = self.shared.answers.lock().unwrap();
        all.iter().map(|(what, _)| what.clone()).collect()
    }

    /// The answers sent so far (as [`FaultProxy::answers`]) whose `METHOD uri` contains every one of `parts`.
    pub fn answers_with(&self, parts: &[&str]) -> Vec<String> {
        self.answers()
            .into_iter()
            .filter(|a| parts.iter().all(|p| a.contains(p)))
            .collect()
    }

    /// Every request read so far, as `METHOD uri`, in the order they arrived (answers may come in another order).
    pub fn asked(&self) -> Vec<String> {
        self.shared.asked.lock().unwrap().clone()
    }

    /// The local port the proxy listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The `Authorization` headers the proxy has received.
    pub fn authorizations(&self) -> Vec<String> {
        self.shared.authorizations.lock().unwrap().clone()
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Switches to `mode` and resets the request counter.
    pub fn set(&self, mode: Mode) {
        self.shared.set(mode);
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        *self.shared.mode.borrow()
    }

    /// Requests read since the last [`FaultProxy::set`].
    pub fn requests(&self) -> usize {
        self.shared.requests.load(Ordering::SeqCst)
    }

    /// Writes (any method but GET) read since the proxy started.
    pub fn writes(&self) -> usize {
        self.shared.writes.load(Ordering::SeqCst)
    }

    /// Requests dropped in flight by [`Mode::Down`] since the proxy started.
    pub fn dropped(&self) -> usize {
        self.shared.dropped.load(Ordering::SeqCst)
    }

    /// Goes [`Mode::Down`] by itself when the `writes`-th write (counted since the proxy started) arrives;
    /// that write is forwarded to the API server, and its answer dropped.
    pub fn cut_after_writes(&self, writes: usize) {
        *self.shared.cut_after.lock().unwrap() = Some(writes);
    }

    /// From now on, forwards `writes` more writes (any method but GET) to `resources` (a segment of the request's
    /// path: `secrets`, `sveltosclusters`), then holds every later one: a held write is never forwarded, and its
    /// connection is closed without an answer once the client closes it (a run that gave up on it) or the proxy
    /// goes down. Other requests are served as the mode says.
    pub fn hold_writes_after(&self, writes: usize, resources: &[&str]) {
        *self.shared.hold.lock().unwrap() = Some(Hold {
            resources: resources.iter().map(|r| r.to_string()).collect(),
            pass: writes,
        });
    }

    /// Holds no more writes (those held so far are never forwarded).
    pub fn stop_holding(&self) {
        *self.shared.hold.lock().unwrap() = None;
    }

    /// Writes let through by [`FaultProxy::hold_writes_after`] since the proxy started.
    pub fn let_through(&self) -> usize {
        self.shared.let_through.load(Ordering::SeqCst)
    }

    /// Writes held since the proxy started.
    pub fn held(&self) -> usize {
        self.shared.held.load(Ordering::SeqCst)
    }

    /// Waits until the proxy is [`Mode::Down`] (at most `timeout`); returns when it went down, or `None`.
    pub async fn wait_cut(&self, timeout: Duration) -> Option<Instant> {
        let mut rx = self.shared.mode.subscribe();
        tokio::time::timeout(timeout, rx.wait_for(|m| *m == Mode::Down))
            .await
            .ok()?
            .ok()?;
        *self.shared.cut_at.lock().unwrap()
    }
}

/// Accepts connections while the proxy is not down; closes the listening socket while it is, and listens on
/// the same address again afterwards.
async fn accept_loop(shared: Arc<Shared>, listener: TcpListener, addr: SocketAddr) {
    let mut rx = shared.mode.subscribe();
    let mut listener = Some(listener);
    loop {
        let l = match listener.take() {
            Some(l) => l,
            None => match rebind(addr).await {
                Some(l) => l,
                None => return,
            },
        };
        loop {
            tokio::select! {
                accepted = l.accept() => {
                    let Ok((stream, _)) = accepted else { return };
                    tokio::spawn(serve(shared.clone(), stream));
                }
                down = rx.wait_for(|m| *m == Mode::Down) => {
                    if down.is_err() {
                        return;
                    }
                    break;
                }
            }
        }
        // Down: nobody listens on the port, so connecting is refused.
        drop(l);
        if rx.wait_for(|m| *m != Mode::Down).await.is_err() {
            return;
        }
    }
}

/// Listens on `addr` again (tokio sets `SO_REUSEADDR`, so connections of the previous listener in
/// TIME_WAIT do not prevent it).
async fn rebind(addr: SocketAddr) -> Option<TcpListener> {
    for _ in 0..100 {
        if let Ok(l) = TcpListener::bind(addr).await {
            return Some(l);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!("fault proxy: cannot listen on {addr} again");
    None
}

/// Closes `stream` with a TCP reset (as the kernel does for the connections of a killed process).
fn reset(stream: TcpStream) {
    let _ = stream.set_zero_linger();
    drop(stream);
}

/// One request per connection.
async fn serve(shared: Arc<Shared>, mut stream: TcpStream) {
    let mut rx = shared.mode.subscribe();
    let request = tokio::select! {
        r = read_request(&mut stream) => r,
        _ = rx.wait_for(|m| *m == Mode::Down) => {
            shared.dropped.fetch_add(1, Ordering::SeqCst);
            return reset(stream);
        }
    };
    let Some((request, authorization)) = request else {
        return;
    };
    if let Some(a) = authorization {
        shared.authorizations.lock().unwrap().push(a);
    }
    shared.requests.fetch_add(1, Ordering::SeqCst);
    let what = format!("{} {}", request.method(), request.uri());
    shared.asked.lock().unwrap().push(what.clone());
    if request.method() != http::Method::GET {
        let writes = shared.writes.fetch_add(1, Ordering::SeqCst) + 1;
        let trips = {
            let mut armed = shared.cut_after.lock().unwrap();
            let trips = armed.is_some_and(|n| writes >= n);
            if trips {
                *armed = None;
            }
            trips
        };
        if trips {
            // The server dies right after doing this write: it is done, its answer is lost.
            shared.set(Mode::Down);
            let _ = forward(&shared.upstream, request).await;
            shared.dropped.fetch_add(1, Ordering::SeqCst);
            return reset(stream);
        }
        if shared.holds(request.uri().path()) {
            return hold(stream, rx).await;
        }
    }
    let mode = *rx.borrow_and_update();
    let (status, body) = match mode {
        Mode::Down => {
            shared.dropped.fetch_add(1, Ordering::SeqCst);
            return reset(stream);
        }
        Mode::Reset => return,
        Mode::Unavailable => (
            503,
            br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"injected by the test proxy","reason":"ServiceUnavailable","code":503}"#.to_vec(),
        ),
        Mode::Forward => tokio::select! {
            answer = forward(&shared.upstream, request) => answer,
            _ = rx.wait_for(|m| *m == Mode::Down) => {
                // The API server may or may not have processed the request: the client cannot know.
                shared.dropped.fetch_add(1, Ordering::SeqCst);
                return reset(stream);
            }
        },
    };
    let head = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    shared.answered.fetch_add(body.len(), Ordering::SeqCst);
    shared.answers.lock().unwrap().push((what, body.len()));
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(&body).await;
    let _ = stream.shutdown().await;
}

/// Keeps a held write's connection open and unanswered until the client closes it or the proxy goes down,
/// then resets it; the write is never forwarded.
async fn hold(mut stream: TcpStream, mut rx: watch::Receiver<Mode>) {
    let mut buf = [0u8; 1024];
    let client_gone = async {
        while let Ok(n) = stream.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    };
    tokio::select! {
        () = client_gone => {}
        _ = rx.wait_for(|m| *m == Mode::Down) => {}
    }
    reset(stream);
}

/// Reads one HTTP/1.1 request (head and `content-length` body), with its `Authorization` header apart.
async fn read_request(stream: &mut TcpStream) -> Option<(http::Request<Vec<u8>>, Option<String>)> {
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
    let mut authorization = None;
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
        if name == "authorization" {
            authorization = Some(value.to_string());
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
    builder.body(body).ok().map(|r| (r, authorization))
}

/// The API server's answer to `request`; a failure to reach it is a 502 `Status`.
async fn forward(upstream: &kube::Client, request: http::Request<Vec<u8>>) -> (u16, Vec<u8>) {
    let (parts, body) = request.into_parts();
    let request = http::Request::from_parts(parts, kube::client::Body::from(body));
    let answer = async {
        let response = upstream.send(request).await?;
        let status = response.status().as_u16();
        let body = response.into_body().collect_bytes().await?;
        Ok::<_, kube::Error>((status, body.to_vec()))
    };
    match answer.await {
        Ok(a) => a,
        Err(e) => (
            502,
            serde_json::to_vec(&serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                "status": "Failure", "message": format!("test proxy: {e}"), "reason": "BadGateway", "code": 502}))
            .unwrap_or_default(),
        ),
    }
}
