//! The end-to-end tests: everything that needs the control plane (`scripts/testenv`: a real kube-apiserver with
//! our CRDs, and its member cluster), mostly driven by the real `tofu` / `terraform` CLIs. One test binary, one
//! module per subject; CONTRIBUTING.md lists them with what each covers.
//!
//! The modules' tests run concurrently in one process: they share the control plane (each test works in
//! namespaces of its own, `support::unique_namespace`) and whatever else a test must not see moving under it is
//! behind a lock in `support` (the member cluster's writers: `support::hub`). The tests that count the main API
//! server's writes cannot share it with these and are a binary of their own, `tests/claims.rs`.
//!
//! `cargo test --test e2e` (the environment is started for the binary, or reused from `scripts/testenv up`);
//! `cargo test --test e2e bridge::` runs one module.

support::test_binary!();

mod apiserver_restart;
mod bridge;
mod cluster_api;
mod data_sources;
mod deregistration;
mod dying_runs;
mod ephemeral_credentials;
mod exec_scope;
mod fail_on_skipped;
mod fleet_plans;
mod fleet_safety;
mod foreign_labels;
mod hostile_metadata;
mod inventory_hub;
mod k8s_retry;
mod kubeconfig_oracle;
mod properties;
mod quickstart;
mod rbac;
mod recipes;
mod release_install;
mod replace;
mod secret_reader;
mod selector_oracle;
mod shared_members;
mod sveltos_clusters;
mod swapped_credentials;
mod testenv;
mod timeouts;
mod token_renewal;
mod trust_boundaries;
mod unknown_values;
mod upstream_crds;
mod v1alpha2;
mod write_only;
