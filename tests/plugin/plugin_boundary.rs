//! Layer boundaries, checked on the source text:
//! - the plugin layer (`src/tfplugin/`, `proto/`) is generic: it must not mention Kubernetes or the provider's
//!   domain, so that another provider could reuse it unchanged (doc examples may name this crate's library path);
//! - the domain core (`src/domain/`) does no IO: no `kube`, `tokio`, `std::fs`, `std::env`, `std::process`, network;
//! - the mapping layer (`src/provider/`: its state, blocks, resources, data sources and ephemeral resources) does
//!   its IO through `crate::k8s`: it builds no `kube::Api`, reads no files and runs no processes itself.

use std::path::Path;

fn visit(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            visit(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "proto") {
            files.push(path);
        }
    }
}

#[test]
fn plugin_layer_knows_nothing_of_the_domain() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    visit(&root.join("src/tfplugin"), &mut files);
    visit(&root.join("proto"), &mut files);
    assert!(files.len() > 10, "found {files:?}");
    // The library's own path, as used by doc examples.
    let lib_path = "tfsveltos::";
    let mut offenders = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read");
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase().replace(lib_path, "");
            if [
                "kube",
                "k8s",
                "sveltos",
                "clusterprofile",
                "crate::api",
                "crate::domain",
            ]
            .iter()
            .any(|w| lower.contains(w))
            {
                offenders.push(format!("{}:{}: {line}", file.display(), n + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "domain terms in the plugin layer:\n{}",
        offenders.join("\n")
    );
}

/// Lines of the Rust files under `dirs` (relative to the crate root) that contain one of `words`, comments and
/// doc comments excluded.
fn offending_lines(dirs: &[&str], words: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in dirs {
        visit(&root.join(d), &mut files);
    }
    assert!(!files.is_empty(), "no files under {dirs:?}");
    let mut offenders = Vec::new();
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
    {
        let text = std::fs::read_to_string(file).expect("read");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if words.iter().any(|w| code.contains(w)) {
                offenders.push(format!("{}:{}: {line}", file.display(), n + 1));
            }
        }
    }
    offenders
}

/// What the pure core must never use.
const CORE_FORBIDDEN: &[&str] = &[
    "kube::",
    "use kube",
    "tokio",
    "std::fs",
    "std::env",
    "std::process",
    "std::net",
    "reqwest",
    "hyper",
];

/// What the mapping layer must leave to `crate::k8s`.
const MAPPING_FORBIDDEN: &[&str] = &[
    "Api<",
    "Api::",
    "kube::Api",
    "kube::api",
    "std::fs",
    "std::process",
    "tokio::fs",
    "tokio::process",
];

#[test]
fn the_core_does_no_io() {
    let offenders = offending_lines(&["src/domain"], CORE_FORBIDDEN);
    assert!(
        offenders.is_empty(),
        "IO in the pure core (src/domain):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_mapping_layer_leaves_io_to_k8s() {
    let offenders = offending_lines(&["src/provider"], MAPPING_FORBIDDEN);
    assert!(
        offenders.is_empty(),
        "IO outside crate::k8s (build it behind a k8s function):\n{}",
        offenders.join("\n")
    );
}

/// The checks above really catch a forbidden use (a check that cannot fail proves nothing).
#[test]
fn the_boundary_checks_catch_a_forbidden_use() {
    let dir = tempfile::tempdir().expect("tempdir");
    let probe = dir.path().join("probe.rs");
    std::fs::write(
        &probe,
        "// std::fs in a comment is fine\nfn f() { let _ = std::fs::read(\"x\"); let a: Api<Secret> = todo!(); }\n",
    )
    .expect("write");
    let dir_str = dir.path().to_str().expect("utf-8");
    assert_eq!(offending_lines(&[dir_str], CORE_FORBIDDEN).len(), 1);
    assert_eq!(offending_lines(&[dir_str], MAPPING_FORBIDDEN).len(), 1);
}
