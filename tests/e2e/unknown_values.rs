//! Issue 36, item 1: every argument of `sveltos_cluster_inventory_bridge` may be unknown at plan (a namespace
//! created in the same apply, a path another resource writes), and the plan is then consistent with the final
//! one: no "Provider produced inconsistent final plan", and an empty plan once the values are known.
//!
//! The cases are generated from the provider's schema as the CLI reads it (`providers schema -json`): every
//! argument at the top level, in single nested blocks and single nested attributes (at any depth), and in the
//! entries of map nested attributes, made unknown in turn; lists and maps also with one element unknown. Each
//! case is one bridge of its own (its own namespace and ClusterProfile) in one configuration; a value is made
//! unknown by `terraform_data` (its `output` is unknown until it is created), or, for Terraform 1.0.3, which has
//! no `terraform_data`, by a conditional on the `instance_id` of a bridge being created. [`examples`] gives a
//! valid value per attribute path: an attribute without one fails the test, so a new attribute cannot be
//! forgotten.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value as Json, json};
use support::inventory::{Inv, Plugin, health_status, run};
use support::{Cli, TestEnv, Tf, fixtures, unique_namespace, write_executable};
use tfsveltos::api::keys;

const TF_RESOURCE: &str = "sveltos_cluster_inventory_bridge";

/// How an attribute is nested: the containers from the resource's top level down to it.
#[derive(Clone, Debug, PartialEq)]
enum Container {
    /// A nested block (`name { ... }`).
    Block(String),
    /// A single nested attribute (`name = { ... }`).
    Object(String),
    /// One entry of a map nested attribute (`name = { "<key>" = { ... } }`).
    MapEntry(String),
}

/// One argument of the schema.
#[derive(Clone, Debug)]
struct Argument {
    /// Its path: `credentials.consumer`, `overrides[k].token_renewal.interval`.
    path: String,
    containers: Vec<Container>,
    name: String,
    /// `list`, `map` (of a primitive or nested), or anything else.
    shape: Shape,
    write_only: bool,
    /// Whether it is, or is inside, a map nested attribute (`overrides`, `credentials.exec_providers`).
    in_map_nested: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    List,
    Map,
    Other,
}

/// Every argument (required or optional) of a block of `providers schema -json`.
fn arguments(block: &Json, containers: &[Container], prefix: &str, out: &mut Vec<Argument>) {
    for (name, a) in block["attributes"].as_object().into_iter().flatten() {
        if !(a["required"] == true || a["optional"] == true) {
            continue;
        }
        let path = format!("{prefix}{name}");
        let nested = &a["nested_type"];
        let shape = match (&a["type"], nested["nesting_mode"].as_str()) {
            (_, Some("map")) => Shape::Map,
            (Json::Array(t), _) if t[0] == "list" => Shape::List,
            (Json::Array(t), _) if t[0] == "map" => Shape::Map,
            _ => Shape::Other,
        };
        out.push(Argument {
            path: path.clone(),
            containers: containers.to_vec(),
            name: name.clone(),
            shape,
            write_only: a["write_only"] == true,
            in_map_nested: nested["nesting_mode"] == "map"
                || containers
                    .iter()
                    .any(|c| matches!(c, Container::MapEntry(_))),
        });
        let inner = match nested["nesting_mode"].as_str() {
            None => continue,
            Some("single") => (Container::Object(name.clone()), format!("{path}.")),
            Some("map") => (Container::MapEntry(name.clone()), format!("{path}[k].")),
            Some(mode) => panic!("{path}: nested attributes of mode {mode} are not covered yet"),
        };
        let mut deeper = containers.to_vec();
        deeper.push(inner.0);
        arguments(nested, &deeper, &inner.1, out);
    }
    for (name, b) in block["block_types"].as_object().into_iter().flatten() {
        let mode = b["nesting_mode"].as_str().unwrap_or_default();
        assert!(
            mode == "single",
            "{prefix}{name}: nested blocks of mode {mode} are not covered yet"
        );
        let mut deeper = containers.to_vec();
        deeper.push(Container::Block(name.clone()));
        arguments(&b["block"], &deeper, &format!("{prefix}{name}."), out);
    }
}

/// What one case's bridge needs to know about its surroundings.
struct Ctx {
    /// The case's namespace, also the bridge's name and the ClusterProfile's name.
    ns: String,
    kubeconfig: String,
    server: String,
    token: String,
    ca_pem: String,
    cert_pem: String,
    key_pem: String,
    providers_file: String,
    exec_script: String,
    proxy_url: String,
}

impl Ctx {
    /// The key of the case's ClusterProfile.
    fn key(&self) -> String {
        format!("{}/{}", self.ns, self.ns)
    }
}

/// A valid value for an argument, with the other arguments it needs (paths and values).
type Example = (Json, Vec<(&'static str, Json)>);

/// The example value of every argument path. A path of the schema missing here fails the test, as does a path
/// here that the schema lacks.
fn examples(c: &Ctx) -> BTreeMap<&'static str, Example> {
    let mut t: BTreeMap<&'static str, Example> = BTreeMap::new();
    let mut add = |path: &'static str, value: Json, with: Vec<(&'static str, Json)>| {
        assert!(t.insert(path, (value, with)).is_none(), "{path} twice");
    };
    top_level_examples(c, &mut add);
    override_examples(&mut add);
    sveltos_field_examples(&mut add);
    for prefix in ["workload_identity", "overrides[k].workload_identity"] {
        workload_identity_examples(prefix, &mut add);
        workload_identity_block_examples(prefix, &mut add);
    }
    credentials_examples(c, &mut add);
    block_examples(&mut add);
    inventory_examples(c, &mut add);
    t
}

fn top_level_examples(
    c: &Ctx,
    add: &mut impl FnMut(&'static str, Json, Vec<(&'static str, Json)>),
) {
    add("name", json!(c.ns), vec![]);
    add("namespaces", json!([c.ns]), vec![]);
    add("names", json!([c.key()]), vec![]);
    add("label_selector", json!("env=unknown-values"), vec![]);
    add("cluster_manager", json!("test"), vec![]);
    add("require_healthy", json!(true), vec![]);
    add("require_credentials", json!(true), vec![]);
    add(
        "extra_labels",
        json!({"team": "platform", "ring": "1"}),
        vec![],
    );
    add(
        "extra_annotations",
        json!({"example.com/note": "from an unknown value"}),
        vec![],
    );
    add("paused", json!(false), vec![]);
    add("consecutive_failure_threshold", json!(3), vec![]);
    add("claim_namespace", json!(c.ns), vec![]);
    add("strict", json!(false), vec![]);
    add("fail_on_skipped", json!(true), vec![]);
    add(
        "unhealthy",
        json!("pause"),
        vec![("require_healthy", json!(true))],
    );
    add("duplicate_members", json!("register_one"), vec![]);
    add("duplicate_members_by_server", json!(true), vec![]);
    add("skip_cluster_api_clusters", json!(true), vec![]);
    add("max_removals", json!(5), vec![]);
    add("max_updates", json!(5), vec![]);
    add("deregistration_timeout", json!("2m"), vec![]);
    add("adopt", json!(false), vec![]);
    add("deregistration", json!("orphan"), vec![]);
    add("overrides", json!({ c.key(): {"paused": true} }), vec![]);
}

/// The SveltosCluster fields beyond the kubeconfig (`data`, `pull_mode`, the checks) and `wait_for_ready` (no
/// sveltoscluster-manager runs here: the wait ends after its second and warns).
fn sveltos_field_examples(add: &mut impl FnMut(&'static str, Json, Vec<(&'static str, Json)>)) {
    add(
        "wait_for_ready",
        json!(true),
        vec![("ready_timeout", json!("1s"))],
    );
    add("ready_timeout", json!("1s"), vec![]);
    add("data", json!({"region": "eu-1"}), vec![]);
    add("overrides[k].data", json!({"tier": "gold"}), vec![]);
    add("pull_mode", json!(true), vec![]);
    add("overrides[k].pull_mode", json!(true), vec![]);
    let check = |name: &str| {
        json!([{
            "name": name,
            "condition": "function evaluate()\n  return {pass = true}\nend",
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "default"}],
        }])
        .to_string()
    };
    add("readiness_checks", json!(check("ready")), vec![]);
    add("liveness_checks", json!(check("alive")), vec![]);
    add("overrides[k].readiness_checks", json!(check("own")), vec![]);
    add("overrides[k].liveness_checks", json!("[]"), vec![]);
}

/// The argument path `prefix` followed by `rest` (kept for the test's duration).
fn at(prefix: &str, rest: &str) -> &'static str {
    Box::leak(format!("{prefix}{rest}").into_boxed_str())
}

/// Whether the `workload_identity` at `prefix` is a single nested attribute (an override's), itself an argument
/// as its provider blocks are; the bridge-wide one is a block, whose arguments are its leaves only.
fn is_object(prefix: &str) -> bool {
    prefix.starts_with("overrides")
}

/// A `workload_identity` at `prefix` (bridge-wide or an override's) as a whole and its own attributes (an Azure
/// identity).
fn workload_identity_examples(
    prefix: &'static str,
    add: &mut impl FnMut(&'static str, Json, Vec<(&'static str, Json)>),
) {
    let azure = json!({"client_id": "c", "tenant_id": "t"});
    if is_object(prefix) {
        add(
            prefix,
            json!({"provider": "Azure", "endpoint": "https://127.0.0.1:6443", "azure": azure}),
            vec![],
        );
        add(
            at(prefix, ".azure"),
            azure.clone(),
            but_azure(prefix, ".azure"),
        );
    }
    let but = |leave: &str| but_azure(prefix, leave);
    add(at(prefix, ".provider"), json!("Azure"), but(".provider"));
    add(
        at(prefix, ".endpoint"),
        json!("https://127.0.0.1:6443"),
        but(".endpoint"),
    );
    add(at(prefix, ".ca_secret"), json!("cluster-ca"), but("(none)"));
}

/// The companions of an Azure identity's case at `prefix`: its required attributes but the one ending in `leave`
/// (`(none)`: all); the `azure` object, or its leaves where it is a block.
fn but_azure(prefix: &'static str, leave: &str) -> Vec<(&'static str, Json)> {
    let mut all = vec![
        (at(prefix, ".provider"), json!("Azure")),
        (at(prefix, ".endpoint"), json!("https://127.0.0.1:6443")),
    ];
    if is_object(prefix) {
        all.push((
            at(prefix, ".azure"),
            json!({"client_id": "c", "tenant_id": "t"}),
        ));
    } else {
        all.push((at(prefix, ".azure.client_id"), json!("c")));
        all.push((at(prefix, ".azure.tenant_id"), json!("t")));
    }
    all.into_iter()
        .filter(|(p, _)| !p.ends_with(leave))
        .collect()
}

/// The provider blocks of a `workload_identity` at `prefix` and their attributes.
fn workload_identity_block_examples(
    prefix: &'static str,
    add: &mut impl FnMut(&'static str, Json, Vec<(&'static str, Json)>),
) {
    let with = |provider: &str, leaves: Vec<(&'static str, Json)>| {
        let mut v = vec![
            (at(prefix, ".provider"), json!(provider)),
            (at(prefix, ".endpoint"), json!("https://127.0.0.1:6443")),
        ];
        v.extend(leaves);
        v
    };
    let aws = |but: &str| {
        let leaves = vec![(at(prefix, ".aws.cluster_name"), json!("eks-1"))];
        with(
            "AWS",
            leaves
                .into_iter()
                .filter(|(p, _)| !p.ends_with(but))
                .collect(),
        )
    };
    if is_object(prefix) {
        add(
            at(prefix, ".aws"),
            json!({"cluster_name": "eks-1"}),
            with("AWS", vec![]),
        );
    }
    add(
        at(prefix, ".aws.cluster_name"),
        json!("eks-1"),
        aws(".cluster_name"),
    );
    add(at(prefix, ".aws.region"), json!("eu-west-1"), aws("(none)"));
    add(
        at(prefix, ".aws.role_arn"),
        json!("arn:aws:iam::123456789012:role/sveltos"),
        aws("(none)"),
    );
    let gcp_leaves = [
        (at(prefix, ".gcp.cluster_name"), json!("gke-1")),
        (at(prefix, ".gcp.location"), json!("europe-west1")),
        (at(prefix, ".gcp.project_id"), json!("fleet")),
    ];
    let gcp = |but: &str| {
        with(
            "GCP",
            gcp_leaves
                .iter()
                .filter(|(p, _)| !p.ends_with(but))
                .cloned()
                .collect(),
        )
    };
    if is_object(prefix) {
        add(
            at(prefix, ".gcp"),
            json!({"cluster_name": "gke-1", "location": "europe-west1", "project_id": "fleet"}),
            with("GCP", vec![]),
        );
    }
    for (path, value) in gcp_leaves.clone() {
        let leaf = path.rsplit('.').next().unwrap_or_default();
        add(path, value, gcp(&format!(".{leaf}")));
    }
    let azure_leaves = [
        (at(prefix, ".azure.client_id"), json!("c")),
        (at(prefix, ".azure.tenant_id"), json!("t")),
    ];
    let azure = |but: &str| {
        with(
            "Azure",
            azure_leaves
                .iter()
                .filter(|(p, _)| !p.ends_with(but))
                .cloned()
                .collect(),
        )
    };
    for (path, value) in azure_leaves.clone() {
        let leaf = path.rsplit('.').next().unwrap_or_default();
        add(path, value, azure(&format!(".{leaf}")));
    }
    add(
        at(prefix, ".azure.cluster_name"),
        json!("aks-1"),
        azure("(none)"),
    );
    add(
        at(prefix, ".azure.resource_group"),
        json!("fleet"),
        azure("(none)"),
    );
    add(
        at(prefix, ".azure.subscription_id"),
        json!("00000000-0000-0000-0000-000000000003"),
        azure("(none)"),
    );
}

fn override_examples(add: &mut impl FnMut(&'static str, Json, Vec<(&'static str, Json)>)) {
    let interval = || vec![("overrides[k].token_renewal.interval", json!("1h"))];
    add("overrides[k].extra_labels", json!({"ring": "0"}), vec![]);
    add(
        "overrides[k].extra_annotations",
        json!({"example.com/ring": "0"}),
        vec![],
    );
    add("overrides[k].paused", json!(true), vec![]);
    add("overrides[k].skip", json!(false), vec![]);
    add(
        "overrides[k].consecutive_failure_threshold",
        json!(2),
        vec![],
    );
    add(
        "overrides[k].token_renewal",
        json!({"interval": "1h", "token_duration": "2h"}),
        vec![],
    );
    add("overrides[k].token_renewal.interval", json!("1h"), vec![]);
    add(
        "overrides[k].token_renewal.token_duration",
        json!("2h"),
        interval(),
    );
    add(
        "overrides[k].token_renewal.service_account",
        json!("kube-system/sveltos"),
        interval(),
    );
    add(
        "overrides[k].active_window",
        json!({"from": "0 8 * * *", "to": "0 18 * * *"}),
        vec![],
    );
    add(
        "overrides[k].active_window.from",
        json!("0 8 * * *"),
        vec![("overrides[k].active_window.to", json!("0 18 * * *"))],
    );
    add(
        "overrides[k].active_window.to",
        json!("0 18 * * *"),
        vec![("overrides[k].active_window.from", json!("0 8 * * *"))],
    );
}

fn credentials_examples(
    c: &Ctx,
    add: &mut impl FnMut(&'static str, Json, Vec<(&'static str, Json)>),
) {
    let file = || ("credentials.exec_providers_file", json!(c.providers_file));
    let namespaces = || ("credentials.exec_providers[k].namespaces", json!([c.ns]));
    add(
        "credentials.secret_label",
        json!(keys::CLUSTER_PROFILE_LABEL),
        vec![],
    );
    add("credentials.consumer", json!("sveltos"), vec![]);
    // Without the profile's namespace, only Secrets of consumer namespaces and `secret_namespaces` count.
    add(
        "credentials.profile_namespace_secrets",
        json!(false),
        vec![("credentials.secret_namespaces", json!([c.ns]))],
    );
    add(
        "credentials.kubeconfig_keys",
        json!(["Config", "value"]),
        vec![],
    );
    add("credentials.use_access_providers", json!(true), vec![]);
    add(
        "credentials.exec_providers_file",
        json!(c.providers_file),
        vec![],
    );
    add(
        "credentials.exec_providers",
        json!({"prov": {"namespaces": [c.ns]}}),
        vec![file()],
    );
    add(
        "credentials.exec_providers[k].namespaces",
        json!([c.ns]),
        vec![file()],
    );
    add(
        "credentials.exec_providers[k].servers",
        json!(["127.0.0.1:6443", "*.example.com"]),
        vec![file(), namespaces()],
    );
    add(
        "credentials.exec_providers[k].profile_env",
        json!(["UNKNOWN_VALUES"]),
        vec![file(), namespaces()],
    );
    add("credentials.refresh_before", json!("15m"), vec![]);
    add("credentials.secret_namespaces", json!([c.ns]), vec![]);
    add(
        "credentials.secret_reader_namespaces",
        json!([c.ns]),
        vec![],
    );
    add(
        "credentials.secret_reader_mode",
        json!("whole_kubeconfig"),
        vec![],
    );
    add("credentials.allow_exec_kubeconfigs", json!(false), vec![]);
    add(
        "credentials.exec_allowed_servers",
        json!(["127.0.0.1:6443", "*.example.com"]),
        vec![],
    );
}

fn block_examples(add: &mut impl FnMut(&'static str, Json, Vec<(&'static str, Json)>)) {
    let interval = || vec![("token_renewal.interval", json!("1h"))];
    add("copy_labels.include", json!(["env", "team/*"]), vec![]);
    add(
        "copy_labels.exclude",
        json!(["projectsveltos.io/*"]),
        vec![],
    );
    add("copy_labels.remove_foreign", json!(true), vec![]);
    add("copy_properties.names", json!(["location", "zone"]), vec![]);
    add(
        "copy_properties.label_prefix",
        json!("inventory.example.com/"),
        vec![("copy_properties.names", json!(["location"]))],
    );
    add(
        "copy_properties.kubernetes_version_as",
        json!("kubernetes-version"),
        vec![],
    );
    add("timeouts.create", json!("10m"), vec![]);
    add("timeouts.update", json!("10m"), vec![]);
    add("timeouts.delete", json!("10m"), vec![]);
    add("token_renewal.interval", json!("1h"), vec![]);
    add("token_renewal.token_duration", json!("2h"), interval());
    add(
        "token_renewal.service_account",
        json!("kube-system/sveltos"),
        interval(),
    );
    add(
        "active_window.from",
        json!("0 8 * * *"),
        vec![("active_window.to", json!("0 18 * * *"))],
    );
    add(
        "active_window.to",
        json!("0 18 * * *"),
        vec![("active_window.from", json!("0 8 * * *"))],
    );
}

/// The companions of an `inventory` argument reaching the test environment's API server by `host`.
fn by_host(c: &Ctx, with: &[&'static str]) -> Vec<(&'static str, Json)> {
    with.iter()
        .map(|path| {
            let v = match *path {
                "inventory.host" => json!(c.server),
                "inventory.insecure" => json!(true),
                "inventory.token" => json!(c.token),
                "inventory.cluster_ca_certificate" => json!(c.ca_pem),
                "inventory.client_certificate" => json!(c.cert_pem),
                "inventory.client_key" => json!(c.key_pem),
                "inventory.exec.api_version" => json!("client.authentication.k8s.io/v1"),
                "inventory.exec.command" => json!(c.exec_script),
                other => panic!("no companion value for {other}"),
            };
            (*path, v)
        })
        .collect()
}

/// The `inventory` block: the test environment's API server as the hub, through its kubeconfig.
fn inventory_examples(
    c: &Ctx,
    add: &mut impl FnMut(&'static str, Json, Vec<(&'static str, Json)>),
) {
    let path = || vec![("inventory.config_path", json!(c.kubeconfig))];
    add("inventory.config_path", json!(c.kubeconfig), vec![]);
    add("inventory.config_paths", json!([c.kubeconfig]), vec![]);
    add("inventory.config_context", json!("main"), path());
    add("inventory.config_context_auth_info", json!("admin"), path());
    add("inventory.config_context_cluster", json!("main"), path());
    inventory_host_examples(c, add);
    inventory_exec_examples(c, add);
}

/// The `inventory` block by `host`: a token, a CA and a server name, a client certificate, a proxy.
fn inventory_host_examples(
    c: &Ctx,
    add: &mut impl FnMut(&'static str, Json, Vec<(&'static str, Json)>),
) {
    let [host, insecure, token] = ["inventory.host", "inventory.insecure", "inventory.token"];
    let (ca, cert) = (
        "inventory.cluster_ca_certificate",
        "inventory.client_certificate",
    );
    let key = "inventory.client_key";
    add(host, json!(c.server), by_host(c, &[insecure, token]));
    add(insecure, json!(true), by_host(c, &[host, token]));
    add(token, json!(c.token), by_host(c, &[host, insecure]));
    add(
        "inventory.token_wo",
        json!(c.token),
        by_host(c, &[host, insecure]),
    );
    add(ca, json!(c.ca_pem), by_host(c, &[host, token]));
    let tls = by_host(c, &[host, token, ca]);
    add("inventory.tls_server_name", json!("kubernetes"), tls);
    add(
        cert,
        json!(c.cert_pem),
        by_host(c, &[key, host, insecure, token]),
    );
    add(
        key,
        json!(c.key_pem),
        by_host(c, &[cert, host, insecure, token]),
    );
    let wo = by_host(c, &[cert, host, insecure, token]);
    add("inventory.client_key_wo", json!(c.key_pem), wo);
    let proxied = by_host(c, &[host, insecure, token]);
    add("inventory.proxy_url", json!(c.proxy_url), proxied);
}

/// The `inventory` block's `exec` plugin (a script answering the test environment's token).
fn inventory_exec_examples(
    c: &Ctx,
    add: &mut impl FnMut(&'static str, Json, Vec<(&'static str, Json)>),
) {
    let [host, insecure] = ["inventory.host", "inventory.insecure"];
    let [api, command] = ["inventory.exec.api_version", "inventory.exec.command"];
    let api_value = json!("client.authentication.k8s.io/v1");
    add(api, api_value, by_host(c, &[command, host, insecure]));
    add(
        command,
        json!(c.exec_script),
        by_host(c, &[api, host, insecure]),
    );
    let all = || by_host(c, &[api, command, host, insecure]);
    add("inventory.exec.args", json!(["--unknown-values"]), all());
    add("inventory.exec.env", json!({"UNKNOWN_VALUES": "1"}), all());
    add(
        "inventory.exec.env_wo",
        json!({"UNKNOWN_VALUES": "1"}),
        all(),
    );
}

/// The key of the one entry a case writes into map nested attribute `name`.
fn map_key(name: &str, c: &Ctx) -> String {
    match name {
        "overrides" => c.key(),
        "exec_providers" => "prov".into(),
        other => panic!("no entry key for the map nested attribute {other}: add one to map_key"),
    }
}

/// An HCL expression for a JSON value (strings quoted as HCL reads them: no template sequences).
fn hcl(v: &Json) -> String {
    match v {
        Json::String(s) => serde_json::to_string(s)
            .expect("a string")
            .replace("${", "$${")
            .replace("%{", "%%{"),
        Json::Array(items) => format!("[{}]", items.iter().map(hcl).collect::<Vec<_>>().join(", ")),
        Json::Object(m) => {
            let entries: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{} = {}", hcl(&json!(k)), hcl(v)))
                .collect();
            format!("{{ {} }}", entries.join(", "))
        }
        other => other.to_string(),
    }
}

/// A resource body being built: arguments and the containers they are in.
enum Node {
    Leaf(String),
    Nest(Container, BTreeMap<String, Node>),
}

fn insert(body: &mut BTreeMap<String, Node>, containers: &[Container], name: &str, expr: String) {
    let Some((first, rest)) = containers.split_first() else {
        let old = body.insert(name.to_string(), Node::Leaf(expr));
        assert!(old.is_none(), "{name} is set twice");
        return;
    };
    let (Container::Block(n) | Container::Object(n) | Container::MapEntry(n)) = first;
    let node = body
        .entry(n.clone())
        .or_insert_with(|| Node::Nest(first.clone(), BTreeMap::new()));
    match node {
        Node::Nest(kind, inner) if kind == first => insert(inner, rest, name, expr),
        _ => panic!("{n} is both an argument and a container"),
    }
}

fn render(body: &BTreeMap<String, Node>, indent: usize, c: &Ctx) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    for (name, node) in body {
        out += &match node {
            Node::Leaf(expr) => format!("{pad}{name} = {expr}\n"),
            Node::Nest(Container::Block(_), inner) => {
                format!("{pad}{name} {{\n{}{pad}}}\n", render(inner, indent + 2, c))
            }
            Node::Nest(Container::Object(_), inner) => {
                format!(
                    "{pad}{name} = {{\n{}{pad}}}\n",
                    render(inner, indent + 2, c)
                )
            }
            Node::Nest(Container::MapEntry(_), inner) => format!(
                "{pad}{name} = {{\n{pad}  {} = {{\n{}{pad}  }}\n{pad}}}\n",
                hcl(&json!(map_key(name, c))),
                render(inner, indent + 4, c)
            ),
        };
    }
    out
}

/// How a case's value is made unknown at plan.
#[derive(Clone, Copy, PartialEq)]
enum Unknown {
    /// `terraform_data.u<i>.output` with the value as `input` (replaced, and so unknown again, when `var.round`
    /// changes).
    Data,
    /// A conditional on the `instance_id` of a bridge being created (Terraform 1.0.3 has no `terraform_data`).
    Conditional,
}

impl Unknown {
    fn of(cli: &Cli) -> Self {
        if cli.name == "terraform-1.0.3" {
            Unknown::Conditional
        } else {
            Unknown::Data
        }
    }

    /// The expression for `value` made unknown, and the configuration it needs, in case `i`.
    fn wrap(self, i: usize, value: &Json) -> (String, String) {
        match self {
            Unknown::Data => (
                format!("terraform_data.u{i}.output"),
                format!(
                    "resource \"terraform_data\" \"u{i}\" {{\n  input            = {}\n  triggers_replace = var.round\n}}\n",
                    hcl(value)
                ),
            ),
            Unknown::Conditional => {
                let v = hcl(value);
                (
                    format!("({TF_RESOURCE}.unknown_source.instance_id == \"\" ? {v} : {v})"),
                    String::new(),
                )
            }
        }
    }
}

/// One case: a bridge with one argument (or one element of it) unknown at plan.
struct Case {
    label: String,
    /// `sveltos_cluster_inventory_bridge.c<i>`.
    address: String,
    key: String,
    hcl: String,
}

/// The case of `arg` in namespace `c.ns`: its value whole (`element`: one element of it) unknown.
fn case(i: usize, arg: &Argument, element: bool, c: &Ctx, how: Unknown) -> Case {
    let table = examples(c);
    let (value, with) = &table[arg.path.as_str()];
    let (expr, extra) = match (element, value) {
        (false, _) => how.wrap(i, value),
        (true, Json::Array(items)) => {
            let (first, rest) = how.wrap(i, &items[0]);
            let others = items[1..].iter().map(hcl);
            (
                format!(
                    "[{}]",
                    std::iter::once(first)
                        .chain(others)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                rest,
            )
        }
        (true, Json::Object(m)) => {
            let mut entries = m.iter();
            let (k, v) = entries.next().expect("an example map has an entry");
            let (first, rest) = how.wrap(i, v);
            let mut all = vec![format!("{} = {first}", hcl(&json!(k)))];
            all.extend(entries.map(|(k, v)| format!("{} = {}", hcl(&json!(k)), hcl(v))));
            (format!("{{ {} }}", all.join(", ")), rest)
        }
        (true, other) => panic!("{}: no element in {other}", arg.path),
    };
    let mut body = BTreeMap::new();
    insert(&mut body, &arg.containers, &arg.name, expr);
    let all = schema_paths();
    for (path, v) in with {
        let other = all
            .get(*path)
            .unwrap_or_else(|| panic!("{}: companion {path} is not an argument", arg.path));
        insert(&mut body, &other.containers, &other.name, hcl(v));
    }
    for (name, v) in [("name", json!(c.ns)), ("namespaces", json!([c.ns]))] {
        body.entry(name.to_string())
            .or_insert_with(|| Node::Leaf(hcl(&v)));
    }
    let label = format!(
        "{}{}",
        arg.path,
        if element { " (one element)" } else { "" }
    );
    let hcl = format!(
        "# {label}\n{extra}resource \"{TF_RESOURCE}\" \"c{i}\" {{\n{}}}\n",
        render(&body, 2, c)
    );
    Case {
        label,
        address: format!("{TF_RESOURCE}.c{i}"),
        key: c.key(),
        hcl,
    }
}

/// The arguments of the schema, by path (read once, with OpenTofu).
fn schema_paths() -> &'static BTreeMap<String, Argument> {
    static PATHS: std::sync::OnceLock<BTreeMap<String, Argument>> = std::sync::OnceLock::new();
    PATHS.get_or_init(|| {
        let tf = Tf::new(&Cli::tofu());
        tf.write_main(&fixtures::required_providers(
            support::PROVIDER_SOURCE,
            None,
        ));
        let schema = tf.provider_schema();
        let block = &schema["resource_schemas"][TF_RESOURCE]["block"];
        let mut out = Vec::new();
        arguments(block, &[], "", &mut out);
        out.into_iter().map(|a| (a.path.clone(), a)).collect()
    })
}

/// A minimal HTTP CONNECT proxy on loopback (what `inventory.proxy_url` needs): every CONNECT is answered 200
/// and piped to the address it names. Returns its URL and the number of tunnels it opened. It serves until the
/// test binary exits.
fn connect_proxy() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binding the proxy");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    let tunnels = Arc::new(AtomicUsize::new(0));
    let counted = tunnels.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let counted = counted.clone();
            std::thread::spawn(move || tunnel(conn, &counted));
        }
    });
    (url, tunnels)
}

fn tunnel(mut client: TcpStream, tunnels: &AtomicUsize) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
        if client.read(&mut byte)? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut words = head.split_whitespace();
    let (Some("CONNECT"), Some(target)) = (words.next(), words.next()) else {
        return client.write_all(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n");
    };
    let upstream = TcpStream::connect(target)?;
    client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
    tunnels.fetch_add(1, Ordering::Relaxed);
    let (mut from_client, mut to_upstream) = (client.try_clone()?, upstream.try_clone()?);
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut from_client, &mut to_upstream);
        let _ = to_upstream.shutdown(std::net::Shutdown::Write);
    });
    let (mut from_upstream, mut to_client) = (upstream, client);
    let _ = std::io::copy(&mut from_upstream, &mut to_client);
    let _ = to_client.shutdown(std::net::Shutdown::Write);
    let _ = up.join();
    Ok(())
}

/// What every case shares: files in `dir` (providers file, exec plugin, a client certificate) and the proxy.
struct Shared {
    kubeconfig: String,
    server: String,
    token: String,
    ca_pem: String,
    cert_pem: String,
    key_pem: String,
    providers_file: String,
    exec_script: String,
    proxy_url: String,
}

impl Shared {
    fn new(dir: &Path, proxy_url: String) -> Shared {
        let env = TestEnv::get();
        let kubeconfig = env.kubeconfig.display().to_string();
        let text = std::fs::read_to_string(&env.kubeconfig).expect("the test kubeconfig");
        let token = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("token:"))
            .map(|t| t.trim().to_string())
            .expect("a token in the test kubeconfig");
        let certs = env.dir.join("main").join("certs");
        let ca_pem =
            std::fs::read_to_string(certs.join("apiserver.crt")).expect("the serving certificate");
        let (cert, key) = (dir.join("client.crt"), dir.join("client.key"));
        let out = std::process::Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
            ])
            .args(["-subj", "/CN=unknown-values", "-days", "1", "-keyout"])
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .output()
            .expect("running openssl");
        assert!(
            out.status.success(),
            "openssl req:\n{}",
            support::describe_output(&out)
        );
        let plugin = Plugin::write(dir, 3600, &[("prov", None)]);
        let exec_script = dir.join("hub-credential.sh");
        write_executable(
            &exec_script,
            &format!(
                "#!/bin/sh\necho '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{token}\"}}}}'\n"
            ),
        );
        Shared {
            server: TestEnv::server_url(&env.kubeconfig),
            kubeconfig,
            token,
            ca_pem,
            cert_pem: std::fs::read_to_string(&cert).expect("the client certificate"),
            key_pem: std::fs::read_to_string(&key).expect("the client key"),
            providers_file: plugin.providers_file.display().to_string(),
            exec_script: exec_script.display().to_string(),
            proxy_url,
        }
    }

    fn ctx(&self, ns: &str) -> Ctx {
        Ctx {
            ns: ns.to_string(),
            kubeconfig: self.kubeconfig.clone(),
            server: self.server.clone(),
            token: self.token.clone(),
            ca_pem: self.ca_pem.clone(),
            cert_pem: self.cert_pem.clone(),
            key_pem: self.key_pem.clone(),
            providers_file: self.providers_file.clone(),
            exec_script: self.exec_script.clone(),
            proxy_url: self.proxy_url.clone(),
        }
    }
}

/// Every argument path has an example, and every example is an argument path.
fn assert_examples_cover_the_schema(shared: &Shared) {
    let table = examples(&shared.ctx("ns"));
    let paths = schema_paths();
    let missing: Vec<&String> = paths
        .keys()
        .filter(|p| !table.contains_key(p.as_str()))
        .collect();
    let stale: Vec<&&str> = table.keys().filter(|p| !paths.contains_key(**p)).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "examples() must give a valid value for every argument of the schema.\n  without an example: {missing:?}\n  \
         not in the schema: {stale:?}"
    );
}

/// The cases for `cli`, each in a fresh namespace with one healthy ClusterProfile and its credential Secret.
async fn cases(inv: &Inv, shared: &Shared, cli: &Cli) -> Vec<Case> {
    let how = Unknown::of(cli);
    let kubeconfig = fixtures::unreachable_kubeconfig("t");
    let mut out = Vec::new();
    for arg in schema_paths().values() {
        // Terraform 1.0.3 has no write-only attributes, and crashes (or calls the plan invalid) when a value in a
        // map nested attribute is unknown, whatever the provider plans: its own plan validation of nested
        // attributes fails (fixed in later versions).
        if how == Unknown::Conditional && (arg.write_only || arg.in_map_nested) {
            continue;
        }
        let variants: &[bool] = if arg.shape == Shape::Other {
            &[false]
        } else {
            &[false, true]
        };
        for &element in variants {
            let ns = unique_namespace(&inv.client, "uv").await;
            let labels = [("env", "unknown-values")];
            inv.profile_with_secret(&ns, &ns, &labels, health_status(true), &kubeconfig)
                .await;
            out.push(case(out.len(), arg, element, &shared.ctx(&ns), how));
        }
    }
    out
}

/// The configuration of `cases`, with what makes their values unknown.
async fn configuration(inv: &Inv, cases: &[Case], how: Unknown) -> String {
    let mut text = fixtures::provider_header(&inv.kubeconfig, None);
    match how {
        Unknown::Data => text += "variable \"round\" {\n  type    = number\n  default = 1\n}\n",
        Unknown::Conditional => {
            let ns = unique_namespace(&inv.client, "uv-source").await;
            text += &format!(
                "resource \"{TF_RESOURCE}\" \"unknown_source\" {{\n  name       = \"{ns}\"\n  namespaces = [\"{ns}\"]\n}}\n"
            );
        }
    }
    for c in cases {
        text += &c.hcl;
    }
    text
}

/// The labels of the cases whose address `out` names.
fn named(out: &str, cases: &[Case]) -> Vec<String> {
    let mentions = |address: &str| {
        out.match_indices(address)
            .any(|(i, _)| !out[i + address.len()..].starts_with(|c: char| c.is_ascii_digit()))
    };
    cases
        .iter()
        .filter(|c| mentions(&c.address))
        .map(|c| c.label.clone())
        .collect()
}

/// Applies with `apply_args`, which must succeed, then plans with `plan_args`, which must be empty.
fn converge(tf: &Tf, cases: &[Case], apply_args: &[&str], plan_args: &[&str], round: &str) {
    let cli = &tf.cli.name;
    let mut args = vec!["apply", "-input=false", "-no-color", "-auto-approve"];
    args.extend(apply_args);
    let (ok, out) = run(tf, &args);
    assert!(
        ok,
        "{cli}, {round}: apply failed; cases named: {:?}\n{out}",
        named(&out, cases)
    );
    let mut args = vec![
        "plan",
        "-input=false",
        "-no-color",
        "-detailed-exitcode",
        "-out=after.tfplan",
    ];
    args.extend(plan_args);
    let (ok, out) = run(tf, &args);
    if ok {
        return;
    }
    let plan = tf.json(&["show", "-json", "-no-color", "after.tfplan"]);
    let changing: Vec<String> = plan["resource_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["change"]["actions"] != json!(["no-op"]))
        .filter_map(|r| r["address"].as_str().map(String::from))
        .collect();
    panic!(
        "{cli}, {round}: the plan after apply is not empty; cases: {:?}\n{out}",
        named(&changing.join("\n"), cases)
    );
}

/// Every case's bridge registered its cluster.
fn assert_registered(tf: &Tf, cases: &[Case]) {
    let state = tf.state_resources();
    let unregistered: Vec<&str> = cases
        .iter()
        .filter(|c| {
            state[&c.address]["values"]["clusters"]
                .get(&c.key)
                .is_none()
        })
        .map(|c| c.label.as_str())
        .collect();
    assert!(
        unregistered.is_empty(),
        "{}: clusters not registered: {unregistered:?}",
        tf.cli.name
    );
}

/// With `cli`: every case planned and applied with its value unknown (on creation), then with it unknown again on
/// the existing bridges (`terraform_data` replaced, or the conditional's bridge replaced with `-replace`).
async fn unknown_with(inv: &Inv, shared: &Shared, cli: &Cli) {
    let how = Unknown::of(cli);
    let cases = cases(inv, shared, cli).await;
    support::inventory::report(&format!(
        "{}: {} cases of unknown values",
        cli.name,
        cases.len()
    ));
    let tf = Tf::new(cli);
    tf.write_main(&configuration(inv, &cases, how).await);
    converge(&tf, &cases, &[], &[], "created with unknown values");
    assert_registered(&tf, &cases);
    let replace = format!("-replace={TF_RESOURCE}.unknown_source");
    let (apply, plan) = match how {
        Unknown::Data => (["-var=round=2"], vec!["-var=round=2"]),
        Unknown::Conditional => ([replace.as_str()], vec![]),
    };
    converge(&tf, &cases, &apply, &plan, "updated with unknown values");
    assert_registered(&tf, &cases);
}

/// Every argument of the bridge, made unknown in turn (whole, and one element of a list or map), with every CLI:
/// plan and apply succeed without an inconsistent final plan, every bridge registers its cluster, and the plan
/// after is empty; the same again with the values unknown on the existing bridges.
#[tokio::test(flavor = "multi_thread")]
async fn every_argument_unknown_at_plan_applies_and_converges() {
    let inv = Inv::new().await;
    let dir = tempfile::tempdir().expect("a scratch directory");
    let (proxy_url, tunnels) = connect_proxy();
    let shared = Shared::new(dir.path(), proxy_url);
    assert_examples_cover_the_schema(&shared);
    for cli in Cli::all() {
        unknown_with(&inv, &shared, &cli).await;
    }
    assert!(
        tunnels.load(Ordering::Relaxed) > 0,
        "the example of inventory.proxy_url never went through the proxy"
    );
}

/// A provider block whose `host` is known only after apply (a `terraform_data` resource's output, created in the
/// same run): with every released CLI (none allows deferred actions) plan fails with
/// `Provider configuration is not known until apply`, naming the attribute, and never connects elsewhere.
#[tokio::test(flavor = "multi_thread")]
async fn a_provider_block_known_only_after_apply_fails_the_plan_naming_it() {
    let mut clis = vec![Cli::tofu()];
    clis.extend(Cli::terraform_needed());
    for cli in clis {
        let tf = Tf::new(&cli);
        tf.write_main(&format!(
            "{}\nresource \"terraform_data\" \"endpoint\" {{\n  input = \"https://127.0.0.1:1\"\n}}\n\
             provider \"sveltos\" {{\n  host  = terraform_data.endpoint.output\n  token = \"t\"\n}}\n\
             resource \"sveltos_cluster_inventory_bridge\" \"x\" {{\n  name       = \"unknown-provider\"\n  \
             namespaces = [\"default\"]\n}}\n",
            fixtures::required_providers(fixtures::PROVIDER_SOURCE, None),
        ));
        let (ok, out) = run(&tf, &["plan", "-input=false", "-no-color"]);
        assert!(!ok, "{}: the plan succeeded:\n{out}", cli.name);
        let flat = support::inventory::flat(&out);
        assert!(
            flat.contains("Provider configuration is not known until apply"),
            "{}: {out}",
            cli.name
        );
        assert!(
            flat.contains("host"),
            "{}: the attribute is not named: {out}",
            cli.name
        );
    }
}
