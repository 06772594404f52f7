//! `terraform-provider-sveltos`: the plugin binary started by Terraform / OpenTofu.
//!
//! Usage: `terraform-provider-sveltos [--debug] [--version] [--help]`.

use std::process::ExitCode;
use tfsveltos::tfplugin::{self, ServeOptions};

/// The provider's source address as configurations write it: `terraform` resolves it to
/// registry.terraform.io/clusterinventory/sveltos, `tofu` to registry.opentofu.org/clusterinventory/sveltos, so the
/// `TF_REATTACH_PROVIDERS` value printed by `--debug` works with both.
const PROVIDER_ADDRESS: &str = "clusterinventory/sveltos";

/// Log targets whose events never reach the logs, at any level:
/// * `kube_client::client`: kube-client logs a response body it cannot decode at WARN (and bodies at DEBUG/TRACE);
///   a failed Secret LIST page would put kubeconfigs into `TF_LOG` output. The errors themselves still reach the
///   provider, which reports them without the body.
const DENIED_LOG_TARGETS: &[tfplugin::logging::LogCap] =
    &[tfplugin::logging::LogCap::off("kube_client::client")];

const HELP: &str = "\
terraform-provider-sveltos: Terraform/OpenTofu provider registering Cluster Inventory ClusterProfiles in Sveltos.

This is a plugin: terraform or tofu start it themselves. Options:
  --debug    serve without the plugin host (on a private Unix socket) and print a TF_REATTACH_PROVIDERS
             value to use with terraform/tofu
  --version  print the version
  --help     print this help
";

fn main() -> ExitCode {
    let mut debug = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--debug" | "-debug" => debug = true,
            "--version" | "-version" | "-v" => {
                println!("terraform-provider-sveltos {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            "--help" | "-help" | "-h" => {
                print!("{HELP}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("unknown argument {other:?}\n\n{HELP}");
                return ExitCode::from(2);
            }
        }
    }
    let opts = ServeOptions::new(PROVIDER_ADDRESS).debug(debug);
    tfplugin::binary::run(
        "terraform-provider-sveltos",
        opts,
        || tfplugin::logging::init_with("sveltos", DENIED_LOG_TARGETS),
        tfsveltos::provider::registry::new,
    )
}
