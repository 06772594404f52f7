//! The layer map of `docs/design/architecture.md`, checked on the source text: which top-level module of the
//! crate each file of `src/` may name (`crate::x`, including inside `use crate::{...}` groups). Every file and
//! folder of `src/` must belong to a layer, so a new one is classified before it lands. Today's known deviations
//! are listed in [`KNOWN_DEVIATIONS`] with their reason; an entry that no longer matches anything fails the test,
//! so the list only shrinks.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The crate's top-level modules.
const MODULES: &[&str] = &[
    "api",
    "bridge",
    "config_blocks",
    "data_sources",
    "docs",
    "ephemeral",
    "k8s",
    "provider",
    "resources",
    "tfplugin",
];

/// What a top-level module (folder or file of `src/`) may name besides itself.
fn allowed(module: &str) -> Option<&'static [&'static str]> {
    Some(match module {
        // The plugin layer and the API types are self-contained.
        "tfplugin" | "api" => &[],
        // The pure domain core reads the API types only.
        "bridge" => &["api"],
        // Kubernetes IO reads and writes the API types and the core's types.
        "k8s" => &["api", "bridge"],
        // The docs renderer reads schemas.
        "docs" => &["tfplugin"],
        // The mapping layer may use every layer below it and its own parts.
        "provider" | "config_blocks" | "resources" | "data_sources" | "ephemeral" => MODULES,
        // The binary.
        "main" | "lib" => MODULES,
        _ => return None,
    })
}

/// `(file under src/, module it names, why)`: where the code does not follow the map yet.
const KNOWN_DEVIATIONS: &[(&str, &str, &str)] = &[(
    "k8s/config/block.rs",
    "tfplugin",
    "the provider block's connection attributes (a tfplugin schema and Value mapping) are defined next to the \
     settings they produce; they belong in config_blocks/",
)];

fn visit(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            visit(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The text of `source` without comments (line comments, doc comments, block comments) and without the contents
/// of string literals, so that prose and messages naming a module do not count.
fn code_only(source: &str) -> String {
    let b = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = source[i + 2..]
                    .find("*/")
                    .map_or(b.len(), |e| i + 2 + e + 2);
                i = end;
            }
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#')) && raw_prefix_at(b, i) => {
                // Raw string r"..." or r#"..."#.
                let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                i = source[start..]
                    .find(&close)
                    .map_or(b.len(), |e| start + e + close.len());
                out.push_str("\"\"");
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') || b.get(i + 1) == Some(&b'\\') => {
                // A char literal ('"', '\'', '\n'); lifetimes have no closing quote and pass through.
                let from = if b[i + 1] == b'\\' { i + 3 } else { i + 2 };
                i = source[from..].find('\'').map_or(b.len(), |e| from + e + 1);
                out.push_str("' '");
            }
            _ => {
                let c = source[i..].chars().next().expect("in bounds");
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

/// Whether the `r` at `i` starts a raw string (`r"`, `r#"`, `br"`): not the end of an identifier.
fn raw_prefix_at(b: &[u8], i: usize) -> bool {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    match i.checked_sub(1).map(|j| b[j]) {
        None => true,
        Some(b'b') => i < 2 || !ident(b[i - 2]),
        Some(c) => !ident(c),
    }
}

/// The top-level modules `code` names through `crate::`: `crate::x::...` and every element of
/// `crate::{x::..., y, ...}` groups.
fn named_modules(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue; // e.g. `$crate::` or another crate's `my_crate::`
        }
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level elements of the group.
            let mut depth = 0;
            let mut element_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => element_start = true,
                    c if element_start && !c.is_whitespace() => {
                        element_start = false;
                        let name = ident(&group[i..]);
                        if !name.is_empty() {
                            out.insert(name);
                        }
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

#[test]
fn the_module_scanner_reads_paths_and_groups_and_skips_comments_and_strings() {
    let code = code_only(
        "use crate::{\n    api::X,\n    bridge::{a, b::{c}},\n    tfplugin,\n};\n\
         // crate::k8s in a comment\n/* crate::resources */ let s = \"crate::provider\";\n\
         let r = r#\"crate::docs\"#; let q = '\"'; let e = '\\''; let b = br\"crate::main\";\n\
         fn f<'a>(x: &'a crate::ephemeral::T) {}\n",
    );
    assert_eq!(
        named_modules(&code),
        ["api", "bridge", "ephemeral", "tfplugin"]
            .map(String::from)
            .into()
    );
}

#[test]
fn every_module_names_only_the_layers_it_may_use() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    visit(&src, &mut files);
    assert!(files.len() > 50, "found {} files", files.len());
    let mut offenders = Vec::new();
    let mut unclassified = BTreeSet::new();
    let mut used_deviations = BTreeSet::new();
    for file in &files {
        let rel = file
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        let top = rel.split('/').next().expect("a component");
        let module = top.strip_suffix(".rs").unwrap_or(top);
        let Some(may) = allowed(module) else {
            unclassified.insert(module.to_string());
            continue;
        };
        let text = std::fs::read_to_string(file).expect("read");
        for named in named_modules(&code_only(&text)) {
            if named == module
                || !MODULES.contains(&named.as_str())
                || may.contains(&named.as_str())
            {
                continue;
            }
            match KNOWN_DEVIATIONS
                .iter()
                .position(|(f, m, _)| *f == rel && *m == named)
            {
                Some(i) => {
                    used_deviations.insert(i);
                }
                None => offenders.push(format!("src/{rel} names crate::{named}")),
            }
        }
    }
    assert!(
        unclassified.is_empty(),
        "src/ modules missing from the layer map (tests/layers.rs, docs/design/architecture.md): {unclassified:?}"
    );
    assert!(
        offenders.is_empty(),
        "layer map broken (see docs/design/architecture.md):\n{}",
        offenders.join("\n")
    );
    let stale: Vec<_> = KNOWN_DEVIATIONS
        .iter()
        .enumerate()
        .filter(|(i, _)| !used_deviations.contains(i))
        .map(|(_, d)| d)
        .collect();
    assert!(
        stale.is_empty(),
        "known deviations that no longer occur (remove them from KNOWN_DEVIATIONS and the docs): {stale:?}"
    );
}
