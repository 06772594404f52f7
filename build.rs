//! Compiles the plugin protocol definitions in `proto/` with protox (pure Rust, no system `protoc`) and generates
//! tonic services with tonic-prost-build. Server code is what the provider serves; client code is only used by the
//! in-process tests, which drive the server through a real gRPC client.

use std::error::Error;

const PROTOS: &[&str] = &[
    "proto/tfplugin6.proto",
    "proto/grpc_controller.proto",
    "proto/grpc_stdio.proto",
];

/// What decides what the kubeconfig check accepts, refuses and writes: its code, and the crate versions
/// `Cargo.lock` pins (the YAML parser among them). Their digest names the check's build
/// (`KUBECONFIG_CHECK_BUILD`), which keys the checks an apply records for later plans: a plan never takes for its
/// own a check recorded by a build whose checking code or parser differ, whatever its version number says.
const KUBECONFIG_CHECK: &[&str] = &[
    "Cargo.lock",
    "src/domain/kubeconfig",
    "src/domain/credentials/resolve.rs",
];

/// The files under `path` (itself, when it is a file), sorted.
fn files(path: &std::path::Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        entries.sort();
        for e in entries {
            files(&e, out)?;
        }
    } else if path.exists() {
        out.push(path.to_path_buf());
    }
    Ok(())
}

/// SHA-256 (hex) of the names and contents of the files of [`KUBECONFIG_CHECK`].
fn kubeconfig_check_build() -> std::io::Result<String> {
    use sha2::Digest;
    let mut all = Vec::new();
    for p in KUBECONFIG_CHECK {
        println!("cargo:rerun-if-changed={p}");
        files(std::path::Path::new(p), &mut all)?;
    }
    let mut h = sha2::Sha256::new();
    for f in all {
        let name = f.to_string_lossy().replace('\\', "/");
        h.update((name.len() as u64).to_be_bytes());
        h.update(name.as_bytes());
        let contents = std::fs::read(&f)?;
        h.update((contents.len() as u64).to_be_bytes());
        h.update(contents);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

fn main() -> Result<(), Box<dyn Error>> {
    for p in PROTOS {
        println!("cargo:rerun-if-changed={p}");
    }
    println!(
        "cargo:rustc-env=KUBECONFIG_CHECK_BUILD={}",
        kubeconfig_check_build()?
    );
    let fds = protox::compile(PROTOS, ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(fds)?;
    Ok(())
}
