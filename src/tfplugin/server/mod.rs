//! The tfplugin6 `Provider` gRPC service: decodes requests with the cached schemas, calls the provider, encodes the
//! answers. Every RPC of protocol 6.11 is answered; features this layer does not offer (functions, list
//! resources, actions, state stores, resource identity, moves, config generation) get an empty response or an error
//! diagnostic, never an `Unimplemented` status or a crash.
//!
//! This file holds the service (the registered types and their cached schemas) and the gRPC glue: each RPC that
//! carries values goes through the one prologue of `rpc.rs` to its body in `provider.rs`, `resource.rs`,
//! `data_source.rs` or `ephemeral.rs`; the RPCs of features not offered are answered here, in one line each.

#[cfg(test)]
mod bytes_tests;
mod data_source;
mod ephemeral;
mod provider;
mod resource;
mod rpc;
#[cfg(test)]
mod tests;

use super::convert;
use super::diag::{Diagnostic, Diagnostics};
use super::pb::tfplugin6 as pb;
use super::pb::tfplugin6::provider_server::Provider as ProviderRpc;
use super::provider::{ClientCapabilities, DataSource, EphemeralResource, Provider, Resource};
use super::schema::{Block, Schema};
use super::value::{Type, Value};
use rpc::{Failure, RpcResult, WithDiagnostics, only, unknown_type, unsupported};
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use tonic::{Request, Response, Status};
use tracing::{debug, warn};

type BoxStream<T> = Pin<Box<dyn futures::Stream<Item = Result<T, Status>> + Send + 'static>>;

/// A schema with its derived value type, computed once.
struct Cached {
    schema: Schema,
    ty: Type,
    /// Whether any attribute is write-only (resources only).
    write_only: bool,
}

impl Cached {
    fn new(schema: Schema) -> Self {
        let ty = schema.value_type();
        let write_only = schema.has_write_only();
        Self {
            schema,
            ty,
            write_only,
        }
    }

    fn block(&self) -> &Block {
        &self.schema.block
    }

    /// The write-only attributes set in `config`, refused (as error diagnostics) when the client cannot handle
    /// write-only attributes.
    fn refuse_write_only(
        &self,
        config: &Value,
        client: ClientCapabilities,
        diags: &mut Diagnostics,
    ) {
        if self.write_only && !client.write_only_attributes_allowed {
            let set = self.schema.block.write_only_set(config);
            convert::write_only_refused(&set, client, diags);
        }
    }

    /// Nulls the write-only attributes of a resource state the provider answers with (`what` names it in the
    /// log): the one place that keeps write-only values out of every state and plan this layer sends. (A state
    /// handed back exactly as the client sent it, `keep_prior_state` / `keep_current_state`, is not decoded
    /// again: it comes from the client's own state, which never holds a write-only value.)
    fn null_write_only(&self, state: &mut Value, what: &str) {
        if !self.write_only {
            return;
        }
        let nulled = self.schema.block.null_write_only(state);
        if !nulled.is_empty() {
            let paths: Vec<String> = nulled.iter().map(ToString::to_string).collect();
            warn!(
                paths = %paths.join(", "),
                "the provider returned write-only values in the {what}; they were set to null"
            );
        }
    }
}

/// The three kinds of types a provider registers, seen the same way: a name and a schema.
trait Registrable {
    fn type_name(&self) -> &'static str;
    fn schema(&self) -> Schema;
}

impl Registrable for dyn Resource {
    fn type_name(&self) -> &'static str {
        Resource::type_name(self)
    }
    fn schema(&self) -> Schema {
        Resource::schema(self)
    }
}

impl Registrable for dyn DataSource {
    fn type_name(&self) -> &'static str {
        DataSource::type_name(self)
    }
    fn schema(&self) -> Schema {
        DataSource::schema(self)
    }
}

impl Registrable for dyn EphemeralResource {
    fn type_name(&self) -> &'static str {
        EphemeralResource::type_name(self)
    }
    fn schema(&self) -> Schema {
        EphemeralResource::schema(self)
    }
}

/// One registered type with its cached schema.
struct Registered<T: ?Sized> {
    handler: Arc<T>,
    schema: Cached,
}

/// The registered types of one kind ("resource", "data source", "ephemeral resource"), by type name.
struct Registry<T: ?Sized> {
    kind: &'static str,
    entries: HashMap<String, Registered<T>>,
}

impl<T: ?Sized + Registrable> Registry<T> {
    fn new(kind: &'static str, handlers: Vec<Arc<T>>) -> Self {
        let entries = handlers
            .into_iter()
            .map(|handler| {
                let schema = Cached::new(handler.schema());
                (
                    handler.type_name().to_owned(),
                    Registered { handler, schema },
                )
            })
            .collect();
        Self { kind, entries }
    }

    /// The type named `name`; an unknown name stops the RPC with the error diagnostic Terraform shows.
    fn get(&self, name: &str) -> Result<&Registered<T>, Failure> {
        self.entries
            .get(name)
            .ok_or_else(|| unknown_type(self.kind, name).into())
    }

    /// The type names, sorted.
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.entries.keys().cloned().collect();
        names.sort();
        names
    }

    /// The protocol schemas, by type name.
    fn schemas(&self) -> HashMap<String, pb::Schema> {
        self.entries
            .iter()
            .map(|(k, e)| (k.clone(), convert::schema(&e.schema.schema)))
            .collect()
    }

    /// Where the schemas declare write-only attributes they may not (`allowed`: whether this kind may at all).
    fn write_only_problems(&self, allowed: bool) -> Vec<String> {
        self.entries
            .iter()
            .flat_map(|(name, e)| {
                e.schema
                    .block()
                    .write_only_problems(allowed, &format!("{} {name}", self.kind))
            })
            .collect()
    }
}

/// The gRPC service wrapping a [`Provider`].
pub(crate) struct ProviderService {
    provider: Arc<dyn Provider>,
    provider_schema: Cached,
    provider_meta: Option<Cached>,
    resources: Registry<dyn Resource>,
    data_sources: Registry<dyn DataSource>,
    ephemeral_resources: Registry<dyn EphemeralResource>,
    schema_response: pb::get_provider_schema::Response,
    metadata_response: pb::get_metadata::Response,
}

impl ProviderService {
    pub(crate) fn new(provider: Arc<dyn Provider>) -> Self {
        let mut service = Self {
            provider_schema: Cached::new(provider.schema()),
            provider_meta: provider.provider_meta_schema().map(Cached::new),
            resources: Registry::new("resource", provider.resources()),
            data_sources: Registry::new("data source", provider.data_sources()),
            ephemeral_resources: Registry::new(
                "ephemeral resource",
                provider.ephemeral_resources(),
            ),
            provider,
            schema_response: Default::default(),
            metadata_response: Default::default(),
        };
        service.schema_response = service.schema_response();
        service.metadata_response = service.metadata_response();
        service
    }
}

/// The reply carrying only the diagnostic `d`.
fn reply<T: WithDiagnostics>(d: Diagnostic) -> RpcResult<T> {
    Ok(Response::new(only(convert::diagnostics(&d.into()))))
}

/// The protocol diagnostics for an unknown type name.
fn no_such(kind: &str, name: &str) -> Vec<pb::Diagnostic> {
    convert::diagnostics(&unknown_type(kind, name).into())
}

/// A stream of exactly one item.
fn once<T: Send + 'static>(item: T) -> RpcResult<BoxStream<T>> {
    Ok(Response::new(Box::pin(futures::stream::iter([Ok(item)]))))
}

#[tonic::async_trait]
impl ProviderRpc for ProviderService {
    async fn get_metadata(
        &self,
        _req: Request<pb::get_metadata::Request>,
    ) -> RpcResult<pb::get_metadata::Response> {
        debug!(tf_rpc = "GetMetadata", "served metadata");
        Ok(Response::new(self.metadata_response.clone()))
    }

    async fn get_provider_schema(
        &self,
        _req: Request<pb::get_provider_schema::Request>,
    ) -> RpcResult<pb::get_provider_schema::Response> {
        debug!(tf_rpc = "GetProviderSchema", "served schema");
        Ok(Response::new(self.schema_response.clone()))
    }

    async fn get_resource_identity_schemas(
        &self,
        _req: Request<pb::get_resource_identity_schemas::Request>,
    ) -> RpcResult<pb::get_resource_identity_schemas::Response> {
        Ok(Response::new(Default::default()))
    }

    async fn validate_provider_config(
        &self,
        req: Request<pb::validate_provider_config::Request>,
    ) -> RpcResult<pb::validate_provider_config::Response> {
        self.rpc(req).await
    }

    async fn validate_resource_config(
        &self,
        req: Request<pb::validate_resource_config::Request>,
    ) -> RpcResult<pb::validate_resource_config::Response> {
        self.rpc(req).await
    }

    async fn validate_data_resource_config(
        &self,
        req: Request<pb::validate_data_resource_config::Request>,
    ) -> RpcResult<pb::validate_data_resource_config::Response> {
        self.rpc(req).await
    }

    async fn upgrade_resource_state(
        &self,
        req: Request<pb::upgrade_resource_state::Request>,
    ) -> RpcResult<pb::upgrade_resource_state::Response> {
        self.rpc(req).await
    }

    async fn upgrade_resource_identity(
        &self,
        _req: Request<pb::upgrade_resource_identity::Request>,
    ) -> RpcResult<pb::upgrade_resource_identity::Response> {
        reply(unsupported("Resource identity"))
    }

    async fn configure_provider(
        &self,
        req: Request<pb::configure_provider::Request>,
    ) -> RpcResult<pb::configure_provider::Response> {
        self.rpc(req).await
    }

    async fn read_resource(
        &self,
        req: Request<pb::read_resource::Request>,
    ) -> RpcResult<pb::read_resource::Response> {
        self.rpc(req).await
    }

    async fn plan_resource_change(
        &self,
        req: Request<pb::plan_resource_change::Request>,
    ) -> RpcResult<pb::plan_resource_change::Response> {
        self.rpc(req).await
    }

    async fn apply_resource_change(
        &self,
        req: Request<pb::apply_resource_change::Request>,
    ) -> RpcResult<pb::apply_resource_change::Response> {
        self.rpc(req).await
    }

    async fn import_resource_state(
        &self,
        req: Request<pb::import_resource_state::Request>,
    ) -> RpcResult<pb::import_resource_state::Response> {
        self.rpc(req).await
    }

    async fn move_resource_state(
        &self,
        _req: Request<pb::move_resource_state::Request>,
    ) -> RpcResult<pb::move_resource_state::Response> {
        reply(unsupported("Moving resource state between resource types"))
    }

    async fn read_data_source(
        &self,
        req: Request<pb::read_data_source::Request>,
    ) -> RpcResult<pb::read_data_source::Response> {
        self.rpc(req).await
    }

    async fn generate_resource_config(
        &self,
        _req: Request<pb::generate_resource_config::Request>,
    ) -> RpcResult<pb::generate_resource_config::Response> {
        reply(unsupported("Generating resource configuration"))
    }

    async fn validate_ephemeral_resource_config(
        &self,
        req: Request<pb::validate_ephemeral_resource_config::Request>,
    ) -> RpcResult<pb::validate_ephemeral_resource_config::Response> {
        self.rpc(req).await
    }

    async fn open_ephemeral_resource(
        &self,
        req: Request<pb::open_ephemeral_resource::Request>,
    ) -> RpcResult<pb::open_ephemeral_resource::Response> {
        self.rpc(req).await
    }

    async fn renew_ephemeral_resource(
        &self,
        req: Request<pb::renew_ephemeral_resource::Request>,
    ) -> RpcResult<pb::renew_ephemeral_resource::Response> {
        self.rpc(req).await
    }

    async fn close_ephemeral_resource(
        &self,
        req: Request<pb::close_ephemeral_resource::Request>,
    ) -> RpcResult<pb::close_ephemeral_resource::Response> {
        self.rpc(req).await
    }

    type ListResourceStream = BoxStream<pb::list_resource::Event>;

    async fn list_resource(
        &self,
        req: Request<pb::list_resource::Request>,
    ) -> RpcResult<Self::ListResourceStream> {
        once(pb::list_resource::Event {
            diagnostic: no_such("list resource", &req.get_ref().type_name),
            ..Default::default()
        })
    }

    async fn validate_list_resource_config(
        &self,
        req: Request<pb::validate_list_resource_config::Request>,
    ) -> RpcResult<pb::validate_list_resource_config::Response> {
        reply(unknown_type("list resource", &req.get_ref().type_name))
    }

    async fn get_functions(
        &self,
        _req: Request<pb::get_functions::Request>,
    ) -> RpcResult<pb::get_functions::Response> {
        Ok(Response::new(Default::default()))
    }

    async fn call_function(
        &self,
        req: Request<pb::call_function::Request>,
    ) -> RpcResult<pb::call_function::Response> {
        let name = &req.get_ref().name;
        Ok(Response::new(pb::call_function::Response {
            result: None,
            error: Some(pb::FunctionError {
                text: format!("This provider has no function named {name:?}."),
                function_argument: None,
            }),
        }))
    }

    async fn validate_action_config(
        &self,
        req: Request<pb::validate_action_config::Request>,
    ) -> RpcResult<pb::validate_action_config::Response> {
        reply(unknown_type("action", &req.get_ref().action_type))
    }

    async fn plan_action(
        &self,
        req: Request<pb::plan_action::Request>,
    ) -> RpcResult<pb::plan_action::Response> {
        reply(unknown_type("action", &req.get_ref().action_type))
    }

    type InvokeActionStream = BoxStream<pb::invoke_action::Event>;

    async fn invoke_action(
        &self,
        req: Request<pb::invoke_action::Request>,
    ) -> RpcResult<Self::InvokeActionStream> {
        once(pb::invoke_action::Event {
            r#type: Some(pb::invoke_action::event::Type::Completed(
                pb::invoke_action::event::Completed {
                    diagnostics: no_such("action", &req.get_ref().action_type),
                },
            )),
        })
    }

    async fn validate_state_store_config(
        &self,
        req: Request<pb::validate_state_store_config::Request>,
    ) -> RpcResult<pb::validate_state_store_config::Response> {
        reply(unknown_type("state store", &req.get_ref().type_name))
    }

    async fn configure_state_store(
        &self,
        req: Request<pb::configure_state_store::Request>,
    ) -> RpcResult<pb::configure_state_store::Response> {
        reply(unknown_type("state store", &req.get_ref().type_name))
    }

    type ReadStateBytesStream = BoxStream<pb::read_state_bytes::ResponseChunk>;

    async fn read_state_bytes(
        &self,
        req: Request<pb::read_state_bytes::Request>,
    ) -> RpcResult<Self::ReadStateBytesStream> {
        once(pb::read_state_bytes::ResponseChunk {
            diagnostics: no_such("state store", &req.get_ref().type_name),
            ..Default::default()
        })
    }

    async fn write_state_bytes(
        &self,
        _req: Request<tonic::Streaming<pb::write_state_bytes::RequestChunk>>,
    ) -> RpcResult<pb::write_state_bytes::Response> {
        reply(unsupported("State storage"))
    }

    async fn lock_state(
        &self,
        req: Request<pb::lock_state::Request>,
    ) -> RpcResult<pb::lock_state::Response> {
        reply(unknown_type("state store", &req.get_ref().type_name))
    }

    async fn unlock_state(
        &self,
        req: Request<pb::unlock_state::Request>,
    ) -> RpcResult<pb::unlock_state::Response> {
        reply(unknown_type("state store", &req.get_ref().type_name))
    }

    async fn get_states(
        &self,
        req: Request<pb::get_states::Request>,
    ) -> RpcResult<pb::get_states::Response> {
        reply(unknown_type("state store", &req.get_ref().type_name))
    }

    async fn delete_state(
        &self,
        req: Request<pb::delete_state::Request>,
    ) -> RpcResult<pb::delete_state::Response> {
        reply(unknown_type("state store", &req.get_ref().type_name))
    }

    async fn stop_provider(
        &self,
        _req: Request<pb::stop_provider::Request>,
    ) -> RpcResult<pb::stop_provider::Response> {
        debug!(tf_rpc = "StopProvider", "stop requested");
        let error = self.provider.stop().await.unwrap_or_default();
        Ok(Response::new(pb::stop_provider::Response { error }))
    }
}
