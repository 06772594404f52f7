//! Compiles the plugin protocol definitions in `proto/` with protox (pure Rust, no system `protoc`) and generates
//! tonic services with tonic-prost-build. Server code is what the provider serves; client code is only used by the
//! in-process tests, which drive the server through a real gRPC client.

use std::error::Error;

const PROTOS: &[&str] = &[
    "proto/tfplugin6.proto",
    "proto/grpc_controller.proto",
    "proto/grpc_stdio.proto",
];

fn main() -> Result<(), Box<dyn Error>> {
    for p in PROTOS {
        println!("cargo:rerun-if-changed={p}");
    }
    let fds = protox::compile(PROTOS, ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(fds)?;
    Ok(())
}
