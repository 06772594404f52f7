//! The tests that need no control plane: the plugin layer in process and through the real binary (also driven by
//! the real CLIs, on the toy provider of `support::plugin` or with no cluster behind the provider), the source
//! text and the docs checked against the code, the CRDs, the workflows, exec plugins. One test binary, one module
//! per subject; CONTRIBUTING.md lists them with what each covers.
//!
//! `cargo test --test plugin`; `cargo test --test plugin docs::` runs one module.

support::test_binary!();

mod cli_schema;
mod crds;
mod cty_oracle;
mod doc_facts;
mod doc_truth;
mod docs;
mod duration_oracle;
mod exec_plugin;
mod install;
mod layers;
mod layout;
mod plugin_binary;
mod plugin_boundary;
mod plugin_ephemeral_cli;
mod plugin_grpc;
mod plugin_proto;
mod plugin_reattach;
mod plugin_redaction;
mod plugin_values;
mod release_signing;
mod support_items;
mod workflows;
