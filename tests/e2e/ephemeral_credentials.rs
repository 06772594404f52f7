//! `sveltos_cluster_credentials` against the real control plane and its member cluster, with the real CLIs:
//! * an aliased `provider "sveltos"` configured from the ephemeral resource reads the member cluster (a
//!   ClusterProfile that exists only there), with `tofu` and the `terraform` on PATH (>= 1.10);
//! * the member credential (a real ServiceAccount token minted on the member: the canary) appears in neither
//!   `terraform.tfstate`, the saved plan file (unzipped), `show -json` of plan and state, nor the
//!   `TF_LOG=TRACE` log (`TF_LOG_PATH`);
//! * an exec access provider's credential, short-lived, is renewed while the run still needs it;
//! * a refused source is an error naming the profile and the cause, without the credential;
//! * Terraform 1.0.3 fails only on a configuration with an `ephemeral` block; the rest of the provider works;
//! * a tenant's kubeconfig with an `exec` user is never handed out, so its command never runs on the Terraform
//!   machine, even with `allow_exec_kubeconfigs = true` (refused on this resource).

use std::path::{Path, PathBuf};

use kube::api::{Api, PostParams};
use serde_json::json;
use support::{Cli, TestEnv, Tf, fixtures, inventory, unique_name, unique_namespace};
use tfsveltos::api::{ClusterProfile, keys};

/// What the member cluster holds for one test.
struct Member {
    /// Held while the test runs: it writes to the member cluster (see `support::hub`).
    _writing: tokio::sync::RwLockReadGuard<'static, ()>,
    /// Namespace on the member with a ClusterProfile named [`Member::profile`].
    ns: String,
    profile: String,
    /// A ServiceAccount token minted on the member that may read ClusterProfiles and Secrets there.
    token: String,
    server: String,
    ca_data: String,
}

impl Member {
    /// The member kubeconfig, authenticated with the ServiceAccount token.
    fn kubeconfig(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: member\n  cluster:\n    server: {}\n    \
             certificate-authority-data: {}\nusers:\n- name: reader\n  user:\n    token: {}\ncontexts:\n- name: member\n  \
             context: {{cluster: member, user: reader}}\ncurrent-context: member\n",
            self.server, self.ca_data, self.token
        )
    }
}

async fn member_setup(env: &TestEnv) -> Member {
    let writing = support::hub::writing().await;
    support::hub::install_crd(env);
    let kc = env.member_kubeconfig();
    let member = env.member_client().await;
    let ns = unique_namespace(&member, "eph-member").await;
    let profile = unique_name("only-on-member");
    Api::<ClusterProfile>::namespaced(member.clone(), &ns)
        .create(
            &PostParams::default(),
            &fixtures::cluster_profile(&ns, &profile, "member-manager", &[]),
        )
        .await
        .expect("creating the ClusterProfile on the member");
    let role = unique_name("eph-reader");
    env.kubectl_at(kc, &["create", "serviceaccount", "reader", "-n", &ns]);
    env.kubectl_at(
        kc,
        &[
            "create",
            "clusterrole",
            &role,
            "--verb=get,list",
            "--resource=clusterprofiles.multicluster.x-k8s.io,secrets,namespaces",
        ],
    );
    env.kubectl_at(
        kc,
        &[
            "create",
            "clusterrolebinding",
            &role,
            &format!("--clusterrole={role}"),
            &format!("--serviceaccount={ns}:reader"),
        ],
    );
    let token = env
        .kubectl_at(kc, &["create", "token", "reader", "-n", &ns])
        .trim()
        .to_string();
    assert!(token.len() > 100, "a ServiceAccount token (JWT)");
    let text = std::fs::read_to_string(kc).expect("member kubeconfig");
    let ca_data = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("certificate-authority-data:"))
        .expect("member CA")
        .trim()
        .to_string();
    Member {
        _writing: writing,
        ns,
        profile,
        token,
        server: TestEnv::server_url(kc),
        ca_data,
    }
}

async fn main_profile(client: &kube::Client, ns: &str, name: &str, status: serde_json::Value) {
    inventory::create_profile(client, ns, name, "test-manager", &[], status).await;
}

async fn labelled_secret(client: &kube::Client, ns: &str, name: &str, profile: &str, kc: &str) {
    let labels = [(keys::CLUSTER_PROFILE_LABEL, profile)];
    inventory::create_secret(client, ns, name, &labels, &[("Config", kc)]).await;
}

/// The configuration: the ephemeral credentials of `ns/profile` (with `credentials`), an aliased provider
/// configured from them, and a read of the member's ClusterProfiles through it; `extra` is appended.
fn config(
    main_kc: &Path,
    ns: &str,
    profile: &str,
    credentials: &str,
    member_ns: &str,
    extra: &str,
) -> String {
    format!(
        r#"{header}
ephemeral "sveltos_cluster_credentials" "member" {{
  namespace = "{ns}"
  name      = "{profile}"
{credentials}
}}

provider "sveltos" {{
  alias                  = "member"
  host                   = ephemeral.sveltos_cluster_credentials.member.host
  cluster_ca_certificate = ephemeral.sveltos_cluster_credentials.member.cluster_ca_certificate
  token                  = ephemeral.sveltos_cluster_credentials.member.token
}}

data "sveltos_clusterprofiles" "on_member" {{
  provider   = sveltos.member
  namespaces = ["{member_ns}"]
}}

output "member_profiles" {{
  value = [for p in data.sveltos_clusterprofiles.on_member.cluster_profiles : p.name]
}}
{extra}"#,
        header = fixtures::provider_header(main_kc, None)
    )
}

fn assert_no_canary(cli: &str, what: &str, text: &str, canary: &str) {
    assert!(
        !text.contains(canary),
        "{cli}: the member credential leaked into {what}"
    );
}

/// The entries of a saved plan file (a zip archive), concatenated.
fn unzipped(plan: &Path) -> String {
    let out = std::process::Command::new("unzip")
        .arg("-p")
        .arg(plan)
        .output()
        .expect("running unzip");
    assert!(out.status.success(), "unzip -p {}", plan.display());
    assert!(!out.stdout.is_empty());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

async fn aliased_provider_reads_the_member(cli: Cli) {
    let env = TestEnv::get();
    let member = member_setup(env).await;
    let client = env.client().await;
    let ns = unique_namespace(&client, "eph").await;
    main_profile(&client, &ns, "member", serde_json::Value::Null).await;
    labelled_secret(&client, &ns, "member-kc", "member", &member.kubeconfig()).await;

    let mut tf = Tf::new(&cli);
    let trace = tf.dir().join("trace.log");
    tf.env("TF_LOG", "TRACE").env("TF_LOG_PATH", &trace);
    tf.write_main(&config(&env.kubeconfig, &ns, "member", "", &member.ns, ""));
    tf.run_ok(&["plan", "-input=false", "-no-color", "-out=tfplan"]);
    let plan_json = tf.run_ok(&["show", "-json", "-no-color", "tfplan"]);
    let plan_file = unzipped(&tf.dir().join("tfplan"));
    tf.run_ok(&[
        "apply",
        "-input=false",
        "-no-color",
        "-auto-approve",
        "tfplan",
    ]);
    let outputs = tf.outputs_json();
    assert_eq!(
        outputs["member_profiles"]["value"],
        json!([member.profile]),
        "{}: the aliased provider read the member cluster",
        cli.name
    );
    let state = std::fs::read_to_string(tf.dir().join("terraform.tfstate")).expect("state");
    let show = tf.run_ok(&["show", "-json", "-no-color"]);
    let log = std::fs::read_to_string(&trace).expect("TF_LOG_PATH written");
    assert!(
        log.contains("sveltos_cluster_credentials"),
        "{}: the trace covers the ephemeral resource",
        cli.name
    );
    for (what, text) in [
        ("terraform.tfstate", &state),
        ("the saved plan file", &plan_file),
        ("show -json of the plan", &plan_json),
        ("show -json of the state", &show),
        ("the TF_LOG=TRACE log", &log),
    ] {
        assert_no_canary(&cli.name, what, text, &member.token);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn aliased_provider_reads_the_member_with_tofu() {
    aliased_provider_reads_the_member(Cli::tofu()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn aliased_provider_reads_the_member_with_terraform() {
    if let Some(cli) = Cli::terraform_needed() {
        aliased_provider_reads_the_member(cli).await;
    }
}

/// An exec plugin printing the member token (read from a file) valid for `lifetime_secs`, counting its runs.
fn exec_plugin(dir: &Path, token: &str, lifetime_secs: u32) -> (PathBuf, PathBuf) {
    let token_file = dir.join("token");
    std::fs::write(&token_file, token).unwrap();
    let count = dir.join("runs");
    let script = dir.join("plugin.sh");
    support::write_executable(
        &script,
        &format!(
            "#!/bin/sh\necho run >> \"$COUNT_FILE\"\n\
             exp=$(date -u -d \"@$(( $(date +%s) + {lifetime_secs} ))\" +%Y-%m-%dT%H:%M:%SZ)\n\
             printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"%s\",\"expirationTimestamp\":\"%s\"}}}}' \"$(cat \"$TOKEN_FILE\")\" \"$exp\"\n"
        ),
    );
    let providers = dir.join("providers.json");
    std::fs::write(
        &providers,
        json!({"providers": [{"name": "token-plugin", "execConfig": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": script.display().to_string(),
            "env": [
                {"name": "COUNT_FILE", "value": count.display().to_string()},
                {"name": "TOKEN_FILE", "value": token_file.display().to_string()},
            ],
        }}]})
        .to_string(),
    )
    .unwrap();
    (providers, count)
}

#[tokio::test(flavor = "multi_thread")]
async fn exec_credentials_are_renewed_while_the_run_needs_them() {
    let env = TestEnv::get();
    let member = member_setup(env).await;
    let client = env.client().await;
    let ns = unique_namespace(&client, "eph-exec").await;
    main_profile(
        &client,
        &ns,
        "exec-member",
        json!({"accessProviders": [{"name": "token-plugin", "cluster": {
            "server": member.server, "certificate-authority-data": member.ca_data}}]}),
    )
    .await;
    let scratch = tempfile::tempdir().unwrap();
    // 12 s credentials renewed 9 s ahead: a renewal about 3 s after each open or renew.
    let (providers, count) = exec_plugin(scratch.path(), &member.token, 12);
    let credentials = format!(
        "  credentials {{\n    exec_providers_file = \"{}\"\n    refresh_before      = \"9s\"\n    \
         exec_providers      = {{ \"token-plugin\" = {{ namespaces = [\"{ns}\"] }} }}\n  }}",
        providers.display()
    );
    // A resource whose provisioner uses the credentials for 10 s keeps them open that long.
    let hold = r#"
resource "terraform_data" "hold" {
  provisioner "local-exec" {
    command     = "sleep 10"
    environment = { EXPIRES_AT = ephemeral.sveltos_cluster_credentials.member.expires_at }
  }
}
"#;
    let cli = Cli::tofu();
    let mut tf = Tf::new(&cli);
    let trace = tf.dir().join("trace.log");
    tf.env("TF_LOG", "TRACE").env("TF_LOG_PATH", &trace);
    tf.write_main(&config(
        &env.kubeconfig,
        &ns,
        "exec-member",
        &credentials,
        &member.ns,
        hold,
    ));
    tf.apply();
    let runs = std::fs::read_to_string(&count).unwrap().lines().count();
    let log = std::fs::read_to_string(&trace).unwrap();
    assert!(
        log.contains("renewed exec credentials"),
        "the provider renewed the credentials (plugin runs: {runs})"
    );
    // Opened at plan and at apply, renewed at least twice while the provisioner slept.
    assert!(runs >= 4, "plugin runs: {runs}");
    assert_eq!(
        tf.outputs_json()["member_profiles"]["value"],
        json!([member.profile])
    );
    let state = std::fs::read_to_string(tf.dir().join("terraform.tfstate")).unwrap();
    assert_no_canary(&cli.name, "terraform.tfstate", &state, &member.token);
    assert_no_canary(&cli.name, "the TF_LOG=TRACE log", &log, &member.token);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_source_is_an_error_naming_the_profile_and_the_cause() {
    let env = TestEnv::get();
    let client = env.client().await;
    let ns = unique_namespace(&client, "eph-refused").await;
    main_profile(&client, &ns, "file-reader", serde_json::Value::Null).await;
    let canary = "canary-refused-4e1b";
    let kc = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: 'https://127.0.0.1:1'}}\n\
         users:\n- name: u\n  user:\n    token: {canary}\n    tokenFile: /etc/passwd\n\
         contexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n"
    );
    labelled_secret(&client, &ns, "file-reader-kc", "file-reader", &kc).await;
    main_profile(&client, &ns, "no-creds", serde_json::Value::Null).await;
    let tf = Tf::new(&Cli::tofu());
    for (profile, cause) in [
        ("file-reader", "users[0].user.tokenFile"),
        ("no-creds", "no usable credential source"),
        ("absent", "there is no ClusterProfile"),
    ] {
        tf.write_main(&format!(
            "{}\nephemeral \"sveltos_cluster_credentials\" \"x\" {{\n  namespace = \"{ns}\"\n  name      = \"{profile}\"\n}}\n\
             provider \"sveltos\" {{\n  alias = \"m\"\n  host  = ephemeral.sveltos_cluster_credentials.x.host\n  token = ephemeral.sveltos_cluster_credentials.x.token\n}}\n\
             data \"sveltos_clusterprofiles\" \"m\" {{\n  provider = sveltos.m\n}}\n",
            fixtures::provider_header(&env.kubeconfig, None)
        ));
        let err = tf.run_err(&["plan", "-input=false", "-no-color"]);
        assert!(
            err.contains(&format!("ClusterProfile {ns}/{profile}")) && err.contains(cause),
            "{profile}: {err}"
        );
        assert!(!err.contains(canary), "{profile}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn terraform_1_0_3_fails_only_on_the_ephemeral_block() {
    let env = TestEnv::get();
    let client = env.client().await;
    let ns = unique_namespace(&client, "eph-old").await;
    main_profile(&client, &ns, "c1", serde_json::Value::Null).await;
    let tf = Tf::new(&Cli::terraform_1_0_3());
    let header = fixtures::provider_header(&env.kubeconfig, None);
    let data = format!(
        "data \"sveltos_clusterprofiles\" \"all\" {{\n  namespaces = [\"{ns}\"]\n}}\n\
         output \"names\" {{\n  value = [for p in data.sveltos_clusterprofiles.all.cluster_profiles : p.name]\n}}\n"
    );
    tf.write_main(&format!("{header}\n{data}"));
    tf.apply();
    assert_eq!(tf.outputs_json()["names"]["value"], json!(["c1"]));
    tf.write_main(&format!(
        "{header}\n{data}\nephemeral \"sveltos_cluster_credentials\" \"x\" {{\n  namespace = \"{ns}\"\n  name      = \"c1\"\n}}\n"
    ));
    let err = tf.run_err(&["plan", "-input=false", "-no-color"]);
    assert!(
        err.contains("Unsupported block type") && err.contains("\"ephemeral\""),
        "{err}"
    );
}

/// The attack of the security review (M4): a tenant's Secret holds a kubeconfig whose user runs a command, and the
/// configuration hands `kubeconfig` to `kubectl` on the Terraform machine. The command never runs: with
/// `allow_exec_kubeconfigs = true` the configuration is refused at that attribute, without it the source is refused
/// naming the profile and the `exec` user; either way no kubeconfig is returned.
#[tokio::test(flavor = "multi_thread")]
async fn a_tenant_exec_kubeconfig_never_runs_on_the_terraform_machine() {
    let env = TestEnv::get();
    let client = env.client().await;
    let ns = unique_namespace(&client, "eph-exec").await;
    main_profile(&client, &ns, "t3", serde_json::Value::Null).await;
    let tf = Tf::new(&Cli::tofu());
    let marker = tf.dir().join("pwned-by-tenant");
    let kc = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: 'https://127.0.0.1:1'}}\n\
         users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      \
         command: /bin/sh\n      args: ['-c', 'id > {marker}; exit 1']\n      interactiveMode: Never\n\
         contexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n",
        marker = marker.display()
    );
    labelled_secret(&client, &ns, "t3-src", "t3", &kc).await;
    let kubectl = support::bin_dir().join("kubectl");
    for (credentials, expected) in [
        (
            "  credentials {\n    allow_exec_kubeconfigs = true\n  }\n",
            "Exec kubeconfigs are never handed out",
        ),
        ("", "users[0].user.exec"),
    ] {
        tf.write_main(&format!(
            "{header}\nephemeral \"sveltos_cluster_credentials\" \"x\" {{\n  namespace = \"{ns}\"\n  name      = \"t3\"\n{credentials}}}\n\
             resource \"terraform_data\" \"use\" {{\n  provisioner \"local-exec\" {{\n    \
             command     = \"printf '%s' \\\"$KC\\\" > kc.yaml && {kubectl} --kubeconfig kc.yaml get --raw /version\"\n    \
             environment = {{ KC = ephemeral.sveltos_cluster_credentials.x.kubeconfig }}\n  }}\n}}\n",
            header = fixtures::provider_header(&env.kubeconfig, None),
            kubectl = kubectl.display(),
        ));
        let err = tf.run_err(&["apply", "-auto-approve", "-input=false", "-no-color"]);
        assert!(
            !marker.exists(),
            "{credentials:?}: the tenant's command ran on the Terraform machine:\n{err}"
        );
        let flat = err.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(expected),
            "{credentials:?}: expected {expected:?} in:\n{err}"
        );
    }
}
