//! The CRDs the test environment installs (`testenv/crds/`, written for this project) enforce what the upstream
//! CRDs enforce: at every path of every served version, every schema keyword the API server acts on (types,
//! formats, defaults, enums, patterns, length and item limits, required fields, nullability, list and map types,
//! the CEL rules) is the upstream one; only descriptions and CEL messages (words) may differ. The upstream files
//! are `$SVELTOS_REFERENCE_DIR/crds`, else `../shared/reference/crds`; without them the comparison fails under
//! `CI=true` and is recorded as skipped otherwise.
//!
//! No upstream file has ClusterProfile v1alpha2 (cluster-inventory-api PR #65): its expected schema is upstream
//! v1alpha1 changed by [`v1alpha2_changes`], the facts of `apis/v1alpha2/clusterprofile_types.go` there (and of the
//! upstream review, `reviews/upstream.md` §1.1).
//!
//! And the provider's Rust types (`src/api`) fit those CRDs: every property they model is in the test CRD with the
//! same type (no check needs the upstream files).

use std::{collections::BTreeMap, path::PathBuf};

use serde_json::{Map, Value, json};
use tfsveltos::api::crd_yamls;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Our CRD file for a stem (`clusterprofiles`, `sveltosclusters`).
fn ours(stem: &str) -> Value {
    let path = repo().join(format!("testenv/crds/{stem}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The schema keywords that are words, not rules: left out of the comparison.
const WORDS: [&str; 4] = ["description", "title", "example", "externalDocs"];

/// Flattens an openAPIV3Schema into `path -> what the API server enforces there`: every keyword but the words and
/// the sub-schemas (which get their own paths: `.name` for a property, `[]` for array items, `{}` for map values),
/// `required` as a sorted set and the CEL rules without their `message`.
fn flatten(schema: &Value, path: &str, out: &mut BTreeMap<String, Map<String, Value>>) {
    let Some(node) = schema.as_object() else {
        panic!("{path}: not a schema: {schema}");
    };
    let mut rules = Map::new();
    for (key, value) in node {
        match key.as_str() {
            k if WORDS.contains(&k) => {}
            "properties" => {
                for (name, sub) in value.as_object().expect("properties is a map") {
                    flatten(sub, &format!("{path}.{name}"), out);
                }
            }
            "items" => flatten(value, &format!("{path}[]"), out),
            "additionalProperties" if value.is_object() => {
                flatten(value, &format!("{path}{{}}"), out)
            }
            "required" => {
                let mut names: Vec<Value> = value.as_array().expect("required is a list").clone();
                names.sort_by_key(|v| v.to_string());
                rules.insert(key.clone(), Value::Array(names));
            }
            "x-kubernetes-validations" => {
                let without_messages = value
                    .as_array()
                    .expect("x-kubernetes-validations is a list")
                    .iter()
                    .map(|r| {
                        let mut r = r.as_object().expect("a rule is a map").clone();
                        r.remove("message");
                        Value::Object(r)
                    })
                    .collect();
                rules.insert(key.clone(), Value::Array(without_messages));
            }
            _ => {
                rules.insert(key.clone(), value.clone());
            }
        }
    }
    out.insert(path.to_string(), rules);
}

fn flat(schema: &Value) -> BTreeMap<String, Map<String, Value>> {
    let mut out = BTreeMap::new();
    flatten(schema, "", &mut out);
    out
}

/// Every difference between two flattened schemas, one line each.
fn differences(
    ours: &BTreeMap<String, Map<String, Value>>,
    theirs: &BTreeMap<String, Map<String, Value>>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (path, rules) in ours {
        match theirs.get(path) {
            None => out.push(format!("{path}: only in ours")),
            Some(t) => {
                let keys: std::collections::BTreeSet<&String> =
                    rules.keys().chain(t.keys()).collect();
                for k in keys {
                    if rules.get(k) != t.get(k) {
                        out.push(format!(
                            "{path} {k}: ours {}, upstream {}",
                            show(rules.get(k)),
                            show(t.get(k))
                        ));
                    }
                }
            }
        }
    }
    out.extend(
        theirs
            .keys()
            .filter(|p| !ours.contains_key(*p))
            .map(|p| format!("{p}: only upstream")),
    );
    out
}

fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "-".into(), Value::to_string)
}

fn version<'a>(crd: &'a Value, name: &str) -> &'a Value {
    crd["spec"]["versions"]
        .as_array()
        .expect("spec.versions")
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("{}: no version {name}", crd["metadata"]["name"]))
}

fn schema(version: &Value) -> &Value {
    &version["schema"]["openAPIV3Schema"]
}

fn reference_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("SVELTOS_REFERENCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared/reference"))
        .join("crds");
    let missing = format!(
        "reference CRDs in {} (set SVELTOS_REFERENCE_DIR)",
        dir.display()
    );
    support::needed(dir.is_dir().then_some(dir), missing)
}

fn upstream(dir: &std::path::Path, file: &str) -> Value {
    let text = std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Group, names, scope, and per version: served, storage, subresources, deprecation.
fn assert_same_resource(stem: &str, ours: &Value, theirs: &Value, versions: &[&str]) {
    for field in ["/spec/group", "/spec/scope", "/spec/names"] {
        assert_eq!(
            ours.pointer(field),
            theirs.pointer(field),
            "{stem}: {field}"
        );
    }
    for name in versions {
        let (o, t) = (version(ours, name), version(theirs, name));
        for field in ["served", "storage", "subresources", "deprecated"] {
            assert_eq!(o.get(field), t.get(field), "{stem} {name}: {field}");
        }
    }
}

fn assert_no_differences(what: &str, ours: &Value, theirs: &Value) {
    let diffs = differences(&flat(ours), &flat(theirs));
    assert!(
        diffs.is_empty(),
        "{what} enforces otherwise than upstream:\n{}",
        diffs.join("\n")
    );
}

#[test]
fn sveltoscluster_crd_enforces_what_upstream_enforces() {
    let Some(dir) = reference_dir() else { return };
    let (o, t) = (
        ours("sveltosclusters"),
        upstream(&dir, "lib.projectsveltos.io_sveltosclusters.yaml"),
    );
    assert_same_resource("sveltosclusters", &o, &t, &["v1beta1"]);
    assert_eq!(o["spec"]["versions"].as_array().map(Vec::len), Some(1));
    assert_no_differences(
        "SveltosCluster v1beta1",
        schema(version(&o, "v1beta1")),
        schema(version(&t, "v1beta1")),
    );
}

#[test]
fn clusterprofile_v1alpha1_enforces_what_upstream_enforces() {
    let Some(dir) = reference_dir() else { return };
    let (o, t) = (
        ours("clusterprofiles"),
        upstream(&dir, "multicluster.x-k8s.io_clusterprofiles.yaml"),
    );
    assert_same_resource("clusterprofiles", &o, &t, &["v1alpha1"]);
    assert_no_differences(
        "ClusterProfile v1alpha1",
        schema(version(&o, "v1alpha1")),
        schema(version(&t, "v1alpha1")),
    );
}

/// The v1alpha2 changes, as `(path, keyword, value)`: `null` removes the property at `path` (the keyword is
/// ignored then); a CEL rule is given without its message. Facts of cluster-inventory-api's
/// `apis/v1alpha2/clusterprofile_types.go` (PR #65, at 2c9add1), which the upstream review (§1.1) lists.
fn v1alpha2_changes() -> Vec<(String, &'static str, Value)> {
    let status = |p: &str| format!("/properties/status/properties/{p}");
    let ap = |p: &str| status(&format!("accessProviders{p}"));
    let cluster = |p: &str| ap(&format!("/items/properties/cluster/properties/{p}"));
    let manager = "/properties/spec/properties/clusterManager/properties/name".to_string();
    let rule = |r: &str| json!([{ "rule": r }]);
    vec![
        // credentialProviders and the CA file path are gone
        (status("credentialProviders"), "", Value::Null),
        (cluster("certificate-authority"), "", Value::Null),
        // the cluster manager's name is a label value
        (manager.clone(), "minLength", json!(1)),
        (manager.clone(), "maxLength", json!(63)),
        (
            manager,
            "x-kubernetes-validations",
            rule("!format.labelValue().validate(self).hasValue()"),
        ),
        // at most 64 access providers, each named and with its cluster
        (ap(""), "maxItems", json!(64)),
        (ap("/items"), "required", json!(["cluster", "name"])),
        (ap("/items/properties/name"), "minLength", json!(1)),
        (ap("/items/properties/name"), "maxLength", json!(253)),
        // server: a URL with a host; proxy-url: http, https or socks5 with a host
        (cluster("server"), "maxLength", json!(2048)),
        (
            cluster("server"),
            "x-kubernetes-validations",
            rule("isURL(self) && url(self).getHost() != ''"),
        ),
        (cluster("tls-server-name"), "maxLength", json!(253)),
        (cluster("proxy-url"), "maxLength", json!(2048)),
        (
            cluster("proxy-url"),
            "x-kubernetes-validations",
            rule(
                "self == '' || (isURL(self) && url(self).getScheme() in ['http', 'https', 'socks5'] \
                 && url(self).getHost() != '')",
            ),
        ),
        // extensions: a list map keyed by name
        (
            cluster("extensions"),
            "x-kubernetes-list-type",
            json!("map"),
        ),
        (
            cluster("extensions"),
            "x-kubernetes-list-map-keys",
            json!(["name"]),
        ),
        (
            cluster("extensions/items/properties/name"),
            "minLength",
            json!(1),
        ),
        (
            cluster("extensions/items/properties/name"),
            "maxLength",
            json!(253),
        ),
    ]
}

/// Upstream v1alpha1's schema with [`v1alpha2_changes`] applied.
fn expected_v1alpha2(v1alpha1: &Value) -> Value {
    let mut schema = v1alpha1.clone();
    for (path, keyword, value) in v1alpha2_changes() {
        let path = path.as_str();
        let (parent, name) = path.rsplit_once('/').expect("a path has a parent");
        if value.is_null() {
            let props = schema.pointer_mut(parent).and_then(Value::as_object_mut);
            let removed = props.and_then(|p| p.remove(name));
            assert!(
                removed.is_some(),
                "v1alpha2 change: no {path} in upstream v1alpha1"
            );
            continue;
        }
        let node = schema
            .pointer_mut(path)
            .and_then(Value::as_object_mut)
            .unwrap_or_else(|| panic!("v1alpha2 change: no {path} in upstream v1alpha1"));
        node.insert(keyword.into(), value);
    }
    schema
}

#[test]
fn clusterprofile_v1alpha2_enforces_upstream_v1alpha2_rules() {
    let Some(dir) = reference_dir() else { return };
    let (o, t) = (
        ours("clusterprofiles"),
        upstream(&dir, "multicluster.x-k8s.io_clusterprofiles.yaml"),
    );
    let v2 = version(&o, "v1alpha2");
    assert_eq!(
        (&v2["served"], &v2["storage"], &v2["subresources"]),
        (&json!(true), &json!(false), &json!({"status": {}})),
        "v1alpha2 is served, not stored, with the status subresource"
    );
    assert_eq!(o["spec"]["versions"].as_array().map(Vec::len), Some(2));
    assert_no_differences(
        "ClusterProfile v1alpha2",
        schema(v2),
        &expected_v1alpha2(schema(version(&t, "v1alpha1"))),
    );
}

/// `path -> type` of a schema (`[]` for array items, `{}` for map values).
fn types(schema: &Value) -> BTreeMap<String, String> {
    flat(schema)
        .into_iter()
        .map(|(path, rules)| {
            let ty = rules
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("<none>");
            (path, ty.to_string())
        })
        .collect()
}

#[test]
fn the_rust_types_fit_the_test_crds() {
    for (stem, yaml) in crd_yamls() {
        let model: Value = serde_saphyr::from_str(&yaml).unwrap();
        let crd = ours(stem);
        for v in model["spec"]["versions"].as_array().unwrap() {
            let name = v["name"].as_str().unwrap();
            let (modelled, served) = (types(schema(v)), types(schema(version(&crd, name))));
            let problems: Vec<String> = modelled
                .iter()
                .filter_map(|(path, ty)| match served.get(path) {
                    None => Some(format!("{path}: not in the test CRD")),
                    Some(s) if s != ty => Some(format!("{path}: modelled {ty}, served {s}")),
                    _ => None,
                })
                .collect();
            assert!(
                problems.is_empty(),
                "{stem} {name}: the Rust types disagree with testenv/crds:\n{}",
                problems.join("\n")
            );
            assert!(
                modelled.len() > 20,
                "{stem} {name}: suspiciously few properties modelled ({})",
                modelled.len()
            );
        }
    }
}
