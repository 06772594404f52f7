//! `bench-floor`: the benchmark's floor for a plan (scripts/bench, docs/benchmarks.md).
//!
//! It is terraform-provider-sveltos with every Kubernetes call taken out: the same provider address, the same
//! schemas (taken from the provider itself, so they cannot drift), the same plugin layer (handshake, AutoMTLS,
//! gRPC services, the msgpack / JSON codecs of every state, plan and config value), the same runtime and allocator
//! settings; but `ConfigureProvider` and validation do nothing, and `ReadResource` / `PlanResourceChange` of
//! every resource answer with the prior state unchanged. A plan of the bridge's real state through it therefore
//! costs what OpenTofu and the plugin protocol cost for that state shape, and nothing of the bridge's own work:
//! no provider can plan that state for less on this plugin layer.
//!
//! Usage: started by terraform / tofu through a `dev_overrides` entry, like the provider (`--debug` works too).

use std::process::ExitCode;
use std::sync::Arc;

use tfsveltos::tfplugin::{
    self, ApplyRequest, ApplyResponse, ConfigureRequest, DataSource, Diagnostics,
    EphemeralResource, PlanRequest, PlanResponse, Provider, ReadRequest, ReadResponse, Resource,
    Schema, ServeOptions, Value,
};

/// The provider's source address, as the provider's own binary serves it.
const PROVIDER_ADDRESS: &str = "clusterinventory/sveltos";

/// The provider with its resources replaced by [`Echo`]s: schemas, data sources and ephemeral resources are the
/// real provider's (never configured, so a data source or ephemeral resource answers "not configured" instead of
/// calling Kubernetes; the benchmark's configuration uses neither).
struct Floor {
    real: Arc<dyn Provider>,
}

#[async_trait::async_trait]
impl Provider for Floor {
    fn schema(&self) -> Schema {
        self.real.schema()
    }

    fn resources(&self) -> Vec<Arc<dyn Resource>> {
        self.real
            .resources()
            .into_iter()
            .map(|real| Arc::new(Echo { real }) as Arc<dyn Resource>)
            .collect()
    }

    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        self.real.data_sources()
    }

    fn ephemeral_resources(&self) -> Vec<Arc<dyn EphemeralResource>> {
        self.real.ephemeral_resources()
    }

    fn provider_meta_schema(&self) -> Option<Schema> {
        self.real.provider_meta_schema()
    }

    async fn configure(&self, _req: ConfigureRequest) -> Diagnostics {
        Diagnostics::new()
    }
}

/// A resource of the real provider (its type name and schema) whose refresh and plan echo the prior state.
struct Echo {
    real: Arc<dyn Resource>,
}

#[async_trait::async_trait]
impl Resource for Echo {
    fn type_name(&self) -> &'static str {
        self.real.type_name()
    }

    fn schema(&self) -> Schema {
        self.real.schema()
    }

    // `validate`: the trait's default, no diagnostics. `upgrade_state`: the trait's default, decoding the stored
    // JSON against the schema, the least any provider does (the real resource does the same).

    async fn plan(&self, req: PlanRequest) -> PlanResponse {
        let planned = echo(&req.prior_state, &req.proposed_new_state);
        PlanResponse::planned(&req, planned)
    }

    async fn apply(&self, req: ApplyRequest) -> ApplyResponse {
        ApplyResponse {
            new_state: req.planned_state,
            private: req.planned_private,
            diagnostics: Diagnostics::new(),
            ..ApplyResponse::default()
        }
    }

    async fn read(&self, req: ReadRequest) -> ReadResponse {
        ReadResponse {
            new_state: req.current_state,
            private: req.private,
            ..ReadResponse::default()
        }
    }
}

/// The planned state of an echo: the prior state; for a create (no prior state) or a destroy (no proposed state),
/// what Terraform proposed.
fn echo(prior: &Value, proposed: &Value) -> Value {
    if prior.is_null() || proposed.is_null() {
        proposed.clone()
    } else {
        prior.clone()
    }
}

fn main() -> ExitCode {
    let debug = std::env::args()
        .skip(1)
        .any(|a| a == "--debug" || a == "-debug");
    let opts = ServeOptions::new(PROVIDER_ADDRESS).debug(debug);
    // The provider binary's runtime and allocator settings (one malloc arena), so that peak RSS figures compare
    // like with like.
    tfplugin::binary::run(
        "bench-floor",
        opts,
        || tfplugin::logging::init("sveltos-floor"),
        || {
            Arc::new(Floor {
                real: tfsveltos::provider::registry::new(),
            })
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(id: &str) -> Value {
        Value::object([("id", Value::string(id))])
    }

    #[test]
    fn plan_echoes_the_prior_state_even_when_terraform_proposes_otherwise() {
        assert_eq!(echo(&state("prior"), &state("proposed")), state("prior"));
    }

    #[test]
    fn create_and_destroy_plan_what_terraform_proposes() {
        assert_eq!(echo(&Value::Null, &state("new")), state("new"));
        assert_eq!(echo(&state("old"), &Value::Null), Value::Null);
    }

    #[test]
    fn floor_serves_the_provider_schemas() {
        let real = tfsveltos::provider::registry::new();
        let floor = Floor {
            real: tfsveltos::provider::registry::new(),
        };
        let resources = |p: &dyn Provider| {
            p.resources()
                .iter()
                .map(|r| (r.type_name(), r.schema()))
                .collect::<Vec<_>>()
        };
        assert_eq!(resources(&floor), resources(real.as_ref()));
        assert!(
            resources(&floor)
                .iter()
                .any(|(name, _)| *name == "sveltos_cluster_inventory_bridge")
        );
        assert_eq!(floor.schema(), real.schema());
        let data_sources = |p: &dyn Provider| {
            p.data_sources()
                .iter()
                .map(|d| (d.type_name(), d.schema()))
                .collect::<Vec<_>>()
        };
        assert_eq!(data_sources(&floor), data_sources(real.as_ref()));
    }
}
