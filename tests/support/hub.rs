//! The test environment's member cluster as an inventory hub: ClusterProfiles and their credential Secrets live
//! there, SveltosClusters are written on the management cluster.
//!
//! `tests/e2e/inventory_hub.rs` counts the writes the hub's API server serves while the provider runs (its
//! `apiserver_request_total`), to show the provider never writes there. The counters are global to that API
//! server and the tests of one binary run concurrently, so every test that writes to the member cluster holds
//! [`writing`] for as long as it writes, and the counting test holds [`counting`], which waits for them and keeps
//! new ones out.

use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::TestEnv;

static WRITERS: RwLock<()> = RwLock::const_new(());

/// Held by a test while it writes to the member cluster (shared with other writers).
pub async fn writing() -> RwLockReadGuard<'static, ()> {
    WRITERS.read().await
}

/// Held by a test while it counts the member cluster's writes (no test writes there meanwhile).
pub async fn counting() -> RwLockWriteGuard<'static, ()> {
    WRITERS.write().await
}

/// Installs the ClusterProfile CRD on the member cluster and waits until it is served, once per test binary.
pub fn install_crd(env: &TestEnv) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| install_crd_on(env));
}

/// Installs the ClusterProfile CRD on `env`'s member cluster and waits until it is served (for a test's own
/// environment; the shared one goes through [`install_crd`]).
pub fn install_crd_on(env: &TestEnv) {
    let crd = super::repo_root().join("testenv/crds/clusterprofiles.yaml");
    let member = env.member_kubeconfig();
    env.kubectl_at(
        member,
        &[
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=tfsveltos-test",
            "-f",
            &crd.display().to_string(),
        ],
    );
    env.kubectl_at(
        member,
        &[
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "crd/clusterprofiles.multicluster.x-k8s.io",
        ],
    );
}
