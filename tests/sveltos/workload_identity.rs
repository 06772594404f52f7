//! `workload_identity` (bridge-wide and `overrides[...]`) with the real sveltoscluster-manager and the upstream CRD,
//! without a cloud: the SveltosCluster has no `kubeconfigName` (the CRD refuses one beside `workloadIdentity`), and
//! the manager takes the workload-identity branch: its failure is the cloud call (Azure's federated token, which
//! only a pod configured for Azure Workload Identity has), not a kubeconfig.

use std::time::Duration;

use serde_json::Value as Json;
use support::inventory::{Inv, apply_ok, bridge, diagnostics, flat};
use support::sveltos::Sveltos;
use support::{Cli, unique_namespace};

/// How long the manager may take to look at a new cluster: a hang guard, not a measurement (it looks at once).
const LOOK_DEADLINE: Duration = Duration::from_secs(180);

/// An Azure workload identity (`provider` and the provider block as given) with tenant `…000{tenant}`.
fn block(provider: &str, block: &str, tenant: u8) -> String {
    format!(
        "{{\n    provider = \"{provider}\"\n    endpoint = \"https://127.0.0.1:6443\"\n    {block} = {{ client_id = \
         \"00000000-0000-0000-0000-000000000001\", tenant_id = \"00000000-0000-0000-0000-00000000000{tenant}\" }}\n  }}"
    )
}

/// The override giving cluster `c1` an Azure workload identity (`provider` and the provider block as given).
fn identity(ns: &str, provider: &str, azure: &str) -> String {
    format!(
        "  overrides = {{\n    \"{ns}/c1\" = {{\n      workload_identity = {}\n    }}\n  }}",
        block(provider, azure, 2)
    )
}

/// A provider without its block (and the block of another) is refused at plan, at the attribute, in the CRD's
/// words; with Azure's block the cluster is registered without a kubeconfig name and the manager fails on the cloud
/// call; so does a cluster without an override under a bridge-wide `workload_identity`, which the override
/// replaces for its cluster; the plan after is empty.
#[tokio::test(flavor = "multi_thread")]
async fn the_manager_takes_the_workload_identity_branch() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let ns = unique_namespace(&inv.client, "wi").await;
    for name in ["c1", "c2"] {
        inv.profile_with_secret(&ns, name, &[], Json::Null, &sveltos.member_kubeconfig())
            .await;
    }
    let tf = inv.tf(
        &Cli::tofu(),
        &bridge(&ns, &[&ns], &identity(&ns, "AWS", "azure")),
    );
    let refused = tf.run_err(&["plan", "-input=false", "-no-color"]);
    let errors: Vec<String> = diagnostics(&refused, "Error", "Invalid workload_identity")
        .into_iter()
        .map(flat)
        .collect();
    let said = |needle: &str| errors.iter().any(|e| e.contains(needle));
    assert!(
        errors.len() == 2
            && said(r#"workload_identity.aws: aws must be set if and only if provider is "AWS""#)
            && said(
                r#"workload_identity.azure: azure must be set if and only if provider is "Azure""#
            ),
        "{errors:?}"
    );
    assert!(inv.sc(&ns, "c1").await.is_none());

    let args = format!(
        "  workload_identity {{\n    provider = \"Azure\"\n    endpoint = \"https://127.0.0.1:6443\"\n    azure {{\n      \
         client_id = \"00000000-0000-0000-0000-000000000001\"\n      tenant_id = \
         \"00000000-0000-0000-0000-000000000003\"\n    }}\n  }}\n{}",
        identity(&ns, "Azure", "azure")
    );
    inv.rewrite(&tf, &bridge(&ns, &[&ns], &args));
    apply_ok(&tf);
    // c1: its override's identity (tenant …2); c2, without an override: the bridge-wide one (tenant …3).
    for (name, tenant) in [("c1", '2'), ("c2", '3')] {
        let sc = inv.sc(&ns, name).await.expect("a SveltosCluster");
        assert_eq!(
            (sc.spec.kubeconfig_name, sc.spec.kubeconfig_key_name),
            (None, None),
            "{name}"
        );
        let wi = sc.spec.workload_identity.expect("spec.workloadIdentity");
        assert_eq!(
            (wi.provider.as_str(), wi.azure.map(|a| a.tenant_id)),
            (
                "Azure",
                Some(format!("00000000-0000-0000-0000-00000000000{tenant}"))
            ),
            "{name}"
        );
        // Until the failure names the workload identity's missing token file (a first look may fail on
        // something passing, as `pull_mode` saw).
        sveltos
            .until(
                &format!("{name}: the manager failing on AZURE_FEDERATED_TOKEN_FILE"),
                LOOK_DEADLINE,
                || async {
                    let failure = inv.sc(&ns, name).await?.status?.failure_message?;
                    failure.contains("AZURE_FEDERATED_TOKEN_FILE").then_some(())
                },
            )
            .await;
    }
    assert_eq!(tf.plan(), 0);
}
