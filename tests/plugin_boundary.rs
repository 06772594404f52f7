//! The plugin layer (`src/tfplugin/`, `proto/`) is generic: it must not mention Kubernetes or the provider's domain,
//! so that another provider could reuse it unchanged. (Doc examples may name this crate's library path.)

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
                "crate::bridge",
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
