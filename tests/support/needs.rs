//! What a test needs from the machine (a CLI, a binary, a reference file) and what happens when it is
//! not there: with `CI=true` the test fails, naming what is missing; otherwise the test is recorded as
//! skipped, never silently.
//!
//! A skip writes `skipped: <test binary>::<test>: <what is missing>` straight to the terminal (libtest
//! captures `eprintln!`, not writes to the stderr handle, so the line shows in a plain `cargo test`) and
//! appends it to [`skip_log`]; `scripts/test` prints that file in its summary.

use std::io::Write;
use std::path::PathBuf;

/// The file skips are appended to: `$TESTENV_TMPDIR/skipped` during `scripts/test` (one file per run),
/// else `target/tmp/skipped` (appended to by every plain `cargo test`).
fn skip_log() -> PathBuf {
    match std::env::var_os("TESTENV_TMPDIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("skipped"),
        None => super::target_tmpdir().join("skipped"),
    }
}

/// Whether missing requirements are failures (`CI=true`, as `.ci/run` sets).
fn required_everywhere() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// `found` when it is `Some`; otherwise [`missing`]`(what)` and `None`.
///
/// ```ignore
/// let Some(cli) = support::needed(Cli::terraform_on_path(), "`terraform` on PATH") else { return };
/// ```
pub fn needed<T>(found: Option<T>, what: impl std::fmt::Display) -> Option<T> {
    if found.is_none() {
        missing(&what.to_string());
    }
    found
}

/// Reports that the running test cannot do (part of) its work because `what` is missing: panics with
/// `CI=true`, otherwise records a skip. Both are written to [`skip_log`].
pub fn missing(what: &str) {
    let test = current_test();
    if required_everywhere() {
        record(&format!(
            "missing: {test}: {what} (required when CI=true)\n"
        ));
        panic!("{test}: {what} is missing (required when CI=true)");
    }
    record(&format!("skipped: {test}: {what}\n"));
}

/// `<test binary>::<test>` (`e2e::bridge::lifecycle_tofu`), from the name libtest gives the thread running the
/// test.
fn current_test() -> String {
    let krate = super::test_binary_name();
    match std::thread::current().name() {
        Some(name) if name != "main" => format!("{krate}::{name}"),
        _ => krate,
    }
}

fn record(line: &str) {
    // Straight to the terminal, past libtest's capture of `eprintln!`.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    let path = skip_log();
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    // One short write to an O_APPEND file: lines of concurrent tests do not interleave.
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        let _ = writeln!(
            std::io::stderr().lock(),
            "support: cannot record the skip in {}: {e}",
            path.display()
        );
    }
}
