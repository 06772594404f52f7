//! `kubeconfig-secretreader` as upstream means it, with the real CLI: the Secret supplies the credential, the
//! ClusterProfile's access provider the connection (`credentials.secret_reader_mode = "credential"`, the default),
//! with a warning naming each cluster whose Secret points elsewhere; `"whole_kubeconfig"` (the convention of
//! Sveltos' clusterinventory-controller, for migrating from it) uses the Secret's kubeconfig as it is. What was
//! written is judged by client-go (`support::client_go_view`) and by connecting with it.

use serde_json::{Value as Json, json};
use support::inventory::{Inv, apply_ok, bridge, entry, flat, one_diagnostic, run};
use support::{Cli, TestEnv, client_go_view, fixtures, unique_namespace};

/// The warning's summary (from `src/domain/plan/report.rs`).
const POINTS_ELSEWHERE: &str = "the kubeconfig-secretreader Secret points elsewhere than the ClusterProfile";

/// `text` with its first cluster's server replaced by `server`.
fn with_server(kubeconfig: &str, server: &str) -> String {
    let mut kc: Json = serde_saphyr::from_str(kubeconfig).unwrap();
    kc["clusters"][0]["cluster"]["server"] = server.into();
    kc.to_string()
}

/// A profile whose access provider publishes the member cluster (endpoint A, with its CA) and whose Secret's
/// kubeconfig names `https://127.0.0.1:1` (endpoint B, where nothing listens) with the member's credential: by
/// default it is registered against A, with a warning naming the cluster and both endpoints, and the written
/// kubeconfig reaches the member; with `secret_reader_mode = "whole_kubeconfig"` it is registered against B, as
/// clusterinventory-controller registers it, without the warning.
#[tokio::test(flavor = "multi_thread")]
async fn the_profiles_server_wins_over_the_secrets_with_a_warning() {
    let env = TestEnv::get();
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "reader-a").await;
    let member = std::fs::read_to_string(env.member_kubeconfig()).unwrap();
    let member_view = client_go_view(tempfile::tempdir().unwrap().path(), member.as_bytes()).unwrap();
    let endpoint_a = member_view["clusters"][0]["cluster"]["server"]
        .as_str()
        .unwrap()
        .to_string();
    let stored = with_server(&member, "https://127.0.0.1:1");
    inv.secret(&ns, "c1-access", &[], &[("value", &stored)]).await;
    let status = fixtures::secret_reader_status(&member, json!({"name": "c1-access", "key": "value"}));
    inv.profile(&ns, "c1", &[], status).await;
    // A neighbour whose Secret agrees with its profile: no warning for it.
    inv.secret(&ns, "c2-access", &[], &[("value", &member)]).await;
    let status = fixtures::secret_reader_status(&member, json!({"name": "c2-access", "key": "value"}));
    inv.profile(&ns, "c2", &[], status).await;

    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], ""));
    let out = apply_ok(&tf);
    let warning = one_diagnostic(&out, "Warning", POINTS_ELSEWHERE);
    let line = entry(warning, &format!("{ns}/c1"));
    let host_a = endpoint_a.trim_start_matches("https://");
    assert!(
        line.contains("127.0.0.1:1 ") && line.contains(host_a) && line.contains(&format!("{ns}/c1-access")),
        "the warning names the cluster, its Secret and both endpoints ({host_a}):\n{line}"
    );
    assert!(
        !warning.lines().any(|l| l.starts_with(&format!("- {ns}/c2 "))),
        "{warning}"
    );
    assert!(warning.contains("1 ClusterProfile(s)"), "{warning}");
    let dir = tempfile::tempdir().unwrap();
    let written = inv.bridged_kubeconfig(&ns, "c1").await.unwrap();
    let view = client_go_view(dir.path(), &written).unwrap();
    assert_eq!(view["clusters"][0]["cluster"]["server"], endpoint_a.as_str());
    assert_eq!(
        view["clusters"][0]["cluster"]["certificate-authority-data"],
        member_view["clusters"][0]["cluster"]["certificate-authority-data"]
    );
    assert_eq!(view["users"][0]["user"], member_view["users"][0]["user"]);
    let file = dir.path().join("written");
    std::fs::write(&file, &written).unwrap();
    env.kubectl_at(&file, &["get", "--raw", "/version"]);

    // Migration from clusterinventory-controller: the whole kubeconfig, endpoint B, and no warning.
    inv.rewrite(
        &tf,
        &bridge(
            &ns,
            &[&ns],
            "  credentials {\n    secret_reader_mode = \"whole_kubeconfig\"\n  }",
        ),
    );
    let out = apply_ok(&tf);
    assert!(!out.contains(POINTS_ELSEWHERE), "{out}");
    let written = inv.bridged_kubeconfig(&ns, "c1").await.unwrap();
    let view = client_go_view(dir.path(), &written).unwrap();
    assert_eq!(view["clusters"][0]["cluster"]["server"], "https://127.0.0.1:1");
    assert_eq!(written, fixtures::written(&stored));
    let (ok, out) = run(&tf, &["plan", "-input=false", "-no-color", "-detailed-exitcode"]);
    assert!(ok, "no change after apply:\n{out}");

    // A bad value is an error at its attribute path, and nothing is written.
    inv.rewrite(
        &tf,
        &bridge(&ns, &[&ns], "  credentials {\n    secret_reader_mode = \"whole\"\n  }"),
    );
    let (ok, out) = run(&tf, &["plan", "-input=false", "-no-color"]);
    assert!(!ok && flat(&out).contains("Invalid credentials.secret_reader_mode"), "{out}");
    inv.rewrite(&tf, &bridge(&ns, &[&ns], ""));
    tf.destroy();
}
