//! Token renewal with the real sveltoscluster-manager renewing clusters' tokens (`token_renewal`):
//!
//! - the renewal heartbeat in `sveltos_clusters` (with a ServiceAccount of the member cluster): `last_renewed_at`
//!   is the manager's `status.lastReconciledTokenRequestAt`, `connection_failures` its count of failed
//!   connections, and the renewal is no drift;
//! - without `service_account`, a ServiceAccount token is renewed (the manager asks the member cluster whom the
//!   credential authenticates) and the cluster stays Ready on what the manager wrote, while the plan names a
//!   cluster whose credential is another user's token;
//! - a connection that needs `insecure-skip-tls-verify` (which a renewal drops) is registered without renewal,
//!   named by the plan, and stays Ready while the manager renews the others.

use std::time::Duration;

use k8s_openapi::api::core::v1::ServiceAccount;
use serde_json::Value as Json;
use support::inventory::{Inv, apply_ok, bridge, flat};
use support::sveltos::Sveltos;
use support::{Cli, unique_namespace};

/// How long the first renewal may take: a hang guard, not a measurement (the manager renews once the interval,
/// here a minute, has passed since the SveltosCluster was created, at its next look, about once a minute).
const RENEWAL_DEADLINE: Duration = Duration::from_secs(360);

/// The bridge renewing through ServiceAccount `<ns>/renewer` every minute, and `sveltos_clusters` listing what it
/// owns.
fn config(ns: &str) -> String {
    let renewal = format!(
        "  token_renewal {{\n    interval = \"1m\"\n    service_account = \"{ns}/renewer\"\n  }}"
    );
    format!(
        "{}data \"sveltos_clusters\" \"renewals\" {{\n  bridge = \"{ns}\"\n  namespaces = [\"{ns}\"]\n  \
         depends_on = [sveltos_cluster_inventory_bridge.x]\n}}\noutput \"renewals\" {{\n  value = \
         data.sveltos_clusters.renewals.clusters\n}}\n",
        bridge(ns, &[ns], &renewal)
    )
}

/// Once the manager has renewed the token, the data source reports when (as the manager wrote it, that renewal or
/// a later one) and no failed connection; the plan stays empty.
#[tokio::test(flavor = "multi_thread")]
async fn the_data_source_shows_the_renewal_heartbeat() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let ns = unique_namespace(&inv.client, "renewal").await;
    let sa: ServiceAccount = serde_json::from_value(
        serde_json::json!({"metadata": {"name": "renewer", "namespace": ns}}),
    )
    .expect("a ServiceAccount");
    kube::Api::<ServiceAccount>::namespaced(inv.client.clone(), &ns)
        .create(&Default::default(), &sa)
        .await
        .unwrap_or_else(|e| panic!("creating ServiceAccount {ns}/renewer: {e}"));
    inv.profile_with_secret(&ns, "c1", &[], Json::Null, &sveltos.member_kubeconfig())
        .await;
    let tf = inv.tf(&Cli::tofu(), &config(&ns));
    apply_ok(&tf);
    let renewed = sveltos
        .until(
            "the manager renewing c1's token",
            RENEWAL_DEADLINE,
            || async {
                inv.sc(&ns, "c1")
                    .await?
                    .status?
                    .last_reconciled_token_request_at
            },
        )
        .await;
    apply_ok(&tf);
    let outputs = tf.outputs_json();
    let c1 = &outputs["renewals"]["value"][0];
    assert_eq!(c1["id"], format!("{ns}/c1"), "{outputs}");
    // The manager may have renewed again since (every minute): RFC 3339 times of one writer order as text.
    let shown = c1["last_renewed_at"].as_str().unwrap_or_default();
    assert!(
        shown >= renewed.as_str(),
        "{shown} before {renewed}: {outputs}"
    );
    assert_eq!(c1["connection_failures"], 0, "{outputs}");
    assert_eq!(c1["ready"], true, "{outputs}");
    assert_eq!(tf.plan(), 0, "the renewal shows as drift");
}

/// When SveltosCluster `ns/name` was last renewed (`status.lastReconciledTokenRequestAt`), if ever.
async fn heartbeat(inv: &Inv, ns: &str, name: &str) -> Option<String> {
    inv.sc(ns, name)
        .await?
        .status?
        .last_reconciled_token_request_at
}

/// Waits until the manager has renewed `ns/name` `times` times (that many distinct heartbeats): each renewal after
/// the first was made with the credential the one before wrote.
async fn renewed(sveltos: &Sveltos, inv: &Inv, ns: &str, name: &str, times: usize) {
    let mut last: Option<String> = None;
    for n in 1..=times {
        let seen = &last;
        let now = sveltos
            .until(
                &format!("renewal {n} of {name}'s token by the manager"),
                RENEWAL_DEADLINE,
                || async move {
                    heartbeat(inv, ns, name)
                        .await
                        .filter(|h| Some(h) != seen.as_ref())
                },
            )
            .await;
        last = Some(now);
    }
}

/// The manager's status of `ns/name`: whether it is Ready, its failed connections and failure message.
async fn health(inv: &Inv, ns: &str, name: &str) -> (Option<bool>, i64, Option<String>) {
    let status = inv
        .sc(ns, name)
        .await
        .unwrap_or_else(|| panic!("SveltosCluster {ns}/{name}"))
        .status
        .unwrap_or_default();
    (
        status.ready,
        status.connection_failures.unwrap_or(0),
        status.failure_message,
    )
}

/// ServiceAccount `<ns>/<name>` of the member cluster (this API server), allowed to create its own tokens: what a
/// renewal made with its token asks for.
fn service_account(sveltos: &Sveltos, ns: &str, name: &str) {
    let env = &sveltos.env;
    env.kubectl(&["-n", ns, "create", "serviceaccount", name]);
    env.kubectl(&[
        "-n",
        ns,
        "create",
        "role",
        name,
        "--verb=create",
        "--resource=serviceaccounts/token",
        &format!("--resource-name={name}"),
    ]);
    env.kubectl(&[
        "-n",
        ns,
        "create",
        "rolebinding",
        name,
        &format!("--role={name}"),
        &format!("--serviceaccount={ns}:{name}"),
    ]);
}

/// [`service_account`] `<ns>/<name>`, and a kubeconfig authenticating as it with a token from the TokenRequest API.
fn service_account_kubeconfig(sveltos: &Sveltos, ns: &str, name: &str) -> String {
    service_account(sveltos, ns, name);
    let env = &sveltos.env;
    let token = env.kubectl(&["-n", ns, "create", "token", name, "--duration", "1h"]);
    support::kubeconfig_with_token(&env.kubeconfig, token.trim())
}

/// `token_renewal` without `service_account`: a cluster whose credential is a ServiceAccount token (`sa`) is
/// renewed by the manager, twice, and stays Ready on the credential it renewed; the plan names the cluster whose
/// credential is the admin's static token (`static`), which the manager has not renewed by then, and not `sa`.
#[tokio::test(flavor = "multi_thread")]
async fn a_service_account_token_is_renewed_without_service_account() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let ns = unique_namespace(&inv.client, "renew-sa").await;
    let sa = service_account_kubeconfig(sveltos, &ns, "member");
    inv.profile_with_secret(&ns, "sa", &[], Json::Null, &sa)
        .await;
    inv.profile_with_secret(&ns, "static", &[], Json::Null, &sveltos.member_kubeconfig())
        .await;
    let renewal = "  token_renewal {\n    interval = \"1m\"\n  }";
    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], renewal));
    let out = flat(&apply_ok(&tf));
    assert!(
        out.contains(
            "1 ClusterProfile(s): token_renewal set, but Sveltos will not renew their credential"
        ) && out.contains(&format!(
            "- {ns}/static: its token is not a ServiceAccount token, and token_renewal names no \
                 service_account: Sveltos will not renew it"
        )),
        "the plan names the static token's cluster:\n{out}"
    );
    assert!(!out.contains(&format!("{ns}/sa:")), "{out}");
    renewed(sveltos, &inv, &ns, "sa", 2).await;
    let sc = inv.sc(&ns, "sa").await.expect("SveltosCluster sa");
    assert_eq!(
        sc.spec.kubeconfig_key_name.as_deref(),
        Some("re-kubeconfig"),
        "the manager connects with what it renewed"
    );
    assert_eq!(health(&inv, &ns, "sa").await, (Some(true), 0, None));
    assert_eq!(
        heartbeat(&inv, &ns, "static").await,
        None,
        "a static token renewed"
    );
    assert_eq!(tf.plan(), 0, "the renewals show as drift");
}

/// `token_renewal` (with `service_account`) over a cluster reached with `insecure-skip-tls-verify` and one with
/// its CA: the plan names the first, registered without `tokenRequestRenewalOption`; once the manager has renewed
/// the second three times (both were registered together and the manager looks at each about once a minute: it
/// would have renewed the first, and connected with what it wrote, by then), the first is still Ready, never
/// renewed, with no failed connection (a renewal writes only the server and CA: with it, "x509: certificate signed by unknown
/// authority" from then on).
#[tokio::test(flavor = "multi_thread")]
async fn a_connection_a_renewal_would_break_is_registered_without_renewal() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let ns = unique_namespace(&inv.client, "renew-tls").await;
    // Each renewal after the first is made with the renewer's own token.
    service_account(sveltos, &ns, "renewer");
    let admin = sveltos.member_kubeconfig();
    let insecure: String = admin
        .lines()
        .filter(|l| !l.contains("certificate-authority-data:"))
        .flat_map(|l| match l.split_once("server:") {
            Some((indent, _)) => vec![
                l.to_string(),
                format!("{indent}insecure-skip-tls-verify: true"),
            ],
            None => vec![l.to_string()],
        })
        .collect::<Vec<_>>()
        .join("\n");
    inv.profile_with_secret(&ns, "ca", &[], Json::Null, &admin)
        .await;
    inv.profile_with_secret(&ns, "insecure", &[], Json::Null, &insecure)
        .await;
    let renewal = format!(
        "  token_renewal {{\n    interval = \"1m\"\n    service_account = \"{ns}/renewer\"\n  }}"
    );
    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], &renewal));
    let out = flat(&apply_ok(&tf));
    assert!(
        out.contains("1 ClusterProfile(s): token_renewal not enabled, a renewal would break their connection")
            && out.contains(&format!(
                "- {ns}/insecure: its connection needs insecure-skip-tls-verify, which a Sveltos renewal drops"
            )),
        "the plan names the insecure cluster:\n{out}"
    );
    renewed(sveltos, &inv, &ns, "ca", 3).await;
    assert_eq!(
        health(&inv, &ns, "insecure").await,
        (Some(true), 0, None),
        "the insecure cluster after the manager's renewals"
    );
    assert_eq!(heartbeat(&inv, &ns, "insecure").await, None);
    let sc = inv
        .sc(&ns, "insecure")
        .await
        .expect("SveltosCluster insecure");
    assert_eq!(sc.spec.token_request_renewal_option, None);
    assert_eq!(health(&inv, &ns, "ca").await, (Some(true), 0, None));
    assert_eq!(tf.plan(), 0, "the renewals show as drift");
}
