//! The `sveltos_clusterprofile` and `sveltos_clusterprofiles` data sources against a real control plane, driven by
//! every available CLI (`tofu`, `terraform-1.0.3`, the `terraform` on PATH): the reported attributes, the filters,
//! the credential report, the error diagnostics, and that no credential bytes reach state or outputs.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value as Json, json};
use support::{
    Cli, TestEnv, Tf, fixtures,
    inventory::{self, create_secret},
    unique_namespace,
};
use tfsveltos::api::keys;

/// A token that must never appear outside Secrets.
const CANARY_TOKEN: &str = "canary-token-7f3c9e1d";
/// Base64 of a fake CA certificate given in an access provider; must not be reported either.
const CANARY_CA: &str = "Y2FuYXJ5LWNhLWRhdGEtNWIyYQ==";

/// A providers file naming the exec plugin `token-plugin` (never run by the data sources).
const PROVIDERS_FILE: &str = r#"{"providers":[{"name":"token-plugin","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"/bin/false"}}]}"#;

fn kubeconfig() -> String {
    fixtures::unreachable_kubeconfig(CANARY_TOKEN)
}

fn condition(status: &str) -> Json {
    json!([{
        "type": keys::CONTROL_PLANE_HEALTHY,
        "status": status,
        "reason": "Probe",
        "message": format!("control plane {status}"),
        "lastTransitionTime": "2025-01-02T03:04:05Z",
    }])
}

/// The inventory the main test reads: five profiles in `ns`, one more in `other`.
///
/// * `healthy`: labels `env="true"`, `tier=""`, healthy, version and properties, a kubeconfig Secret labelled
///   for it (key `Config`);
/// * `sick`: label `env="false"`, unhealthy, no credentials;
/// * `reader`: label `env="true"`, healthy, a `kubeconfig-secretreader` access provider with CA data naming
///   Secret `reader-kc` (key `value`) in `ns`;
/// * `twice`: two Secrets labelled for it;
/// * `exec`: an exec-plugin access provider `token-plugin`;
/// * `consumed`: one Secret in `ns` and one in a consumer namespace (`creds`, labelled
///   `x-k8s.io/cluster-inventory-consumer=<creds>`);
/// * `other/healthy` (same name, another namespace), whose Secret is in `ns` but labelled with its namespace.
async fn seed(client: &kube::Client) -> (String, String, String) {
    let ns = unique_namespace(client, "ds").await;
    let other = unique_namespace(client, "ds-other").await;
    let kc = kubeconfig();
    inventory::create_profile(
        client,
        &ns,
        "healthy",
        "test-manager",
        &[("env", "true"), ("tier", "")],
        json!({
            "conditions": condition("True"),
            "version": {"kubernetes": "v1.37.2"},
            "properties": [{"name": "region", "value": "eu-west"}],
        }),
    )
    .await;
    create_secret(
        client,
        &ns,
        "healthy-kc",
        &[(keys::CLUSTER_PROFILE_LABEL, "healthy")],
        &[("Config", &kc)],
    )
    .await;
    inventory::create_profile(
        client,
        &ns,
        "sick",
        "test-manager",
        &[("env", "false")],
        json!({ "conditions": condition("False") }),
    )
    .await;
    inventory::create_profile(
        client,
        &ns,
        "reader",
        "test-manager",
        &[("env", "true")],
        json!({
            "conditions": condition("True"),
            "accessProviders": [{
                "name": keys::SECRET_READER_PROVIDER,
                "cluster": {
                    "server": "https://reader.example:6443",
                    "certificate-authority-data": CANARY_CA,
                    "tls-server-name": "reader.internal",
                    "extensions": [{
                        "name": keys::EXEC_EXTENSION,
                        "extension": {"name": "reader-kc", "key": "value"},
                    }],
                },
            }],
        }),
    )
    .await;
    create_secret(client, &ns, "reader-kc", &[], &[("value", &kc)]).await;
    inventory::create_profile(client, &ns, "twice", "test-manager", &[], json!({})).await;
    for secret in ["twice-a", "twice-b"] {
        create_secret(
            client,
            &ns,
            secret,
            &[(keys::CLUSTER_PROFILE_LABEL, "twice")],
            &[("Config", &kc)],
        )
        .await;
    }
    inventory::create_profile(
        client,
        &ns,
        "exec", "test-manager",
        &[],
        json!({
            "accessProviders": [{
                "name": "token-plugin",
                "cluster": {"server": "https://exec.example:6443", "insecure-skip-tls-verify": true},
            }],
        }),
    )
    .await;
    inventory::create_profile(
        client,
        &other,
        "healthy",
        "test-manager",
        &[("env", "true")],
        json!({ "conditions": condition("True") }),
    )
    .await;
    create_secret(
        client,
        &ns,
        "other-healthy-kc",
        &[
            (keys::CLUSTER_PROFILE_LABEL, "healthy"),
            (keys::CLUSTER_PROFILE_NAMESPACE_LABEL, other.as_str()),
        ],
        &[("kubeconfig", &kc)],
    )
    .await;
    // `consumed`: one Secret in `ns`, one in a namespace labelled for a consumer (named like that namespace).
    let creds = unique_namespace(client, "ds-creds").await;
    Api::<Namespace>::all(client.clone())
        .patch(
            &creds,
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"labels": {keys::CONSUMER_NAMESPACE_LABEL: creds.as_str()}}}),
            ),
        )
        .await
        .expect("labelling the consumer namespace");
    inventory::create_profile(client, &ns, "consumed", "test-manager", &[], json!({})).await;
    create_secret(
        client,
        &ns,
        "consumed-local",
        &[(keys::CLUSTER_PROFILE_LABEL, "consumed")],
        &[("Config", &kc)],
    )
    .await;
    create_secret(
        client,
        &creds,
        "consumed-kc",
        &[
            (keys::CLUSTER_PROFILE_LABEL, "consumed"),
            (keys::CLUSTER_PROFILE_NAMESPACE_LABEL, ns.as_str()),
        ],
        &[("Config", &kc)],
    )
    .await;
    (ns, other, creds)
}

fn header(env: &TestEnv) -> String {
    fixtures::provider_header(&env.kubeconfig, None)
}

fn names(v: &Json) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|p| p["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn assert_no_canary(cli: &str, what: &str, text: &str) {
    assert!(
        !text.contains(CANARY_TOKEN) && !text.contains(CANARY_CA),
        "{cli}: a credential canary leaked into {what}:\n{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn data_sources_report_profiles_filters_and_credentials() {
    let env = TestEnv::get();
    let client = env.client().await;
    let (ns, other, creds) = seed(&client).await;

    let config = format!(
        r#"{header}
data "sveltos_clusterprofile" "one" {{
  namespace = "{ns}"
  name      = "healthy"
}}

data "sveltos_clusterprofile" "reader" {{
  namespace = "{ns}"
  name      = "reader"
}}

data "sveltos_clusterprofile" "exec" {{
  namespace = "{ns}"
  name      = "exec"
  credentials {{
    exec_providers_file = "${{path.module}}/providers.json"
    exec_providers = {{
      "token-plugin" = {{ namespaces = ["{ns}"] }}
    }}
  }}
}}

data "sveltos_clusterprofile" "consumed" {{
  namespace = "{ns}"
  name      = "consumed"
  credentials {{
    consumer                  = "{creds}"
    profile_namespace_secrets = false
  }}
}}

data "sveltos_clusterprofile" "consumed_too" {{
  namespace = "{ns}"
  name      = "consumed"
  credentials {{
    consumer = "{creds}"
  }}
}}

data "sveltos_clusterprofiles" "all" {{
  namespaces = ["{ns}", "{other}"]
  credentials {{
    secret_namespaces = ["{ns}", "{creds}"]
  }}
}}

data "sveltos_clusterprofiles" "all_unlisted" {{
  namespaces = ["{other}"]
}}

data "sveltos_clusterprofiles" "healthy" {{
  namespaces      = ["{ns}"]
  require_healthy = true
}}

data "sveltos_clusterprofiles" "selected" {{
  namespaces     = ["{ns}", "{other}"]
  label_selector = "env=true,tier"
}}

data "sveltos_clusterprofiles" "by_manager" {{
  namespaces      = ["{ns}"]
  cluster_manager = "someone-else"
}}

data "sveltos_clusterprofiles" "strict_keys" {{
  namespaces = ["{ns}"]
  credentials {{
    kubeconfig_keys = ["kubeconfig"]
  }}
}}

output "one" {{
  value = data.sveltos_clusterprofile.one
}}

output "reader" {{
  value = data.sveltos_clusterprofile.reader
}}

output "exec" {{
  value = data.sveltos_clusterprofile.exec
}}

output "consumed" {{
  value = data.sveltos_clusterprofile.consumed
}}

output "consumed_too" {{
  value = data.sveltos_clusterprofile.consumed_too
}}

output "all" {{
  value = data.sveltos_clusterprofiles.all.cluster_profiles
}}

output "all_unlisted" {{
  value = data.sveltos_clusterprofiles.all_unlisted.cluster_profiles
}}

output "healthy" {{
  value = [for p in data.sveltos_clusterprofiles.healthy.cluster_profiles : p.id]
}}

output "selected" {{
  value = [for p in data.sveltos_clusterprofiles.selected.cluster_profiles : p.id]
}}

output "by_manager" {{
  value = length(data.sveltos_clusterprofiles.by_manager.cluster_profiles)
}}

output "strict_keys" {{
  value = {{ for p in data.sveltos_clusterprofiles.strict_keys.cluster_profiles : p.id => p.ready_to_bridge }}
}}
"#,
        header = header(env)
    );

    for cli in Cli::all() {
        let name = cli.name.clone();
        let tf = Tf::new(&cli);
        tf.write_main(&config);
        tf.write_file("providers.json", PROVIDERS_FILE);
        let applied = tf.apply();
        assert_no_canary(&name, "apply output", &applied);
        let out = tf.outputs_json();
        let get = |k: &str| out[k]["value"].clone();

        // The single data source: identity, labels with "true" and "", status, credentials.
        let one = get("one");
        assert_eq!(one["id"], format!("{ns}/healthy"), "{name}: {one}");
        assert_eq!(one["name"], "healthy");
        assert_eq!(one["namespace"], ns.as_str());
        assert_eq!(one["labels"], json!({"env": "true", "tier": ""}), "{name}");
        assert_eq!(one["display_name"], "healthy display");
        assert_eq!(one["cluster_manager"], "test-manager");
        assert_eq!(one["kubernetes_version"], "v1.37.2");
        assert_eq!(one["properties"], json!({"region": "eu-west"}));
        assert_eq!(one["conditions"][0]["type"], "ControlPlaneHealthy");
        assert_eq!(one["conditions"][0]["status"], "True");
        assert_eq!(one["conditions"][0]["reason"], "Probe");
        assert_eq!(
            one["conditions"][0]["last_transition_time"],
            "2025-01-02T03:04:05Z"
        );
        assert_eq!(one["access_providers"], json!([]));
        assert_eq!(
            one["credential_source"],
            format!("secret:{ns}/healthy-kc#Config"),
            "{name}"
        );
        assert_eq!(one["ready_to_bridge"], true);

        // kubeconfig-secretreader: reported without CA data or extension contents.
        let reader = get("reader");
        assert_eq!(
            reader["credential_source"],
            format!("access-provider:kubeconfig-secretreader:{ns}/reader-kc#value"),
            "{name}: {reader}"
        );
        assert_eq!(reader["ready_to_bridge"], true);
        let ap = &reader["access_providers"][0];
        assert_eq!(ap["name"], keys::SECRET_READER_PROVIDER);
        assert_eq!(ap["server"], "https://reader.example:6443");
        assert_eq!(ap["tls_server_name"], "reader.internal");
        assert_eq!(ap["has_ca"], true);
        assert_eq!(ap["insecure_skip_tls_verify"], false);
        assert_eq!(ap["extensions"], json!([keys::EXEC_EXTENSION]));

        // The list: every profile, ordered by namespace/name, the same name in two namespaces kept apart.
        let all = get("all");
        let mut expected = vec![
            format!("{ns}/consumed"),
            format!("{ns}/exec"),
            format!("{ns}/healthy"),
            format!("{ns}/reader"),
            format!("{ns}/sick"),
            format!("{ns}/twice"),
            format!("{other}/healthy"),
        ];
        expected.sort();
        assert_eq!(names(&all), expected, "{name}");
        let by_id: BTreeMap<String, Json> = all
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["id"].as_str().unwrap().to_string(), p.clone()))
            .collect();
        let sick = &by_id[&format!("{ns}/sick")];
        assert_eq!(sick["ready_to_bridge"], false);
        let why = sick["credential_source"].as_str().unwrap();
        assert!(
            why.starts_with("none: ") && why.contains("x-k8s.io/cluster-profile=sick"),
            "{name}: {why}"
        );
        let other_healthy = &by_id[&format!("{other}/healthy")];
        assert_eq!(
            other_healthy["credential_source"],
            format!("secret:{ns}/other-healthy-kc#kubeconfig"),
            "{name}: a Secret in another namespace, claimed with the namespace label"
        );
        assert_eq!(other_healthy["ready_to_bridge"], true);
        // Without the operator listing its namespace, the same Secret is not used: whoever writes namespace
        // {ns} cannot supply credentials to a profile in {other}.
        let unlisted = get("all_unlisted");
        let unlisted = &unlisted.as_array().unwrap()[0];
        assert_eq!(unlisted["ready_to_bridge"], false, "{name}");
        assert!(
            unlisted["credential_source"]
                .as_str()
                .unwrap()
                .contains("secret_namespaces"),
            "{name}: {unlisted}"
        );
        let twice = &by_id[&format!("{ns}/twice")];
        assert_eq!(
            twice["credential_source"],
            format!("ambiguous: {ns}/twice-a, {ns}/twice-b"),
            "{name}: two candidate Secrets are named, not picked from"
        );
        assert_eq!(twice["ready_to_bridge"], false);
        let exec = &by_id[&format!("{ns}/exec")];
        let why = exec["credential_source"].as_str().unwrap();
        assert!(
            why.starts_with("none: ")
                && why.contains("token-plugin needs credentials.exec_providers_file"),
            "{name}: {why}"
        );
        assert_eq!(
            exec["access_providers"][0]["insecure_skip_tls_verify"],
            true
        );
        assert_eq!(exec["access_providers"][0]["has_ca"], false);
        // With the providers file the exec provider is the source.
        let exec = get("exec");
        assert_eq!(
            exec["credential_source"], "exec:token-plugin",
            "{name}: {exec}"
        );
        assert_eq!(exec["ready_to_bridge"], true);
        // Both Secrets claim `consumed` (the one next to it, the one in a listed or consumer namespace), whether
        // `consumer` is set or not; with `profile_namespace_secrets = false` only the consumer namespace's counts.
        let both = {
            let mut both = [
                format!("{creds}/consumed-kc"),
                format!("{ns}/consumed-local"),
            ];
            both.sort();
            format!("ambiguous: {}", both.join(", "))
        };
        assert_eq!(
            by_id[&format!("{ns}/consumed")]["credential_source"],
            both,
            "{name}"
        );
        assert_eq!(
            get("consumed_too")["credential_source"],
            both,
            "{name}: credentials.consumer alone is no filter"
        );
        let consumed = get("consumed");
        assert_eq!(
            consumed["credential_source"],
            format!("secret:{creds}/consumed-kc#Config"),
            "{name}: credentials.profile_namespace_secrets = false"
        );
        assert_eq!(consumed["ready_to_bridge"], true);
        assert_eq!(
            by_id[&format!("{ns}/healthy")]["labels"],
            json!({"env": "true", "tier": ""})
        );

        // Filters.
        assert_eq!(
            get("healthy"),
            json!([format!("{ns}/healthy"), format!("{ns}/reader")]),
            "{name}: healthy_only"
        );
        assert_eq!(
            get("selected"),
            json!([format!("{ns}/healthy")]),
            "{name}: label_selector env=true,tier"
        );
        assert_eq!(get("by_manager"), json!(0), "{name}: cluster_manager");
        // Only the key `kubeconfig` counts: the `Config` Secret no longer qualifies, the reader's key is explicit.
        assert_eq!(
            get("strict_keys"),
            json!({
                format!("{ns}/consumed"): false,
                format!("{ns}/exec"): false,
                format!("{ns}/healthy"): false,
                format!("{ns}/reader"): true,
                format!("{ns}/sick"): false,
                format!("{ns}/twice"): false,
            }),
            "{name}: credentials.kubeconfig_keys"
        );

        // Reading again changes nothing.
        assert_eq!(tf.plan(), 0, "{name}: second plan");

        // No credential bytes in state, outputs or plan output.
        let state = tf.show_json().to_string();
        assert!(state.contains("healthy-kc"), "{name}: state has the data");
        assert_no_canary(&name, "show -json", &state);
        let raw = std::fs::read_to_string(tf.dir().join("terraform.tfstate")).unwrap_or_default();
        assert_no_canary(&name, "terraform.tfstate", &raw);
        assert_no_canary(&name, "output -json", &out.to_string());
        let plan = tf.run_ok(&["plan", "-input=false", "-no-color"]);
        assert_no_canary(&name, "plan output", &plan);
        let traced = tf
            .command(&["plan", "-input=false", "-no-color"])
            .env("TF_LOG", "TRACE")
            .output()
            .expect("plan with TF_LOG=TRACE");
        let log = support::describe_output(&traced);
        assert!(
            traced.status.success(),
            "{name}: traced plan failed:\n{}",
            log.lines()
                .filter(|l| l.contains("[ERROR]") || l.contains("Error"))
                .take(40)
                .collect::<Vec<_>>()
                .join("\n")
        );
        assert!(
            log.contains("sveltos"),
            "{name}: the trace shows the provider"
        );
        assert_no_canary(&name, "TF_LOG=TRACE output", &log);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn data_sources_report_errors_with_attribute_paths() {
    let env = TestEnv::get();
    let client = env.client().await;
    let ns = unique_namespace(&client, "ds-err").await;
    let cases = [
        (
            "missing profile",
            format!(
                "data \"sveltos_clusterprofile\" \"x\" {{\n  namespace = \"{ns}\"\n  name      = \"nope\"\n}}\n"
            ),
            vec![
                format!("ClusterProfile {ns}/nope not found"),
                "name      = \"nope\"".to_string(),
            ],
        ),
        (
            "bad selector",
            "data \"sveltos_clusterprofiles\" \"x\" {\n  label_selector = \"env in (a\"\n}\n".to_string(),
            vec![
                "Invalid label selector".to_string(),
                "label_selector = \"env in (a\"".to_string(),
            ],
        ),
        (
            "unreadable providers file",
            "data \"sveltos_clusterprofiles\" \"x\" {\n  credentials {\n    exec_providers_file = \"/nonexistent/providers.json\"\n  }\n}\n".to_string(),
            vec![
                "Cannot read the exec providers file".to_string(),
                "exec_providers_file = \"/nonexistent/providers.json\"".to_string(),
            ],
        ),
    ];
    for cli in Cli::all() {
        for (what, body, expect) in &cases {
            let tf = Tf::new(&cli);
            tf.write_main(&format!("{}\n{body}", header(env)));
            let err = tf.run_err(&["plan", "-input=false", "-no-color"]);
            for e in expect {
                assert!(
                    err.contains(e.as_str()),
                    "{}: {what}: expected {e:?} in:\n{err}",
                    cli.name
                );
            }
        }
    }
    // The namespace stays (namespaces are never finalized here); make sure it exists to prove setup worked.
    assert!(
        Api::<Namespace>::all(client.clone())
            .get_opt(&ns)
            .await
            .unwrap()
            .is_some()
    );
}
