//! One retry policy (`k8s::io` module documentation): against the real API server behind a small
//! fault-injecting HTTP proxy (`support::fault_proxy`), a request that keeps failing gives up within the documented
//! bound after at most the documented number of requests, names the object, and the next request
//! succeeds once the proxy forwards again.
//!
//! The client under test is made the way the provider makes it (connection settings resolved by
//! `k8s::config`, client built by `k8s::io::client`) and talks plain HTTP to the proxy; the proxy
//! forwards to the real API server with the test environment's admin client.

use std::time::Instant;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, PostParams};
use support::fault_proxy::{FaultProxy, Mode};
use tfsveltos::k8s::{config, io};

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

    let proxy = FaultProxy::start(admin).await;
    let client = provider_client(proxy.port());
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

    for (mode, code) in [(Mode::Unavailable, Some(503)), (Mode::Reset, None)] {
        proxy.set(mode);
        let started = Instant::now();
        let err = io::get_opt::<ConfigMap>(&client, &ns, "probe")
            .await
            .expect_err("every request fails");
        let elapsed = started.elapsed();
        let requests = proxy.requests();
        eprintln!("mode {mode:?}: failed after {requests} requests in {elapsed:?}: {err}");
        assert!(
            (2..=io::MAX_ATTEMPTS as usize).contains(&requests),
            "mode {mode:?}: {requests} requests; the policy promises retries, and at most {}",
            io::MAX_ATTEMPTS
        );
        assert!(
            elapsed <= io::OPERATION_BOUND,
            "mode {mode:?}: took {elapsed:?}, more than the documented {:?}",
            io::OPERATION_BOUND
        );
        // Quick failures end well inside the retry window (backoffs sum to at most 7.75 s).
        assert!(elapsed <= io::RETRY_WINDOW, "mode {mode:?}: {elapsed:?}");
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
        proxy.set(Mode::Forward);
        let got = io::get_opt::<ConfigMap>(&client, &ns, "probe")
            .await
            .expect("get once the proxy forwards again");
        assert!(got.is_some());
        assert_eq!(proxy.requests(), 1);
    }

    // A LIST (paginated) goes through the same policy.
    let (listed, _) = io::list::<ConfigMap>(&client, std::slice::from_ref(&ns), None)
        .await
        .expect("list through the proxy");
    assert!(
        listed
            .iter()
            .any(|c| c.metadata.name.as_deref() == Some("probe"))
    );
}
