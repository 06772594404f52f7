//! Checks our hand-written protocol definitions (`proto/`) against the reference copies of the published protocol:
//! same messages, fields (names, numbers, types, labels, oneofs), enums and RPCs.
//!
//! The reference directory is `$TFPLUGIN_REFERENCE_DIR`, else `../shared/reference` next to the crate. When it is
//! absent the test fails under `CI=true` and is recorded as skipped otherwise (`support::needed`).

use prost_types::{DescriptorProto, EnumDescriptorProto, FileDescriptorSet};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn reference_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("TFPLUGIN_REFERENCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference"));
    let missing = format!(
        "reference protos in {} (set TFPLUGIN_REFERENCE_DIR)",
        dir.display()
    );
    support::needed(
        dir.join("tfplugin6.11.proto").is_file().then_some(dir),
        missing,
    )
}

/// A normalized view of a descriptor set: one line per fact, keyed by full name.
fn facts(set: &FileDescriptorSet, package: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for file in set.file.iter().filter(|f| f.package() == package) {
        let prefix = format!(".{}", file.package());
        for m in &file.message_type {
            message(&prefix, m, &mut out);
        }
        for e in &file.enum_type {
            enumeration(&prefix, e, &mut out);
        }
        for s in &file.service {
            for rpc in &s.method {
                out.insert(
                    format!("rpc {prefix}.{}.{}", s.name(), rpc.name()),
                    format!(
                        "{}{} -> {}{}",
                        if rpc.client_streaming() {
                            "stream "
                        } else {
                            ""
                        },
                        rpc.input_type(),
                        if rpc.server_streaming() {
                            "stream "
                        } else {
                            ""
                        },
                        rpc.output_type()
                    ),
                );
            }
        }
    }
    out
}

fn message(prefix: &str, m: &DescriptorProto, out: &mut BTreeMap<String, String>) {
    let name = format!("{prefix}.{}", m.name());
    out.insert(format!("message {name}"), String::new());
    for f in &m.field {
        let oneof = f
            .oneof_index
            .filter(|_| !f.proto3_optional())
            .and_then(|i| m.oneof_decl.get(i as usize))
            .map(|o| format!(" oneof {}", o.name()))
            .unwrap_or_default();
        out.insert(
            format!("field {name}.{}", f.name()),
            format!(
                "#{} {:?} {:?} {}{}{}",
                f.number(),
                f.label(),
                f.r#type(),
                f.type_name(),
                if f.proto3_optional() { " optional" } else { "" },
                oneof
            ),
        );
    }
    for nested in &m.nested_type {
        message(&name, nested, out);
    }
    for e in &m.enum_type {
        enumeration(&name, e, out);
    }
}

fn enumeration(prefix: &str, e: &EnumDescriptorProto, out: &mut BTreeMap<String, String>) {
    let name = format!("{prefix}.{}", e.name());
    for v in &e.value {
        out.insert(format!("enum {name}.{}", v.name()), v.number().to_string());
    }
}

fn compile(files: &[&str], include: &Path) -> FileDescriptorSet {
    protox::compile(files, [include])
        .unwrap_or_else(|e| panic!("compiling {files:?} in {}: {e}", include.display()))
}

fn assert_same(ours: &BTreeMap<String, String>, reference: &BTreeMap<String, String>) {
    let mut problems = Vec::new();
    for (k, v) in reference {
        match ours.get(k) {
            None => problems.push(format!("missing: {k} {v}")),
            Some(o) if o != v => problems.push(format!("differs: {k}: ours {o}, reference {v}")),
            _ => {}
        }
    }
    for k in ours.keys().filter(|k| !reference.contains_key(*k)) {
        problems.push(format!("extra: {k}"));
    }
    assert!(
        problems.is_empty(),
        "protocol mismatches:\n{}",
        problems.join("\n")
    );
    assert!(!reference.is_empty());
}

fn ours() -> FileDescriptorSet {
    let proto = Path::new(env!("CARGO_MANIFEST_DIR")).join("proto");
    compile(
        &[
            "tfplugin6.proto",
            "grpc_controller.proto",
            "grpc_stdio.proto",
        ],
        &proto,
    )
}

#[test]
fn tfplugin6_matches_reference() {
    let Some(dir) = reference_dir() else { return };
    let reference = compile(&["tfplugin6.11.proto"], &dir);
    assert_same(
        &facts(&ours(), "tfplugin6"),
        &facts(&reference, "tfplugin6"),
    );
}

#[test]
fn go_plugin_services_match_reference() {
    let Some(dir) = reference_dir() else { return };
    let reference = compile(
        &[
            "go-plugin-grpc_controller.proto",
            "go-plugin-grpc_stdio.proto",
        ],
        &dir,
    );
    assert_same(&facts(&ours(), "plugin"), &facts(&reference, "plugin"));
}

#[test]
fn comparison_detects_differences() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("a.proto"),
        "syntax = \"proto3\"; package p; message M { int64 x = 1; }",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("b.proto"),
        "syntax = \"proto3\"; package p; message M { int32 x = 1; }",
    )
    .expect("write");
    let a = facts(&compile(&["a.proto"], dir.path()), "p");
    let b = facts(&compile(&["b.proto"], dir.path()), "p");
    assert!(std::panic::catch_unwind(|| assert_same(&a, &b)).is_err());
}
