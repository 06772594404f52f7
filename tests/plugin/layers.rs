//! The layer map of `docs/design/architecture.md`, checked on the source text. Each layer is one folder of
//! `src/` (the mapping layer, `src/provider/`, is split into parts: `state`, `diag`, `blocks`, `resources`,
//! `data_sources`, `ephemeral` and the composition root `registry`), and this test says which of them each file
//! may name: `crate::x::...` paths, every branch of `use crate::{...}` groups, and `super::`/`self::` paths
//! resolved against the file's module. Every file and folder of `src/` must belong to a layer, so a new one is
//! classified before it lands. On top of the "may use" lists: nothing imports the composition root, `k8s` never
//! names the plugin layer, and the graph of what the code actually names has no cycle, neither between the
//! top-level folders nor between the parts of `src/provider/`. Where the code does not follow the map, the
//! deviation is listed in [`KNOWN_DEVIATIONS`] with its reason; an entry that no longer matches anything fails the
//! test, so the list only shrinks.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crate's top-level modules, one folder each.
const MODULES: &[&str] = &["api", "domain", "k8s", "provider", "runtime", "tfplugin"];

/// The parts of the mapping layer (`src/provider/<part>` or `<part>.rs`), named `provider/<part>` below;
/// `src/provider/mod.rs` itself is `provider`.
const PROVIDER_PARTS: &[&str] = &[
    "blocks",
    "data_sources",
    "diag",
    "ephemeral",
    "registry",
    "resources",
    "state",
];

/// The composition root: it lists the resources, data sources and ephemeral resources; only the binary builds it.
const ROOT: &str = "provider/registry";

/// Everything below the mapping layer.
const LOWER: &[&str] = &["api", "domain", "k8s", "runtime", "tfplugin"];

/// What a unit (a top-level module, or a part of the mapping layer) may name besides itself.
fn allowed(unit: &str) -> Option<&'static [&'static str]> {
    Some(match unit {
        // The plugin layer (with its docs renderer) and the API types are self-contained.
        "tfplugin" | "api" => &[],
        // The pure domain core reads the API types only.
        "domain" => &["api"],
        // Kubernetes IO reads and writes the API types and the core's types; it knows no Terraform value.
        "k8s" => &["api", "domain"],
        // The orchestration: one plan, apply or destroy from its reads to its writes, through k8s, on the core.
        "runtime" => &["api", "domain", "k8s"],
        // The mapping layer's folder module only declares its parts.
        "provider" => LOWER,
        // The shared state: clients, built through k8s.
        "provider/state" => &["api", "domain", "k8s", "runtime", "tfplugin", "provider"],
        // The one mapping from the core's problems and the IO layer's errors to diagnostics.
        "provider/diag" => &["api", "domain", "k8s", "runtime", "tfplugin", "provider"],
        // Configuration blocks defined once; they read clients from the state.
        "provider/blocks" => &[
            "api",
            "domain",
            "k8s",
            "runtime",
            "tfplugin",
            "provider",
            "provider/state",
            "provider/diag",
        ],
        // What Terraform sees, on the state, the diagnostics and the blocks; never one another.
        "provider/resources" | "provider/data_sources" | "provider/ephemeral" => &[
            "api",
            "domain",
            "k8s",
            "runtime",
            "tfplugin",
            "provider",
            "provider/state",
            "provider/diag",
            "provider/blocks",
        ],
        // The composition root and the binary may use everything.
        "provider/registry" | "main" | "lib" => ALL_UNITS,
        _ => return None,
    })
}

/// Every unit a path can name.
const ALL_UNITS: &[&str] = &[
    "api",
    "domain",
    "k8s",
    "runtime",
    "tfplugin",
    "provider",
    "provider/blocks",
    "provider/data_sources",
    "provider/diag",
    "provider/ephemeral",
    "provider/registry",
    "provider/resources",
    "provider/state",
];

/// `(file under src/, unit it names, why)`: where the code does not follow the map yet. Empty today; an entry
/// letting `k8s` name `tfplugin` is refused whatever its reason.
const KNOWN_DEVIATIONS: &[(&str, &str, &str)] = &[];

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

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The identifier at `i` (empty if none) and where it ends.
fn ident_at(s: &str, i: usize) -> (&str, usize) {
    let b = s.as_bytes();
    let mut end = i;
    while end < b.len() && is_ident(b[end]) {
        end += 1;
    }
    (&s[i..end], end)
}

/// Whether `::` follows `i` (after blanks); then the position after it.
fn colons_after(s: &str, i: usize) -> Option<usize> {
    let j = skip_ws(s.as_bytes(), i);
    s[j..].starts_with("::").then_some(j + 2)
}

/// Reads the use tree (or path) at `i` below `prefix` into `out`, every path whole; returns where it ends.
fn use_tree(s: &str, i: usize, prefix: &[String], out: &mut BTreeSet<Vec<String>>) -> usize {
    let b = s.as_bytes();
    let i = skip_ws(b, i);
    let mut record = |p: &[String]| {
        if !p.is_empty() {
            out.insert(p.to_vec());
        }
    };
    match b.get(i) {
        Some(b'{') => {
            let mut j = i + 1;
            loop {
                j = skip_ws(b, j);
                match b.get(j) {
                    None => return j,
                    Some(b'}') => return j + 1,
                    Some(b',') => j += 1,
                    Some(_) => {
                        let end = use_tree(s, j, prefix, out);
                        if end == j {
                            // Not a path (cannot happen in valid code): step over it.
                            j += 1;
                        } else {
                            j = end;
                        }
                    }
                }
            }
        }
        Some(b'*') => {
            record(prefix);
            i + 1
        }
        Some(c) if is_ident(*c) => {
            let (name, end) = ident_at(s, i);
            if name == "self" {
                record(prefix);
                return end;
            }
            let mut path = prefix.to_vec();
            path.push(name.to_string());
            match colons_after(s, end) {
                Some(next) if matches!(b.get(skip_ws(b, next)), Some(c) if *c == b'{' || *c == b'*' || is_ident(*c)) => {
                    use_tree(s, next, &path, out)
                }
                _ => {
                    record(&path);
                    end
                }
            }
        }
        _ => i,
    }
}

/// The module path of a file under `src/` (`provider/blocks/mod.rs` is `provider::blocks`, `lib.rs` the root).
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The crate paths `code` (a file of module `module`, comments and strings removed) names, each cut to its first
/// two segments (see [`full_paths`]).
fn named_paths(code: &str, module: &[String]) -> BTreeSet<Vec<String>> {
    full_paths(code, module)
        .into_iter()
        .map(|p| p.into_iter().take(2).collect())
        .collect()
}

/// The crate paths `code` (a file of module `module`, comments and strings removed) names, whole:
/// `crate::a::b::...`, every branch of `crate::{a::{b, c}, d}` groups, and `super::`/`self::` paths resolved
/// against the module they are written in (inline `mod x { ... }` blocks included).
fn full_paths(code: &str, module: &[String]) -> BTreeSet<Vec<String>> {
    let s = code;
    let b = s.as_bytes();
    let mut out = BTreeSet::new();
    let mut depth = 0usize;
    // Inline modules open at the current point: (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut pending_mod: Option<String> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'{' {
            depth += 1;
            if let Some(name) = pending_mod.take() {
                inline.push((name, depth));
            }
            i += 1;
            continue;
        }
        if c == b'}' {
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
            i += 1;
            continue;
        }
        if c == b';' {
            pending_mod = None;
        }
        if !is_ident(c) || (i > 0 && (is_ident(b[i - 1]) || b[i - 1] == b'$')) {
            i += 1;
            continue;
        }
        let (word, end) = ident_at(s, i);
        let here = || -> Vec<String> {
            let mut m = module.to_vec();
            m.extend(inline.iter().map(|(n, _)| n.clone()));
            m
        };
        match word {
            "mod" => {
                let (name, after) = ident_at(s, skip_ws(b, end));
                if !name.is_empty() {
                    pending_mod = Some(name.to_string());
                }
                i = after.max(end);
            }
            "crate" => match colons_after(s, end) {
                Some(next) => i = use_tree(s, next, &[], &mut out).max(next),
                None => i = end,
            },
            "super" | "self" => {
                let mut base = here();
                let mut escaped = word == "super" && base.pop().is_none();
                let mut tree_at = None;
                let mut next = end;
                while let Some(after) = colons_after(s, next) {
                    tree_at = Some(after);
                    let (w, e) = ident_at(s, skip_ws(b, after));
                    if w != "super" {
                        break;
                    }
                    escaped |= base.pop().is_none();
                    next = e;
                }
                i = match tree_at {
                    Some(at) if !escaped => use_tree(s, at, &base, &mut out).max(at),
                    Some(at) => at,
                    None => end,
                };
            }
            _ => i = end,
        }
    }
    out
}

/// The unit a crate path (cut to two segments) belongs to, if it is one of the map's.
fn unit_of_path(path: &[String]) -> Option<String> {
    match path {
        [top, part, ..] if top == "provider" && PROVIDER_PARTS.contains(&part.as_str()) => {
            Some(format!("provider/{part}"))
        }
        [top, ..] if MODULES.contains(&top.as_str()) => Some(top.clone()),
        _ => None,
    }
}

/// The unit a file under `src/` belongs to: its top-level module, or for `src/provider/` its part.
fn unit_of_file(rel: &str) -> String {
    let mut parts = rel.split('/');
    let top = parts.next().expect("a component");
    let top = top.strip_suffix(".rs").unwrap_or(top);
    if top == "provider"
        && let Some(part) = parts.next()
    {
        let part = part.strip_suffix(".rs").unwrap_or(part);
        return if part == "mod" {
            "provider".into()
        } else {
            format!("provider/{part}")
        };
    }
    top.to_string()
}

/// The top-level modules `code` names through `crate::`.
fn named_modules(code: &str) -> BTreeSet<String> {
    named_paths(code, &[])
        .into_iter()
        .map(|p| p[0].clone())
        .collect()
}

/// Every file of `src/` as (path under `src/`, unit, units it names besides its own).
fn scan() -> Vec<(String, String, BTreeSet<String>)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    visit(&src, &mut files);
    assert!(files.len() > 50, "found {} files", files.len());
    let mut out = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        let unit = unit_of_file(&rel);
        let text = std::fs::read_to_string(file).expect("read");
        let named = named_paths(&code_only(&text), &module_of(&rel))
            .iter()
            .filter_map(|p| unit_of_path(p))
            .filter(|u| *u != unit)
            .collect();
        out.push((rel, unit, named));
    }
    out
}

/// A cycle of `graph` (its nodes in order, the first repeated at the end), if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn dfs(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = dfs(next, graph, done, stack) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| dfs(n, graph, &mut done, &mut Vec::new()))
}

/// The graph of what the code names, with each unit mapped by `group` (`None`: left out).
fn graph_of(group: impl Fn(&str) -> Option<String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, unit, named) in scan() {
        let Some(from) = group(&unit) else { continue };
        for to in named.iter().filter_map(|n| group(n)) {
            if to != from {
                graph.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    graph
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
fn the_path_scanner_reads_nested_groups_and_resolves_super_in_inline_modules() {
    let code = code_only(
        "use crate::provider::{\n    blocks::x,\n    state::{NotReady, ProviderState},\n};\n\
         use super::claim::{a, b};\nfn f() { crate::k8s::io::list::<K>(c); super::super::state::g(); }\n\
         pub(super) fn h() {}\nmod tests {\n    use super::*;\n    fn t() { super::super::all(); }\n}\n\
         fn after() { super::y(); self::z(); }\n",
    );
    let module: Vec<String> = ["provider", "resources", "bridge"].map(String::from).into();
    let paths: BTreeSet<String> = named_paths(&code, &module)
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    let want: BTreeSet<String> = [
        "provider::blocks",
        "provider::state",
        "provider::resources",
        "k8s::io",
    ]
    .map(String::from)
    .into();
    assert_eq!(paths, want);
    let units: BTreeSet<String> = named_paths(&code, &module)
        .iter()
        .filter_map(|p| unit_of_path(p))
        .collect();
    assert_eq!(
        units,
        [
            "k8s",
            "provider/blocks",
            "provider/resources",
            "provider/state"
        ]
        .map(String::from)
        .into()
    );
    assert_eq!(
        unit_of_file("provider/resources/cluster_inventory_bridge/apply.rs"),
        "provider/resources"
    );
    assert_eq!(unit_of_file("provider/registry.rs"), "provider/registry");
    assert_eq!(unit_of_file("provider/mod.rs"), "provider");
    assert_eq!(unit_of_file("k8s/config/mod.rs"), "k8s");
    assert_eq!(module_of("provider/blocks/mod.rs"), ["provider", "blocks"]);
}

#[test]
fn every_module_names_only_the_layers_it_may_use() {
    let mut offenders = Vec::new();
    let mut unclassified = BTreeSet::new();
    let mut used_deviations = BTreeSet::new();
    for (rel, unit, named) in scan() {
        let Some(may) = allowed(&unit) else {
            unclassified.insert(unit);
            continue;
        };
        for n in named.iter().filter(|n| !may.contains(&n.as_str())) {
            match KNOWN_DEVIATIONS
                .iter()
                .position(|(f, m, _)| *f == rel && *m == n)
            {
                Some(i) => {
                    used_deviations.insert(i);
                }
                None => offenders.push(format!("src/{rel} ({unit}) names {n}")),
            }
        }
    }
    assert!(
        unclassified.is_empty(),
        "src/ modules missing from the layer map (tests/plugin/layers.rs, docs/design/architecture.md): {unclassified:?}"
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

#[test]
fn k8s_names_no_terraform_type() {
    assert!(
        !allowed("k8s").expect("classified").contains(&"tfplugin"),
        "k8s may not use tfplugin"
    );
    let excused: Vec<_> = KNOWN_DEVIATIONS
        .iter()
        .filter(|(f, m, _)| f.starts_with("k8s/") && *m == "tfplugin")
        .collect();
    assert!(
        excused.is_empty(),
        "k8s naming tfplugin cannot be a known deviation: {excused:?}"
    );
    let offenders: Vec<String> = scan()
        .into_iter()
        .filter(|(_, unit, named)| unit == "k8s" && named.contains("tfplugin"))
        .map(|(rel, ..)| format!("src/{rel}"))
        .collect();
    assert!(
        offenders.is_empty(),
        "Terraform schemas and values belong in src/provider/blocks, not in k8s: {offenders:?}"
    );
}

#[test]
fn nothing_imports_the_composition_root() {
    let offenders: Vec<String> = scan()
        .into_iter()
        .filter(|(rel, unit, named)| {
            named.contains(ROOT) && !matches!(rel.as_str(), "main.rs" | "lib.rs") && unit != ROOT
        })
        .map(|(rel, ..)| format!("src/{rel}"))
        .collect();
    assert!(
        offenders.is_empty(),
        "{ROOT} lists the provider's types; only the binary may use it, nothing imports it back: {offenders:?}"
    );
    for unit in ALL_UNITS.iter().filter(|u| **u != ROOT) {
        assert!(
            !allowed(unit).unwrap_or_default().contains(&ROOT),
            "{unit} may not use {ROOT}"
        );
    }
}

#[test]
fn the_top_level_folders_import_one_another_without_a_cycle() {
    let graph = graph_of(|unit| {
        let top = unit.split('/').next().unwrap_or(unit);
        MODULES.contains(&top).then(|| top.to_string())
    });
    assert!(
        graph.contains_key("provider") && graph.contains_key("k8s"),
        "{graph:?}"
    );
    assert_eq!(find_cycle(&graph), None, "import cycle: {graph:?}");
}

#[test]
fn the_parts_of_the_mapping_layer_import_one_another_without_a_cycle() {
    let graph = graph_of(|unit| unit.starts_with("provider/").then(|| unit.to_string()));
    assert!(graph.contains_key(ROOT), "{graph:?}");
    assert_eq!(find_cycle(&graph), None, "import cycle: {graph:?}");
    // What everything is built on never reaches up to what Terraform sees.
    let mut reached = BTreeMap::new();
    for base in ["provider/state", "provider/diag", "provider/blocks"] {
        let mut seen = BTreeSet::new();
        let mut todo = vec![base.to_string()];
        while let Some(n) = todo.pop() {
            for next in graph.get(&n).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        reached.insert(base, seen);
    }
    for (base, seen) in &reached {
        for top in [
            "provider/resources",
            "provider/data_sources",
            "provider/ephemeral",
            ROOT,
        ] {
            assert!(!seen.contains(top), "{base} reaches {top}: {graph:?}");
        }
    }
}

/// Files compiled for the unit tests only (declared under `#[cfg(test)]`): not part of the structure.
const TEST_ONLY_FILES: &[&str] = &[
    "tests.rs",
    "fixtures.rs",
    "fixture.rs",
    "testutil.rs",
    "coverage.rs",
];

fn is_test_only(rel: &str) -> bool {
    TEST_ONLY_FILES
        .iter()
        .any(|f| rel.rsplit('/').next() == Some(*f))
}

/// `text` without its inline unit tests (the `#[cfg(test)] mod tests { ... }` that ends a file).
fn production_code(text: &str) -> String {
    match text.find("\n#[cfg(test)]\nmod tests {") {
        Some(at) => text[..at].to_string(),
        None => text.to_string(),
    }
}

/// Folders whose files must not import one another in a circle (their unit tests aside): all of them.
const ACYCLIC_FOLDERS: &[&str] = &[
    "api/",
    "domain/",
    "k8s/",
    "provider/",
    "runtime/",
    "tfplugin/",
];

/// The graph of which file of `src/` names which (through `crate::`, `super::` and `self::` paths; a path is the
/// file of its longest module prefix), for the files under `folders`.
fn file_graph(folders: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    visit(&src, &mut files);
    let rel_of = |f: &PathBuf| {
        f.strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/")
    };
    let by_module: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|f| (module_of(&rel_of(f)), rel_of(f)))
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let rel = rel_of(file);
        if !folders.iter().any(|f| rel.starts_with(f)) || is_test_only(&rel) {
            continue;
        }
        let text = production_code(&std::fs::read_to_string(file).expect("read"));
        for path in full_paths(&code_only(&text), &module_of(&rel)) {
            let named = (1..=path.len())
                .rev()
                .find_map(|n| by_module.get(&path[..n]));
            if let Some(named) = named.filter(|n| **n != rel) {
                graph.entry(rel.clone()).or_default().insert(named.clone());
            }
        }
    }
    graph
}

#[test]
fn no_files_import_one_another_in_a_circle() {
    let graph = file_graph(ACYCLIC_FOLDERS);
    assert!(
        graph.contains_key("provider/resources/cluster_inventory_bridge/plan.rs")
            && graph.contains_key("runtime/snapshot.rs"),
        "{graph:?}"
    );
    assert!(
        graph["provider/resources/cluster_inventory_bridge/plan.rs"]
            .contains("runtime/snapshot.rs"),
        "{graph:?}"
    );
    assert_eq!(
        find_cycle(&graph),
        None,
        "import cycle between files: {graph:?}"
    );
}

/// The cycle check really finds a cycle (a check that cannot fail proves nothing).
#[test]
fn the_cycle_check_finds_a_cycle() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
        }
        g
    };
    assert_eq!(
        find_cycle(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])),
        None
    );
    assert_eq!(
        find_cycle(&graph(&[("a", "b"), ("b", "c"), ("c", "b")])),
        Some(["b", "c", "b"].map(String::from).into())
    );
}
