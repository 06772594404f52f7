//! Every `pub` item of the support library (`tests/support`) is used by a test. The compiler warns about an unused
//! private item but not about an unused `pub` item of a library, so without this check fixtures nobody uses any
//! more would pile up there. A text search: an item counts as used when a test module, a test binary's root or a
//! benchmark names it (comment lines aside), when support's exported macros name it (they expand in the test
//! binaries), or, for a type, when it is in the signature of a used `pub fn` (a test holds a value of it without
//! naming it, e.g. the guard `TestEnv::start` returns). An item only support itself uses is not `pub`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `.rs` files under `dir`, recursively, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in
            std::fs::read_dir(&d).unwrap_or_else(|e| panic!("reading {}: {e}", d.display()))
        {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `text` has `word` as a whole identifier.
fn names(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(is_ident_char) && !after.is_some_and(is_ident_char)
    })
}

/// The identifier at the start of `s`.
fn ident(s: &str) -> &str {
    let end = s.find(|c| !is_ident_char(c)).unwrap_or(s.len());
    &s[..end]
}

/// A `pub` item of the support library.
#[derive(Debug)]
struct Item {
    /// `tests/support/<file>:<line>`.
    at: String,
    kind: &'static str,
    name: String,
    /// For a `pub fn`: its signature (up to its body), where the types it takes and returns are named.
    signature: String,
}

const KINDS: [&str; 8] = [
    "fn", "struct", "enum", "trait", "type", "const", "static", "mod",
];

/// The `pub` items declared in `text` (items, `pub use` re-exports, exported macros).
fn items(file: &str, text: &str) -> Vec<Item> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let at = format!("tests/support/{file}:{}", i + 1);
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("pub ") {
            let rest = rest
                .trim_start_matches("async ")
                .trim_start_matches("unsafe ");
            if let Some(path) = rest.strip_prefix("use ") {
                // `a::b::C;` or `a::{b, C};`: the last segment, or each name in the braces
                let path = path.trim_end_matches(';');
                let names: Vec<&str> = match path.split_once('{') {
                    Some((_, group)) => group.trim_end_matches('}').split(',').collect(),
                    None => path.rsplit("::").take(1).collect(),
                };
                for name in names {
                    let name = name.rsplit(' ').next().unwrap_or_default();
                    out.push(Item {
                        at: at.clone(),
                        kind: "use",
                        name: ident(name.trim()).to_string(),
                        signature: String::new(),
                    });
                }
                continue;
            }
            for kind in KINDS {
                if let Some(name) = rest.strip_prefix(kind).and_then(|r| r.strip_prefix(' ')) {
                    let from: usize = lines[..i].iter().map(|l| l.len() + 1).sum();
                    let signature = if kind == "fn" {
                        let tail = &text[from..];
                        tail[..tail.find(['{', ';']).unwrap_or(tail.len())].to_string()
                    } else {
                        String::new()
                    };
                    out.push(Item {
                        at: at.clone(),
                        kind,
                        name: ident(name).to_string(),
                        signature,
                    });
                }
            }
        } else if let Some(name) = trimmed.strip_prefix("macro_rules! ") {
            assert!(
                i > 0 && lines[i - 1].trim() == "#[macro_export]",
                "{at}: a macro of the support library is exported (`#[macro_export]`) or not there"
            );
            out.push(Item {
                at,
                kind: "macro",
                name: ident(name).to_string(),
                signature: String::new(),
            });
        }
    }
    out
}

/// The bodies of the exported macros of `text`: from `macro_rules!` to the closing brace at the start of a line.
fn macro_bodies(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        if line.trim_start().starts_with("macro_rules! ") {
            inside = true;
        }
        if inside {
            out += line;
            out.push('\n');
            if line == "}" {
                inside = false;
            }
        }
    }
    out
}

/// `text` without its comment lines (`//`, `///`, `//!`).
fn code(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_pub_item_of_support_is_used_by_a_test() {
    let root = repo();
    let support_dir = root.join("tests/support");
    let mut all = Vec::new();
    let mut macros = String::new();
    for path in rust_files(&support_dir) {
        let text = read(&path);
        let file = path
            .strip_prefix(&support_dir)
            .unwrap()
            .display()
            .to_string();
        all.extend(items(&file, &text));
        macros += &macro_bodies(&text);
    }
    assert!(
        all.iter().any(|i| i.name == "TestEnv") && all.iter().any(|i| i.name == "test_binary"),
        "the item scan found too little: {all:?}"
    );

    // What the tests, the test binaries' roots and the benchmarks say.
    let mut users = code(&macros);
    let mut read_files = 0;
    for dir in ["tests", "benches"] {
        for path in rust_files(&root.join(dir)) {
            if !path.starts_with(&support_dir) {
                users += &code(&read(&path));
                users.push('\n');
                read_files += 1;
            }
        }
    }
    assert!(read_files > 30, "only {read_files} test files read");

    let used_fns: Vec<&Item> = all
        .iter()
        .filter(|i| i.kind == "fn" && names(&users, &i.name))
        .collect();
    let unused: BTreeSet<String> = all
        .iter()
        .filter(|i| !names(&users, &i.name))
        .filter(|i| {
            let is_type = matches!(i.kind, "struct" | "enum" | "trait" | "type");
            !(is_type && used_fns.iter().any(|f| names(&f.signature, &i.name)))
        })
        .map(|i| format!("{} {} {}", i.at, i.kind, i.name))
        .collect();
    assert!(
        unused.is_empty(),
        "pub items of tests/support that no test uses (delete them, or make them private if support uses them):\n{}",
        unused.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// The checker's own parts on a made-up library.
#[test]
fn the_item_scan_finds_items_re_exports_macros_and_signatures() {
    let text = "//! doc\npub mod m;\npub use a::b::{c, D};\npub use x::Y;\npub struct S {\n    pub f: u8,\n}\n\
                impl S {\n    pub async fn go(\n        &self,\n    ) -> Guard {\n        todo()\n    }\n}\n\
                fn private() {}\n#[macro_export]\nmacro_rules! mac {\n    () => { $crate::inner() };\n}\n";
    let found: Vec<(&str, String)> = items("x.rs", text)
        .iter()
        .map(|i| (i.kind, i.name.clone()))
        .collect();
    assert_eq!(
        found,
        [
            ("mod", "m".to_string()),
            ("use", "c".to_string()),
            ("use", "D".to_string()),
            ("use", "Y".to_string()),
            ("struct", "S".to_string()),
            ("fn", "go".to_string()),
            ("macro", "mac".to_string()),
        ]
    );
    let go = items("x.rs", text)
        .into_iter()
        .find(|i| i.name == "go")
        .unwrap();
    assert!(names(&go.signature, "Guard"), "{}", go.signature);
    assert!(names(&macro_bodies(text), "inner"));
    assert!(names("a.go(1)", "go") && !names("a.goes(1)", "go") && !names("ago", "go"));
    assert_eq!(code("// x\nlet y = 1; // z\n  /// w"), "let y = 1; // z");
}
