//! The layout of `tests/`: three test binaries by what a test needs (`e2e/`: the control plane; `plugin/`: none;
//! `sveltos/`: the real Sveltos controllers, on a control plane of its own), one test file that must run alone (`claims.rs`, which says why at its top), and the support library
//! (`support/`). Every file of a binary's folder is a module its `main.rs` declares (cargo compiles only those: a
//! file it does not declare would never run), and CONTRIBUTING.md's test map has one line for each module.

use std::collections::BTreeSet;
use std::path::PathBuf;

fn tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// The test binaries with a folder, and the test files that are a binary alone.
const BINARIES: [&str; 3] = ["e2e", "plugin", "sveltos"];
const ALONE: [&str; 1] = ["claims.rs"];

fn entries(dir: &str) -> BTreeSet<String> {
    let path = tests_dir().join(dir);
    std::fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// The modules `tests/<binary>/main.rs` declares (`mod name;`).
fn declared(binary: &str) -> BTreeSet<String> {
    let main = tests_dir().join(binary).join("main.rs");
    std::fs::read_to_string(&main)
        .unwrap_or_else(|e| panic!("reading {}: {e}", main.display()))
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

/// Every test module as CONTRIBUTING.md's test map names it: `e2e/bridge.rs`, `plugin/docs.rs`, `claims.rs`.
fn modules() -> BTreeSet<String> {
    let mut all: BTreeSet<String> = ALONE.iter().map(|f| f.to_string()).collect();
    for binary in BINARIES {
        all.extend(
            declared(binary)
                .into_iter()
                .map(|m| format!("{binary}/{m}.rs")),
        );
    }
    all
}

#[test]
fn tests_holds_the_three_binaries_the_lone_file_and_support() {
    let mut expected: BTreeSet<String> = BINARIES.iter().map(|b| b.to_string()).collect();
    expected.extend(ALONE.iter().map(|f| f.to_string()));
    expected.insert("support".to_string());
    let found = entries("");
    assert_eq!(
        found, expected,
        "tests/ holds something else: put a new test file in tests/e2e (it needs the control plane), tests/plugin \
         (it does not) or tests/sveltos (it needs the real Sveltos controllers) and declare it in that folder's main.rs"
    );
}

#[test]
fn every_file_of_a_binary_is_a_module_it_declares() {
    for binary in BINARIES {
        let files: BTreeSet<String> = entries(binary)
            .into_iter()
            .filter(|f| f != "main.rs" && !f.ends_with(".proptest-regressions"))
            .collect();
        let modules: BTreeSet<String> = declared(binary)
            .into_iter()
            .map(|m| format!("{m}.rs"))
            .collect();
        assert_eq!(
            files, modules,
            "tests/{binary}: the files and the modules main.rs declares differ"
        );
    }
}

#[test]
fn contributing_maps_every_test_module() {
    let path = tests_dir().join("../CONTRIBUTING.md");
    let text = std::fs::read_to_string(&path).expect("reading CONTRIBUTING.md");
    // The map's rows: "| `e2e/bridge.rs` | what it tests |".
    let rows: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("| `")?.split_once("` |"))
        .map(|(module, _)| module.to_string())
        .filter(|m| m.ends_with(".rs"))
        .collect();
    assert_eq!(
        rows,
        modules(),
        "CONTRIBUTING.md's test map and the test modules differ (one row per module: | `e2e/x.rs` | what it tests |)"
    );
}
