//! The bridge judged by the real Sveltos controllers: sveltoscluster-manager and addon-controller (from
//! `../shared/sveltos`, see `support::sveltos`) running against a control plane of this test binary's own, never
//! the shared one: they act on every SveltosCluster of their API server, and the other binaries' tests leave many
//! behind. The member cluster of every bridged cluster is that same API server.
//!
//! Without `../shared/sveltos` (or `SVELTOS_SHARED_DIR`) every test here skips loudly; under `CI=true` it fails.
//!
//! `cargo test --test sveltos` (about a minute to start the control plane and the controllers, then the tests
//! concurrently); `cargo test --test sveltos addons::` runs one module.

support::test_binary!();

mod active_window;
mod addons;
mod checks;
mod deregistration;
mod properties;
mod pull_mode;
mod readiness;
mod renewal;
mod secret_reader;
mod workload_identity;

/// How long an add-on may take to reach a cluster, or to be withdrawn: a hang guard, not a measurement
/// (addon-controller takes 5 to 35 s, retrying queued requests every 10 s).
const ADDON_DEADLINE: std::time::Duration = std::time::Duration::from_secs(180);

/// `kubeconfig` with its server moved to a loopback port nothing listens on (bound, then released).
pub(crate) fn unreachable(kubeconfig: &str) -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port();
    kubeconfig
        .lines()
        .map(|l| match l.split_once("server:") {
            Some((indent, _)) => format!("{indent}server: https://127.0.0.1:{port}"),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
