//! The CRDs the test environment installs are generated from our Rust types; they must be committed up to date
//! and agree with the upstream CRDs (group, kind, plural, scope, version, subresources, and the path and type
//! of every property we model). Without the upstream CRDs (`$SVELTOS_REFERENCE_DIR/crds`, else
//! `../shared/reference/crds`) the comparison fails under `CI=true` and is recorded as skipped otherwise.

use std::{collections::BTreeMap, path::PathBuf};

use serde_json::Value;
use tfsveltos::api::crd_yamls;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn committed_crds_match_the_rust_types() {
    let dir = repo().join("testenv/crds");
    for (stem, yaml) in crd_yamls() {
        let path = dir.join(format!("{stem}.yaml"));
        if std::env::var_os("UPDATE_CRDS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &yaml).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run `UPDATE_CRDS=1 cargo test --test plugin crds::`",
                path.display()
            )
        });
        assert_eq!(
            committed,
            yaml,
            "{} is stale; run `UPDATE_CRDS=1 cargo test --test plugin crds::` and commit it",
            path.display()
        );
    }
}

/// Flattens an openAPIV3Schema into `path -> type` (`[]` for array items, `{}` for map values).
fn flatten(schema: &Value, path: &str, out: &mut BTreeMap<String, String>) {
    let ty = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    out.insert(path.to_string(), ty.to_string());
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            flatten(v, &format!("{path}.{k}"), out);
        }
    }
    if let Some(items) = schema.get("items") {
        flatten(items, &format!("{path}[]"), out);
    }
    if let Some(ap) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        flatten(ap, &format!("{path}{{}}"), out);
    }
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

#[test]
fn generated_crds_agree_with_upstream() {
    let Some(dir) = reference_dir() else { return };
    let upstream_files = [
        (
            "clusterprofiles",
            "multicluster.x-k8s.io_clusterprofiles.yaml",
        ),
        (
            "sveltosclusters",
            "lib.projectsveltos.io_sveltosclusters.yaml",
        ),
    ];
    for (stem, yaml) in crd_yamls() {
        let file = upstream_files.iter().find(|(s, _)| *s == stem).unwrap().1;
        let ours: Value = serde_saphyr::from_str(&yaml).unwrap();
        let theirs: Value =
            serde_saphyr::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
        for field in [
            "/spec/group",
            "/spec/scope",
            "/spec/names/kind",
            "/spec/names/plural",
            "/spec/names/singular",
        ] {
            assert_eq!(
                ours.pointer(field),
                theirs.pointer(field),
                "{stem}: {field}"
            );
        }
        let ov = &ours["spec"]["versions"][0];
        let tv = theirs["spec"]["versions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == ov["name"])
            .unwrap_or_else(|| panic!("{stem}: upstream has no version {}", ov["name"]));
        assert_eq!(ov["served"], tv["served"], "{stem}: served");
        assert_eq!(ov["storage"], tv["storage"], "{stem}: storage");
        assert_eq!(
            ov["subresources"], tv["subresources"],
            "{stem}: subresources"
        );
        let (mut o, mut t) = (BTreeMap::new(), BTreeMap::new());
        flatten(&ov["schema"]["openAPIV3Schema"], "", &mut o);
        flatten(&tv["schema"]["openAPIV3Schema"], "", &mut t);
        let mut problems = Vec::new();
        for (path, ty) in &o {
            match t.get(path) {
                None => problems.push(format!("{path}: not in upstream")),
                Some(u) if u != ty => problems.push(format!("{path}: ours {ty}, upstream {u}")),
                _ => {}
            }
        }
        assert!(
            problems.is_empty(),
            "{stem} disagrees with upstream:\n{}",
            problems.join("\n")
        );
        // Every modelled object must model all the fields upstream requires.
        assert!(
            o.len() > 20,
            "{stem}: suspiciously few properties modelled ({})",
            o.len()
        );
    }
}
