//! The API server of a test's own environment killed as a crashed or OOM-killed one is (`SIGKILL`), then started
//! again with the same command line: same etcd (so every object is still there), same port, same serving
//! certificate (kept in its `--cert-dir`), so clients reconnect to it as to a restarted control plane. Only for an
//! environment the test started itself ([`Restartable`]): the shared one serves every other test of the binary.
//! (`tests/e2e/apiserver_restart.rs` simulates the same through a proxy, which can also hold a cut for a set time.)

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kube::api::{Api, ListParams};
use tfsveltos::api::SveltosCluster;

use super::{OwnedEnv, TestEnv, pid_alive};

/// A test environment (main cluster only) whose kube-apiserver a test may kill and restart.
pub struct Restartable {
    /// The environment (stopped when this is dropped).
    pub env: OwnedEnv,
    /// The running kube-apiserver: the one `scripts/testenv up` started (pid only), or one started here.
    pid: u32,
    child: Option<Child>,
    argv: Vec<OsString>,
    log: PathBuf,
}

impl Restartable {
    /// Starts an environment of its own (stopped when dropped, or by its watchdog if the test binary dies).
    pub fn start() -> Restartable {
        let env = TestEnv::start(false);
        let pids = std::fs::read_to_string(env.dir.join("pids")).expect("reading the pids file");
        let pid: u32 = pids
            .lines()
            .filter_map(|l| l.split_once(' '))
            .find(|(_, name)| name.trim() == "main-kube-apiserver")
            .and_then(|(pid, _)| pid.parse().ok())
            .expect("the pids file names main-kube-apiserver");
        let cmdline =
            std::fs::read(format!("/proc/{pid}/cmdline")).expect("reading its command line");
        let argv: Vec<OsString> = cmdline
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| std::ffi::OsStr::from_bytes(a).to_os_string())
            .collect();
        assert!(
            argv.first()
                .is_some_and(|a| a.to_string_lossy().ends_with("kube-apiserver")),
            "pid {pid} is not a kube-apiserver: {argv:?}"
        );
        let log = env.dir.join("main").join("kube-apiserver.log");
        Restartable {
            env,
            pid,
            child: None,
            argv,
            log,
        }
    }

    /// Whether the API server is not running (killed and not started again).
    pub fn is_down(&self) -> bool {
        !pid_alive(self.pid)
    }

    /// `SIGKILL`s the API server and waits until it is gone; returns when it was killed.
    pub fn kill(&mut self) -> Instant {
        // SAFETY: kill(2) with the pid of the kube-apiserver of this test's own environment.
        unsafe {
            libc::kill(self.pid as i32, libc::SIGKILL);
        }
        let at = Instant::now();
        match self.child.take() {
            Some(mut c) => {
                c.wait().expect("reaping the killed kube-apiserver");
            }
            None => {
                let deadline = Instant::now() + Duration::from_secs(10);
                while pid_alive(self.pid) {
                    assert!(Instant::now() < deadline, "kube-apiserver survived SIGKILL");
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
        at
    }

    /// The port it serves on (`--secure-port`).
    fn port(&self) -> u16 {
        self.argv
            .iter()
            .skip_while(|a| a.to_str() != Some("--secure-port"))
            .nth(1)
            .and_then(|p| p.to_str()?.parse().ok())
            .expect("kube-apiserver's command line has --secure-port")
    }

    /// Waits until the killed server's port is free: a killed process whose main thread is already a zombie may
    /// still hold its sockets while its other threads exit (a restart at once then fails with "address already in
    /// use").
    fn wait_port_free(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpListener::bind(("127.0.0.1", self.port())).is_err() {
            assert!(
                Instant::now() < deadline,
                "port {} still taken 30 s after the kill",
                self.port()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts the API server again with the same command line, in a session of its own (as `scripts/testenv`
    /// does), appending to the same log; recorded in the environment's pids file so that `down` stops it.
    pub fn restart(&mut self) {
        self.wait_port_free();
        let log = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.log)
            .expect("opening the kube-apiserver log");
        let child = Command::new("setsid")
            .args(&self.argv)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("starting kube-apiserver again");
        self.pid = child.id();
        self.child = Some(child);
        use std::io::Write;
        let mut pids = std::fs::OpenOptions::new()
            .append(true)
            .open(self.env.dir.join("pids"))
            .expect("opening the pids file");
        writeln!(pids, "{} main-kube-apiserver", self.pid).expect("recording the pid");
    }

    /// Waits until the restarted API server serves SveltosClusters again (at most `timeout`); returns how long
    /// that took.
    pub async fn wait_serving(&self, client: &kube::Client, timeout: Duration) -> Duration {
        let started = Instant::now();
        let api = Api::<SveltosCluster>::all(client.clone());
        loop {
            if api
                .list_metadata(&ListParams::default().limit(1))
                .await
                .is_ok()
            {
                return started.elapsed();
            }
            if started.elapsed() >= timeout {
                let log = std::fs::read_to_string(&self.log).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(30).collect();
                panic!(
                    "kube-apiserver (pid {}, {}) not serving {timeout:?} after its restart; the end of its log:\n{}",
                    self.pid,
                    if pid_alive(self.pid) {
                        "running"
                    } else {
                        "exited"
                    },
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Restartable {
    fn drop(&mut self) {
        // `down` (the OwnedEnv's drop, after this) kills it; reap it then so that no zombie is left.
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
