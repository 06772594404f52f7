//! Issue 14, Sveltos-side token renewal, end to end with the real `tofu` on the shared control plane: the test
//! does to the bridged objects what sveltoscluster-manager does on renewal (DESIGN.md §7: a new kubeconfig
//! under Secret key `re-kubeconfig`, `spec.kubeconfigKeyName` moved to it, a shortened
//! `renewTokenRequestInterval`, all by plain updates under its own field manager) and checks that the bridge
//! neither shows it as drift nor reverts it, while a rotated source credential is still planned and written.

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use serde_json::{Value as Json, json};
use support::inventory::{Inv, apply_ok, bridge, plan_clusters, state_clusters};
use support::{Cli, fixtures, unique_namespace};
use tfsveltos::api::{SveltosCluster, keys};

/// sveltoscluster-manager's field manager (any manager other than the provider's would do).
const SVELTOS: &str = "sveltoscluster-manager";
const RENEWED_KEY: &str = "re-kubeconfig";

fn by_sveltos() -> PostParams {
    PostParams {
        field_manager: Some(SVELTOS.into()),
        ..Default::default()
    }
}

/// What sveltoscluster-manager does on a renewal of `ns/name`: writes `renewed` under `re-kubeconfig` in the
/// cluster's Secret, points `spec.kubeconfigKeyName` at it and shortens the interval to `45m`, each by a
/// plain update (PUT) of the whole object.
async fn renew_like_sveltos(inv: &Inv, ns: &str, name: &str, renewed: &str) {
    let secrets = Api::<Secret>::namespaced(inv.client.clone(), ns);
    let secret_name = format!("{name}-sveltos-kubeconfig");
    let mut s = secrets.get(&secret_name).await.expect("bridged Secret");
    s.data
        .get_or_insert_default()
        .insert(RENEWED_KEY.into(), ByteString(renewed.as_bytes().to_vec()));
    secrets
        .replace(&secret_name, &by_sveltos(), &s)
        .await
        .expect("updating the Secret like Sveltos");

    // Untyped, so that every field of the stored object goes back as it was.
    let ar = ApiResource::erase::<SveltosCluster>(&());
    let scs = Api::<DynamicObject>::namespaced_with(inv.client.clone(), ns, &ar);
    let mut sc = scs.get(name).await.expect("bridged SveltosCluster");
    let spec = sc.data["spec"]
        .as_object_mut()
        .expect("SveltosCluster spec");
    spec.insert("kubeconfigKeyName".into(), RENEWED_KEY.into());
    spec.entry("tokenRequestRenewalOption")
        .or_insert_with(|| json!({}))["renewTokenRequestInterval"] = "45m".into();
    scs.replace(name, &by_sveltos(), &sc)
        .await
        .expect("updating the SveltosCluster like Sveltos");
}

async fn key_name_and_interval(
    inv: &Inv,
    ns: &str,
    name: &str,
) -> (Option<String>, Option<String>) {
    let sc = inv.sc(ns, name).await.expect("SveltosCluster");
    (
        sc.spec.kubeconfig_key_name,
        sc.spec
            .token_request_renewal_option
            .map(|o| o.renew_token_request_interval),
    )
}

async fn secret_key(inv: &Inv, ns: &str, name: &str, key: &str) -> Option<Vec<u8>> {
    inv.get_secret(ns, &format!("{name}-sveltos-kubeconfig"))
        .await?
        .data?
        .get(key)
        .map(|b| b.0.clone())
}

/// With `token_renewal { interval = "1h" }`: a renewal by Sveltos is no drift and apply reverts nothing; a
/// rotated source credential is planned (`kubeconfig_sha256`), written under `kubeconfig`, and the
/// SveltosCluster pointed back at it, with Sveltos' `re-kubeconfig` left in place.
#[tokio::test(flavor = "multi_thread")]
async fn sveltos_renewal_is_not_drift_and_a_rotated_source_is_written() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "renewal").await;
    let bootstrap = fixtures::unreachable_kubeconfig("bootstrap");
    inv.profile_with_secret(&ns, "p", &[], Json::Null, &bootstrap)
        .await;
    let cli = Cli::tofu();
    let tf = inv.tf(
        &cli,
        &bridge(&ns, &[&ns], "  token_renewal {\n    interval = \"1h\"\n  }"),
    );
    apply_ok(&tf);
    let key = format!("{ns}/p");
    assert_eq!(
        key_name_and_interval(&inv, &ns, "p").await,
        (Some("kubeconfig".into()), Some("1h".into())),
        "registered with the bridge's key and the configured interval"
    );
    let sha_bootstrap = state_clusters(&tf)[&key]["kubeconfig_sha256"].clone();

    let renewed = fixtures::unreachable_kubeconfig("minted-by-sveltos");
    renew_like_sveltos(&inv, &ns, "p", &renewed).await;
    let versions = async || {
        (
            inv.sc_version(&ns, "p").await,
            inv.secret_version(&ns, "p-sveltos-kubeconfig").await,
        )
    };
    let renewed_versions = versions().await;
    assert_eq!(tf.plan(), 0, "Sveltos' renewal shows as drift");
    apply_ok(&tf);
    assert_eq!(
        key_name_and_interval(&inv, &ns, "p").await,
        (Some(RENEWED_KEY.into()), Some("45m".into())),
        "apply reverted what Sveltos wrote"
    );
    assert_eq!(
        secret_key(&inv, &ns, "p", RENEWED_KEY).await.as_deref(),
        Some(renewed.as_bytes())
    );
    assert_eq!(
        versions().await,
        renewed_versions,
        "apply rewrote an object"
    );

    // The source credential rotates: planned, written under `kubeconfig`, SveltosCluster pointed back at it.
    let rotated = fixtures::unreachable_kubeconfig("rotated-source");
    inv.secret(
        &ns,
        "p-src",
        &[(keys::CLUSTER_PROFILE_LABEL, "p")],
        &[("Config", &rotated)],
    )
    .await;
    let (out, planned) = plan_clusters(&tf);
    assert_ne!(
        planned[&key]["kubeconfig_sha256"], sha_bootstrap,
        "the rotated source credential is not in the plan:\n{out}"
    );
    apply_ok(&tf);
    assert_eq!(
        secret_key(&inv, &ns, "p", "kubeconfig").await,
        Some(support::fixtures::written(&rotated)),
        "the rotated credential is not under `kubeconfig`"
    );
    assert_eq!(
        key_name_and_interval(&inv, &ns, "p").await.0.as_deref(),
        Some("kubeconfig"),
        "the SveltosCluster does not point at the rotated credential"
    );
    assert_eq!(
        secret_key(&inv, &ns, "p", RENEWED_KEY).await.as_deref(),
        Some(renewed.as_bytes()),
        "Sveltos' re-kubeconfig was not left in place"
    );
    assert_ne!(
        state_clusters(&tf)[&key]["kubeconfig_sha256"],
        sha_bootstrap
    );
    let (out, _) = plan_clusters(&tf);
    assert_eq!(
        tf.plan(),
        0,
        "plan after writing the rotated credential:\n{out}"
    );
    tf.destroy();
}
