//! The tfplugin6 `Provider` gRPC service: decodes requests with the cached schemas, calls the provider, encodes the
//! answers. Every RPC of protocol 6.11 is answered; features this layer does not offer (functions, list
//! resources, actions, state stores, resource identity, moves, config generation) get an empty response or an error
//! diagnostic, never an `Unimplemented` status or a crash.

use super::convert;
use super::diag::{Diagnostic, Diagnostics};
use super::pb::tfplugin6 as pb;
use super::pb::tfplugin6::provider_server::Provider as ProviderRpc;
use super::provider::{
    ApplyRequest, ClientCapabilities, CloseEphemeralRequest, ConfigureRequest, DataReadRequest,
    DataSource, EphemeralResource, ImportRequest, OpenEphemeralRequest, PlanRequest, Provider,
    ReadRequest, RenewEphemeralRequest, Resource, UpgradeRequest,
};
use super::schema::{Block, Schema};
use super::value::{Type, Value, ValueError};
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use tonic::{Request, Response, Status};
use tracing::{Instrument, debug, info_span, warn};

type RpcResult<T> = Result<Response<T>, Status>;
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

struct ResourceEntry {
    resource: Arc<dyn Resource>,
    schema: Cached,
}

struct DataSourceEntry {
    data_source: Arc<dyn DataSource>,
    schema: Cached,
}

struct EphemeralEntry {
    resource: Arc<dyn EphemeralResource>,
    schema: Cached,
}

/// Looks `name` up among the registered types of one `kind` ("resource", "data source", ...); an unknown name
/// becomes the error diagnostic Terraform shows.
fn lookup<'a, E>(
    entries: &'a HashMap<String, E>,
    kind: &str,
    name: &str,
) -> Result<&'a E, Vec<pb::Diagnostic>> {
    entries.get(name).ok_or_else(|| no_such(kind, name))
}

/// The entry for `$name` in `$map`, or an early return of `$resp(diagnostics)` naming the unknown type.
macro_rules! entry_or_return {
    ($map:expr, $kind:literal, $name:expr, $resp:expr) => {
        match lookup(&$map, $kind, $name) {
            Ok(entry) => entry,
            Err(diagnostics) => return Ok(Response::new($resp(diagnostics))),
        }
    };
}

/// The gRPC service wrapping a [`Provider`].
pub(crate) struct ProviderService {
    provider: Arc<dyn Provider>,
    provider_schema: Cached,
    provider_meta: Option<Cached>,
    resources: HashMap<String, ResourceEntry>,
    data_sources: HashMap<String, DataSourceEntry>,
    ephemeral_resources: HashMap<String, EphemeralEntry>,
    schema_response: pb::get_provider_schema::Response,
    metadata_response: pb::get_metadata::Response,
}

fn server_capabilities() -> pb::ServerCapabilities {
    pb::ServerCapabilities {
        plan_destroy: true,
        get_provider_schema_optional: true,
        move_resource_state: false,
        generate_resource_config: false,
    }
}

/// Turns a codec error on a request into an error diagnostic.
fn decode_diag(what: &str, e: &ValueError) -> Diagnostic {
    e.to_diagnostic(&format!("Invalid {what} received from Terraform"))
}

/// Turns a codec error on a provider result into an error diagnostic.
fn encode_diag(what: &str, e: &ValueError) -> Diagnostic {
    e.to_diagnostic(&format!("Provider produced an invalid {what}"))
}

fn unknown_type(kind: &str, name: &str) -> Diagnostics {
    Diagnostic::error(
        format!("Unknown {kind} type"),
        format!("This provider has no {kind} type named {name:?}."),
    )
    .into()
}

fn unsupported(feature: &str) -> Vec<pb::Diagnostic> {
    convert::diagnostics(
        &Diagnostic::error(
            format!("{feature} not supported"),
            format!("This provider does not implement {feature}."),
        )
        .into(),
    )
}

/// The protocol diagnostics for an unknown type name.
fn no_such(kind: &str, name: &str) -> Vec<pb::Diagnostic> {
    convert::diagnostics(&unknown_type(kind, name))
}

/// Responses that can carry only diagnostics (everything else left empty): the answer of every RPC for a feature
/// this layer does not offer, and of the others when they fail before they have anything else to say.
trait DiagnosticsOnly: Default {
    fn set_diagnostics(&mut self, diagnostics: Vec<pb::Diagnostic>);
}

macro_rules! diagnostics_only {
    ($($ty:ty),* $(,)?) => {
        $(impl DiagnosticsOnly for $ty {
            fn set_diagnostics(&mut self, diagnostics: Vec<pb::Diagnostic>) {
                self.diagnostics = diagnostics;
            }
        })*
    };
}

diagnostics_only!(
    pb::validate_provider_config::Response,
    pb::validate_resource_config::Response,
    pb::validate_data_resource_config::Response,
    pb::upgrade_resource_state::Response,
    pb::configure_provider::Response,
    pb::plan_resource_change::Response,
    pb::import_resource_state::Response,
    pb::read_data_source::Response,
    pb::validate_ephemeral_resource_config::Response,
    pb::open_ephemeral_resource::Response,
    pb::renew_ephemeral_resource::Response,
    pb::close_ephemeral_resource::Response,
    pb::upgrade_resource_identity::Response,
    pb::move_resource_state::Response,
    pb::generate_resource_config::Response,
    pb::validate_list_resource_config::Response,
    pb::validate_action_config::Response,
    pb::plan_action::Response,
    pb::validate_state_store_config::Response,
    pb::configure_state_store::Response,
    pb::write_state_bytes::Response,
    pb::lock_state::Response,
    pb::unlock_state::Response,
    pb::get_states::Response,
    pb::delete_state::Response,
);

/// A response carrying only `diagnostics` (everything else empty).
fn only<T: DiagnosticsOnly>(diagnostics: Vec<pb::Diagnostic>) -> T {
    let mut resp = T::default();
    resp.set_diagnostics(diagnostics);
    resp
}

/// The reply carrying only `diagnostics`.
fn reply<T: DiagnosticsOnly>(diagnostics: Vec<pb::Diagnostic>) -> RpcResult<T> {
    Ok(Response::new(only(diagnostics)))
}

/// A stream of exactly one item.
fn once<T: Send + 'static>(item: T) -> RpcResult<BoxStream<T>> {
    Ok(Response::new(Box::pin(futures::stream::iter([Ok(item)]))))
}

/// [`encode_opt`] for a resource state: its write-only attributes are set to null first (see
/// [`Cached::null_write_only`]). Every state of a managed resource this layer answers with goes through here.
fn encode_state(
    mut v: Value,
    cached: &Cached,
    what: &str,
    diags: &mut Diagnostics,
) -> Option<pb::DynamicValue> {
    cached.null_write_only(&mut v, what);
    encode_opt(&v, cached, what, diags)
}

/// Problems with where schemas declare write-only attributes (only managed resources may, and never computed
/// ones), as error diagnostics of `GetProviderSchema`: the CLI then stops before anything runs.
fn schema_problems(
    provider: &Cached,
    provider_meta: Option<&Cached>,
    resources: &HashMap<String, ResourceEntry>,
    data_sources: &HashMap<String, DataSourceEntry>,
    ephemeral: &HashMap<String, EphemeralEntry>,
) -> Vec<pb::Diagnostic> {
    let mut problems = provider.block().write_only_problems(false, "provider");
    if let Some(meta) = provider_meta {
        problems.extend(meta.block().write_only_problems(false, "provider_meta"));
    }
    for (name, e) in resources {
        problems.extend(
            e.schema
                .block()
                .write_only_problems(true, &format!("resource {name}")),
        );
    }
    for (name, e) in data_sources {
        problems.extend(
            e.schema
                .block()
                .write_only_problems(false, &format!("data source {name}")),
        );
    }
    for (name, e) in ephemeral {
        problems.extend(
            e.schema
                .block()
                .write_only_problems(false, &format!("ephemeral resource {name}")),
        );
    }
    problems.sort();
    let mut diags = Diagnostics::new();
    for p in problems {
        diags.error("Invalid provider schema", p);
    }
    convert::diagnostics(&diags)
}

fn encode_opt(
    v: &Value,
    cached: &Cached,
    what: &str,
    diags: &mut Diagnostics,
) -> Option<pb::DynamicValue> {
    match convert::encode(v, cached.block(), &cached.ty) {
        Ok(dv) => Some(dv),
        Err(e) => {
            diags.push(encode_diag(what, &e));
            None
        }
    }
}

impl ProviderService {
    pub(crate) fn new(provider: Arc<dyn Provider>) -> Self {
        let provider_schema = Cached::new(provider.schema());
        let provider_meta = provider.provider_meta_schema().map(Cached::new);
        let mut resources = HashMap::new();
        for r in provider.resources() {
            let schema = Cached::new(r.schema());
            resources.insert(
                r.type_name().to_owned(),
                ResourceEntry {
                    resource: r,
                    schema,
                },
            );
        }
        let mut data_sources = HashMap::new();
        for d in provider.data_sources() {
            let schema = Cached::new(d.schema());
            data_sources.insert(
                d.type_name().to_owned(),
                DataSourceEntry {
                    data_source: d,
                    schema,
                },
            );
        }
        let mut ephemeral_resources = HashMap::new();
        for e in provider.ephemeral_resources() {
            let schema = Cached::new(e.schema());
            ephemeral_resources.insert(
                e.type_name().to_owned(),
                EphemeralEntry {
                    resource: e,
                    schema,
                },
            );
        }
        let schema_response = pb::get_provider_schema::Response {
            provider: Some(convert::schema(&provider_schema.schema)),
            resource_schemas: resources
                .iter()
                .map(|(k, e)| (k.clone(), convert::schema(&e.schema.schema)))
                .collect(),
            data_source_schemas: data_sources
                .iter()
                .map(|(k, e)| (k.clone(), convert::schema(&e.schema.schema)))
                .collect(),
            ephemeral_resource_schemas: ephemeral_resources
                .iter()
                .map(|(k, e)| (k.clone(), convert::schema(&e.schema.schema)))
                .collect(),
            provider_meta: provider_meta.as_ref().map(|m| convert::schema(&m.schema)),
            server_capabilities: Some(server_capabilities()),
            diagnostics: schema_problems(
                &provider_schema,
                provider_meta.as_ref(),
                &resources,
                &data_sources,
                &ephemeral_resources,
            ),
            ..Default::default()
        };
        fn sorted<E>(m: &HashMap<String, E>) -> Vec<String> {
            let mut names: Vec<String> = m.keys().cloned().collect();
            names.sort();
            names
        }
        let metadata_response = pb::get_metadata::Response {
            server_capabilities: Some(server_capabilities()),
            resources: sorted(&resources)
                .into_iter()
                .map(|type_name| pb::get_metadata::ResourceMetadata { type_name })
                .collect(),
            data_sources: sorted(&data_sources)
                .into_iter()
                .map(|type_name| pb::get_metadata::DataSourceMetadata { type_name })
                .collect(),
            ephemeral_resources: sorted(&ephemeral_resources)
                .into_iter()
                .map(|type_name| pb::get_metadata::EphemeralResourceMetadata { type_name })
                .collect(),
            ..Default::default()
        };
        Self {
            provider,
            provider_schema,
            provider_meta,
            resources,
            data_sources,
            ephemeral_resources,
            schema_response,
            metadata_response,
        }
    }

    fn provider_meta(&self, dv: Option<&pb::DynamicValue>, diags: &mut Diagnostics) -> Value {
        let Some(meta) = &self.provider_meta else {
            return Value::Null;
        };
        match convert::decode(dv, &meta.ty) {
            Ok(v) => v,
            Err(e) => {
                diags.push(decode_diag("provider_meta", &e));
                Value::Null
            }
        }
    }
}

/// Decodes `$dv` with `$cached`, or returns early with a response carrying the diagnostic.
macro_rules! decode_or_return {
    ($dv:expr, $cached:expr, $what:literal, $diags:ident, $resp:expr) => {
        decode_or_return!($dv, $cached, $what, $diags, $resp, &[])
    };
    ($dv:expr, $cached:expr, $what:literal, $diags:ident, $resp:expr, $unread:expr) => {
        match convert::decode_skipping($dv, &$cached.ty, $unread) {
            Ok(v) => v,
            Err(e) => {
                $diags.push(decode_diag($what, &e));
                let diagnostics = convert::diagnostics(&$diags);
                return Ok(Response::new($resp(diagnostics)));
            }
        }
    };
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
        let req = req.into_inner();
        let span = info_span!("rpc", tf_rpc = "ValidateProviderConfig");
        async {
            let mut diags = Diagnostics::new();
            let config = decode_or_return!(
                req.config.as_ref(),
                self.provider_schema,
                "provider configuration",
                diags,
                only::<pb::validate_provider_config::Response>
            );
            diags.extend(self.provider.validate_config(&config).await);
            Ok(Response::new(pb::validate_provider_config::Response {
                diagnostics: convert::diagnostics(&diags),
            }))
        }
        .instrument(span)
        .await
    }

    async fn validate_resource_config(
        &self,
        req: Request<pb::validate_resource_config::Request>,
    ) -> RpcResult<pb::validate_resource_config::Response> {
        let req = req.into_inner();
        let span =
            info_span!("rpc", tf_rpc = "ValidateResourceConfig", tf_resource_type = %req.type_name);
        async {
            let mut diags = Diagnostics::new();
            let resp = only::<pb::validate_resource_config::Response>;
            let entry = entry_or_return!(self.resources, "resource", &req.type_name, resp);
            let config = decode_or_return!(
                req.config.as_ref(),
                entry.schema,
                "resource configuration",
                diags,
                resp
            );
            let client = convert::client_capabilities(req.client_capabilities.as_ref());
            entry.schema.refuse_write_only(&config, client, &mut diags);
            diags.extend(entry.resource.validate(&config).await);
            Ok(Response::new(resp(convert::diagnostics(&diags))))
        }
        .instrument(span)
        .await
    }

    async fn validate_data_resource_config(
        &self,
        req: Request<pb::validate_data_resource_config::Request>,
    ) -> RpcResult<pb::validate_data_resource_config::Response> {
        let req = req.into_inner();
        let span = info_span!("rpc", tf_rpc = "ValidateDataResourceConfig", tf_data_source_type = %req.type_name);
        async {
            let mut diags = Diagnostics::new();
            let resp = only::<pb::validate_data_resource_config::Response>;
            let entry = entry_or_return!(self.data_sources, "data source", &req.type_name, resp);
            let config = decode_or_return!(
                req.config.as_ref(),
                entry.schema,
                "data source configuration",
                diags,
                resp
            );
            diags.extend(entry.data_source.validate(&config).await);
            Ok(Response::new(resp(convert::diagnostics(&diags))))
        }
        .instrument(span)
        .await
    }

    async fn upgrade_resource_state(
        &self,
        req: Request<pb::upgrade_resource_state::Request>,
    ) -> RpcResult<pb::upgrade_resource_state::Response> {
        let req = req.into_inner();
        let span =
            info_span!("rpc", tf_rpc = "UpgradeResourceState", tf_resource_type = %req.type_name);
        async {
            let fail = only::<pb::upgrade_resource_state::Response>;
            let entry = entry_or_return!(self.resources, "resource", &req.type_name, fail);
            let raw = req.raw_state.unwrap_or_default();
            if raw.json.is_empty() && !raw.flatmap.is_empty() {
                return Ok(Response::new(pb::upgrade_resource_state::Response {
                    upgraded_state: None,
                    diagnostics: unsupported("Upgrading legacy flatmap state"),
                }));
            }
            let mut diags = Diagnostics::new();
            let upgraded = if raw.json.is_empty() {
                Value::Null
            } else {
                let resp = entry
                    .resource
                    .upgrade_state(UpgradeRequest {
                        type_name: req.type_name.clone(),
                        version: req.version,
                        raw_state_json: raw.json,
                    })
                    .await;
                diags.extend(resp.diagnostics);
                resp.upgraded_state
            };
            let upgraded_state = if diags.has_errors() {
                None
            } else {
                encode_state(upgraded, &entry.schema, "upgraded state", &mut diags)
            };
            debug!(from_version = req.version, "upgraded state");
            Ok(Response::new(pb::upgrade_resource_state::Response {
                upgraded_state,
                diagnostics: convert::diagnostics(&diags),
            }))
        }
        .instrument(span)
        .await
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
        let req = req.into_inner();
        let span = info_span!("rpc", tf_rpc = "ConfigureProvider");
        async {
            let mut diags = Diagnostics::new();
            let resp = only::<pb::configure_provider::Response>;
            let config =
                decode_or_return!(req.config.as_ref(), self.provider_schema, "provider configuration", diags, resp);
            let client = convert::client_capabilities(req.client_capabilities.as_ref());
            debug!(terraform_version = %req.terraform_version, deferral_allowed = client.deferral_allowed, "configuring");
            diags.extend(
                self.provider
                    .configure(ConfigureRequest { config, terraform_version: req.terraform_version, client })
                    .await,
            );
            Ok(Response::new(resp(convert::diagnostics(&diags))))
        }
        .instrument(span)
        .await
    }

    async fn read_resource(
        &self,
        req: Request<pb::read_resource::Request>,
    ) -> RpcResult<pb::read_resource::Response> {
        let req = req.into_inner();
        let span = info_span!("rpc", tf_rpc = "ReadResource", tf_resource_type = %req.type_name);
        async {
            let mut diags = Diagnostics::new();
            let fail = |diagnostics| pb::read_resource::Response {
                new_state: req.current_state.clone(),
                diagnostics,
                private: req.private.clone(),
                deferred: None,
                new_identity: None,
            };
            let entry = entry_or_return!(self.resources, "resource", &req.type_name, fail);
            let unread = entry.resource.read_unread_attributes(&req.private);
            let current_state = decode_or_return!(
                req.current_state.as_ref(),
                entry.schema,
                "state",
                diags,
                fail,
                unread
            );
            let provider_meta = self.provider_meta(req.provider_meta.as_ref(), &mut diags);
            let client = convert::client_capabilities(req.client_capabilities.as_ref());
            let resp = entry
                .resource
                .read(ReadRequest {
                    type_name: req.type_name.clone(),
                    current_state,
                    private: req.private.clone(),
                    provider_meta,
                    client,
                })
                .await;
            diags.extend(resp.diagnostics);
            let deferred = convert::deferred(resp.deferred, client, &mut diags);
            let new_state = if resp.keep_current_state {
                req.current_state.clone()
            } else {
                encode_state(resp.new_state, &entry.schema, "state", &mut diags)
            };
            Ok(Response::new(pb::read_resource::Response {
                new_state,
                diagnostics: convert::diagnostics(&diags),
                private: resp.private,
                deferred,
                new_identity: None,
            }))
        }
        .instrument(span)
        .await
    }

    async fn plan_resource_change(
        &self,
        req: Request<pb::plan_resource_change::Request>,
    ) -> RpcResult<pb::plan_resource_change::Response> {
        let req = req.into_inner();
        let span =
            info_span!("rpc", tf_rpc = "PlanResourceChange", tf_resource_type = %req.type_name);
        async {
            let mut diags = Diagnostics::new();
            let fail = only::<pb::plan_resource_change::Response>;
            let entry = entry_or_return!(self.resources, "resource", &req.type_name, fail);
            let unread = entry.resource.plan_unread_attributes(&req.prior_private);
            let prior_state = decode_or_return!(
                req.prior_state.as_ref(),
                entry.schema,
                "prior state",
                diags,
                fail,
                unread
            );
            let proposed_new_state = decode_or_return!(
                req.proposed_new_state.as_ref(),
                entry.schema,
                "proposed new state",
                diags,
                fail,
                unread
            );
            let config = decode_or_return!(
                req.config.as_ref(),
                entry.schema,
                "configuration",
                diags,
                fail
            );
            let provider_meta = self.provider_meta(req.provider_meta.as_ref(), &mut diags);
            let client = convert::client_capabilities(req.client_capabilities.as_ref());
            // Validation refused them already; a client that plans without validating is refused here.
            entry.schema.refuse_write_only(&config, client, &mut diags);
            if diags.has_errors() {
                return Ok(Response::new(fail(convert::diagnostics(&diags))));
            }
            let destroy = proposed_new_state.is_null();
            let resp = entry
                .resource
                .plan(PlanRequest {
                    type_name: req.type_name.clone(),
                    prior_state,
                    proposed_new_state,
                    config,
                    prior_private: req.prior_private,
                    provider_meta,
                    client,
                })
                .await;
            diags.extend(resp.diagnostics);
            let mut planned = resp.planned_state;
            if destroy && !planned.is_null() {
                warn!("provider planned a non-null state for a destroy; planning null");
                planned = Value::Null;
            }
            let deferred = convert::deferred(resp.deferred, client, &mut diags);
            let planned_state = encode_state(planned, &entry.schema, "planned state", &mut diags);
            debug!(
                destroy,
                requires_replace = resp.requires_replace.len(),
                "planned"
            );
            Ok(Response::new(pb::plan_resource_change::Response {
                planned_state,
                requires_replace: resp
                    .requires_replace
                    .iter()
                    .map(convert::attribute_path)
                    .collect(),
                planned_private: resp.planned_private,
                diagnostics: convert::diagnostics(&diags),
                legacy_type_system: false,
                deferred,
                planned_identity: None,
            }))
        }
        .instrument(span)
        .await
    }

    async fn apply_resource_change(
        &self,
        req: Request<pb::apply_resource_change::Request>,
    ) -> RpcResult<pb::apply_resource_change::Response> {
        let req = req.into_inner();
        let span =
            info_span!("rpc", tf_rpc = "ApplyResourceChange", tf_resource_type = %req.type_name);
        async {
            let mut diags = Diagnostics::new();
            let fail = |diagnostics| pb::apply_resource_change::Response {
                new_state: req.prior_state.clone(),
                diagnostics,
                ..Default::default()
            };
            let entry = entry_or_return!(self.resources, "resource", &req.type_name, fail);
            let unread = entry.resource.apply_unread_attributes(&req.planned_private);
            let prior_state = decode_or_return!(
                req.prior_state.as_ref(),
                entry.schema,
                "prior state",
                diags,
                fail,
                unread
            );
            let planned_state = decode_or_return!(
                req.planned_state.as_ref(),
                entry.schema,
                "planned state",
                diags,
                fail
            );
            let config = decode_or_return!(
                req.config.as_ref(),
                entry.schema,
                "configuration",
                diags,
                fail
            );
            let provider_meta = self.provider_meta(req.provider_meta.as_ref(), &mut diags);
            let resp = entry
                .resource
                .apply(ApplyRequest {
                    type_name: req.type_name.clone(),
                    prior_state,
                    planned_state,
                    config,
                    planned_private: req.planned_private.clone(),
                    provider_meta,
                })
                .await;
            diags.extend(resp.diagnostics);
            let new_state = if resp.keep_prior_state {
                req.prior_state.clone()
            } else {
                encode_state(resp.new_state, &entry.schema, "new state", &mut diags)
            };
            debug!(
                errors = diags.has_errors(),
                kept_prior = resp.keep_prior_state,
                "applied"
            );
            Ok(Response::new(pb::apply_resource_change::Response {
                new_state,
                private: resp.private,
                diagnostics: convert::diagnostics(&diags),
                legacy_type_system: false,
                new_identity: None,
            }))
        }
        .instrument(span)
        .await
    }

    async fn import_resource_state(
        &self,
        req: Request<pb::import_resource_state::Request>,
    ) -> RpcResult<pb::import_resource_state::Response> {
        let req = req.into_inner();
        let span =
            info_span!("rpc", tf_rpc = "ImportResourceState", tf_resource_type = %req.type_name);
        async {
            let fail = only::<pb::import_resource_state::Response>;
            let entry = entry_or_return!(self.resources, "resource", &req.type_name, fail);
            if req.id.is_empty() && req.identity.is_some() {
                return Ok(Response::new(fail(unsupported(
                    "Import by resource identity",
                ))));
            }
            let client = convert::client_capabilities(req.client_capabilities.as_ref());
            let resp = entry
                .resource
                .import(ImportRequest {
                    type_name: req.type_name.clone(),
                    id: req.id,
                    client,
                })
                .await;
            let mut diags = resp.diagnostics;
            let deferred = convert::deferred(resp.deferred, client, &mut diags);
            let mut imported_resources = Vec::new();
            for imported in resp.imported {
                let type_name = if imported.type_name.is_empty() {
                    req.type_name.clone()
                } else {
                    imported.type_name
                };
                let Ok(target) = lookup(&self.resources, "resource", &type_name) else {
                    diags.extend(unknown_type("resource", &type_name));
                    continue;
                };
                let state =
                    encode_state(imported.state, &target.schema, "imported state", &mut diags);
                imported_resources.push(pb::import_resource_state::ImportedResource {
                    type_name,
                    state,
                    private: imported.private,
                    identity: None,
                });
            }
            Ok(Response::new(pb::import_resource_state::Response {
                imported_resources,
                diagnostics: convert::diagnostics(&diags),
                deferred,
            }))
        }
        .instrument(span)
        .await
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
        let req = req.into_inner();
        let span =
            info_span!("rpc", tf_rpc = "ReadDataSource", tf_data_source_type = %req.type_name);
        async {
            let mut diags = Diagnostics::new();
            let fail = only::<pb::read_data_source::Response>;
            let entry = entry_or_return!(self.data_sources, "data source", &req.type_name, fail);
            let config = decode_or_return!(
                req.config.as_ref(),
                entry.schema,
                "configuration",
                diags,
                fail
            );
            let provider_meta = self.provider_meta(req.provider_meta.as_ref(), &mut diags);
            let client = convert::client_capabilities(req.client_capabilities.as_ref());
            let resp = entry
                .data_source
                .read(DataReadRequest {
                    type_name: req.type_name.clone(),
                    config,
                    provider_meta,
                    client,
                })
                .await;
            diags.extend(resp.diagnostics);
            let deferred = convert::deferred(resp.deferred, client, &mut diags);
            let state = if deferred.is_some() || !resp.state.is_null() || !diags.has_errors() {
                encode_opt(&resp.state, &entry.schema, "data source state", &mut diags)
            } else {
                None
            };
            Ok(Response::new(pb::read_data_source::Response {
                state,
                diagnostics: convert::diagnostics(&diags),
                deferred,
            }))
        }
        .instrument(span)
        .await
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
        let req = req.into_inner();
        let span = info_span!("rpc", tf_rpc = "ValidateEphemeralResourceConfig", tf_ephemeral_resource_type = %req.type_name);
        async {
            let mut diags = Diagnostics::new();
            let resp = only::<pb::validate_ephemeral_resource_config::Response>;
            let entry = entry_or_return!(
                self.ephemeral_resources,
                "ephemeral resource",
                &req.type_name,
                resp
            );
            let config = decode_or_return!(
                req.config.as_ref(),
                entry.schema,
                "ephemeral resource configuration",
                diags,
                resp
            );
            diags.extend(entry.resource.validate(&config).await);
            Ok(Response::new(resp(convert::diagnostics(&diags))))
        }
        .instrument(span)
        .await
    }

    async fn open_ephemeral_resource(
        &self,
        req: Request<pb::open_ephemeral_resource::Request>,
    ) -> RpcResult<pb::open_ephemeral_resource::Response> {
        let req = req.into_inner();
        let span = info_span!("rpc", tf_rpc = "OpenEphemeralResource", tf_ephemeral_resource_type = %req.type_name);
        async {
            let mut diags = Diagnostics::new();
            let fail = only::<pb::open_ephemeral_resource::Response>;
            let entry = entry_or_return!(
                self.ephemeral_resources,
                "ephemeral resource",
                &req.type_name,
                fail
            );
            let config = decode_or_return!(
                req.config.as_ref(),
                entry.schema,
                "configuration",
                diags,
                fail
            );
            let client = convert::client_capabilities(req.client_capabilities.as_ref());
            let resp = entry
                .resource
                .open(OpenEphemeralRequest {
                    type_name: req.type_name.clone(),
                    config,
                    client,
                })
                .await;
            diags.extend(resp.diagnostics);
            let deferred = convert::deferred(resp.deferred, client, &mut diags);
            let result = if deferred.is_some() || !resp.result.is_null() || !diags.has_errors() {
                encode_opt(
                    &resp.result,
                    &entry.schema,
                    "ephemeral resource result",
                    &mut diags,
                )
            } else {
                None
            };
            debug!(
                errors = diags.has_errors(),
                renew = resp.renew_at.is_some(),
                "opened"
            );
            Ok(Response::new(pb::open_ephemeral_resource::Response {
                diagnostics: convert::diagnostics(&diags),
                renew_at: resp.renew_at.map(prost_types::Timestamp::from),
                result,
                private: (!resp.private.is_empty()).then_some(resp.private),
                deferred,
            }))
        }
        .instrument(span)
        .await
    }

    async fn renew_ephemeral_resource(
        &self,
        req: Request<pb::renew_ephemeral_resource::Request>,
    ) -> RpcResult<pb::renew_ephemeral_resource::Response> {
        let req = req.into_inner();
        let span = info_span!("rpc", tf_rpc = "RenewEphemeralResource", tf_ephemeral_resource_type = %req.type_name);
        async {
            let fail = only::<pb::renew_ephemeral_resource::Response>;
            let entry = entry_or_return!(
                self.ephemeral_resources,
                "ephemeral resource",
                &req.type_name,
                fail
            );
            let current = req.private.unwrap_or_default();
            let resp = entry
                .resource
                .renew(RenewEphemeralRequest {
                    type_name: req.type_name.clone(),
                    private: current.clone(),
                })
                .await;
            debug!(
                errors = resp.diagnostics.has_errors(),
                renew = resp.renew_at.is_some(),
                "renewed"
            );
            let private = resp.private.unwrap_or(current);
            Ok(Response::new(pb::renew_ephemeral_resource::Response {
                diagnostics: convert::diagnostics(&resp.diagnostics),
                renew_at: resp.renew_at.map(prost_types::Timestamp::from),
                private: (!private.is_empty()).then_some(private),
            }))
        }
        .instrument(span)
        .await
    }

    async fn close_ephemeral_resource(
        &self,
        req: Request<pb::close_ephemeral_resource::Request>,
    ) -> RpcResult<pb::close_ephemeral_resource::Response> {
        let req = req.into_inner();
        let span = info_span!("rpc", tf_rpc = "CloseEphemeralResource", tf_ephemeral_resource_type = %req.type_name);
        async {
            let resp = only::<pb::close_ephemeral_resource::Response>;
            let entry = entry_or_return!(
                self.ephemeral_resources,
                "ephemeral resource",
                &req.type_name,
                resp
            );
            let diags = entry
                .resource
                .close(CloseEphemeralRequest {
                    type_name: req.type_name.clone(),
                    private: req.private.unwrap_or_default(),
                })
                .await;
            debug!(errors = diags.has_errors(), "closed");
            Ok(Response::new(resp(convert::diagnostics(&diags))))
        }
        .instrument(span)
        .await
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
        reply(no_such("list resource", &req.get_ref().type_name))
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
        reply(no_such("action", &req.get_ref().action_type))
    }

    async fn plan_action(
        &self,
        req: Request<pb::plan_action::Request>,
    ) -> RpcResult<pb::plan_action::Response> {
        reply(no_such("action", &req.get_ref().action_type))
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
        reply(no_such("state store", &req.get_ref().type_name))
    }

    async fn configure_state_store(
        &self,
        req: Request<pb::configure_state_store::Request>,
    ) -> RpcResult<pb::configure_state_store::Response> {
        reply(no_such("state store", &req.get_ref().type_name))
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
        reply(no_such("state store", &req.get_ref().type_name))
    }

    async fn unlock_state(
        &self,
        req: Request<pb::unlock_state::Request>,
    ) -> RpcResult<pb::unlock_state::Response> {
        reply(no_such("state store", &req.get_ref().type_name))
    }

    async fn get_states(
        &self,
        req: Request<pb::get_states::Request>,
    ) -> RpcResult<pb::get_states::Response> {
        reply(no_such("state store", &req.get_ref().type_name))
    }

    async fn delete_state(
        &self,
        req: Request<pb::delete_state::Request>,
    ) -> RpcResult<pb::delete_state::Response> {
        reply(no_such("state store", &req.get_ref().type_name))
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

#[cfg(test)]
mod tests {
    //! The write-only guarantees of this layer, on the service itself: whatever a resource answers, no state
    //! leaving it holds a write-only value, and a client without the capability cannot set one.

    use super::*;
    use crate::tfplugin::provider::{
        ApplyResponse, ImportResponse, ImportedResource, PlanResponse, ReadResponse,
    };
    use crate::tfplugin::schema::{Attribute, NestedBlock};
    use crate::tfplugin::value::msgpack;
    use async_trait::async_trait;

    const CANARY: &str = "canary-7c1e";

    fn leaky_schema() -> Schema {
        Schema::new(0)
            .attribute(Attribute::string("name").required())
            .attribute(
                Attribute::string("password_wo")
                    .optional()
                    .sensitive()
                    .write_only(),
            )
            .block(NestedBlock::single(
                "conn",
                Block::new()
                    .attribute(Attribute::string("key").optional())
                    .attribute(Attribute::string("key_wo").optional().write_only()),
            ))
    }

    fn with_canary(mut v: Value) -> Value {
        v.set_attr("password_wo", Value::string(CANARY));
        v.set_attr(
            "conn",
            Value::object([("key", Value::Null), ("key_wo", Value::string(CANARY))]),
        );
        v
    }

    /// A resource that puts write-only values in every state it answers with.
    struct Leaky;

    #[async_trait]
    impl Resource for Leaky {
        fn type_name(&self) -> &'static str {
            "toy_leaky"
        }
        fn schema(&self) -> Schema {
            leaky_schema()
        }
        async fn plan(&self, req: PlanRequest) -> PlanResponse {
            let planned = if req.is_destroy() {
                Value::Null
            } else {
                req.config.clone()
            };
            PlanResponse::planned(&req, planned)
        }
        async fn apply(&self, req: ApplyRequest) -> ApplyResponse {
            ApplyResponse {
                new_state: req.config.clone(),
                ..Default::default()
            }
        }
        async fn read(&self, req: ReadRequest) -> ReadResponse {
            ReadResponse {
                new_state: with_canary(req.current_state),
                ..Default::default()
            }
        }
        async fn import(&self, req: ImportRequest) -> ImportResponse {
            ImportResponse {
                imported: vec![ImportedResource {
                    type_name: String::new(),
                    state: with_canary(Value::object([("name", Value::string(req.id))])),
                    private: Vec::new(),
                }],
                ..Default::default()
            }
        }
    }

    /// A data source declaring a write-only attribute, which only managed resources may.
    struct BadData;

    #[async_trait]
    impl DataSource for BadData {
        fn type_name(&self) -> &'static str {
            "toy_bad"
        }
        fn schema(&self) -> Schema {
            Schema::new(0).attribute(Attribute::string("secret_wo").optional().write_only())
        }
        async fn read(&self, req: DataReadRequest) -> crate::tfplugin::provider::DataReadResponse {
            crate::tfplugin::provider::DataReadResponse {
                state: req.config,
                ..Default::default()
            }
        }
    }

    struct Toy {
        bad_data_source: bool,
    }

    #[async_trait]
    impl Provider for Toy {
        fn schema(&self) -> Schema {
            Schema::new(0)
        }
        fn resources(&self) -> Vec<Arc<dyn Resource>> {
            vec![Arc::new(Leaky)]
        }
        fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
            if self.bad_data_source {
                vec![Arc::new(BadData)]
            } else {
                Vec::new()
            }
        }
        async fn configure(&self, _req: ConfigureRequest) -> Diagnostics {
            Diagnostics::new()
        }
    }

    fn service() -> ProviderService {
        ProviderService::new(Arc::new(Toy {
            bad_data_source: false,
        }))
    }

    fn dv(v: &Value) -> Option<pb::DynamicValue> {
        Some(pb::DynamicValue {
            msgpack: msgpack::encode(v, &leaky_schema().value_type()).expect("encode"),
            json: Vec::new(),
        })
    }

    /// Decodes a state the service sent and checks it holds no write-only value, nowhere in its bytes either.
    fn no_write_only(dv: &Option<pb::DynamicValue>) -> Value {
        let dv = dv.as_ref().expect("a state");
        assert!(
            !String::from_utf8_lossy(&dv.msgpack).contains(CANARY),
            "the canary is in the bytes"
        );
        let v = msgpack::decode(&dv.msgpack, &leaky_schema().value_type()).expect("decode");
        assert!(v.get_attr("password_wo").is_null());
        assert!(v.get_attr("conn").get_attr("key_wo").is_null());
        v
    }

    fn caps(write_only: bool) -> Option<pb::ClientCapabilities> {
        Some(pb::ClientCapabilities {
            deferral_allowed: false,
            write_only_attributes_allowed: write_only,
        })
    }

    fn config() -> Value {
        with_canary(Value::object([("name", Value::string("a"))]))
    }

    #[tokio::test]
    async fn no_state_leaving_the_layer_holds_a_write_only_value() {
        let svc = service();
        let schema = svc
            .get_provider_schema(Request::new(Default::default()))
            .await
            .unwrap()
            .into_inner();
        assert!(schema.diagnostics.is_empty());
        let attrs = &schema.resource_schemas["toy_leaky"]
            .block
            .as_ref()
            .unwrap()
            .attributes;
        let wire = |name: &str| attrs.iter().find(|a| a.name == name).unwrap().write_only;
        assert!(wire("password_wo") && !wire("name"));

        let plan = svc
            .plan_resource_change(Request::new(pb::plan_resource_change::Request {
                type_name: "toy_leaky".into(),
                prior_state: dv(&Value::Null),
                proposed_new_state: dv(&config()),
                config: dv(&config()),
                client_capabilities: caps(true),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert!(plan.diagnostics.is_empty(), "{:?}", plan.diagnostics);
        let planned = no_write_only(&plan.planned_state);
        assert_eq!(
            planned.get_attr("name").as_str(),
            Some("a"),
            "the rest is kept"
        );

        let apply = svc
            .apply_resource_change(Request::new(pb::apply_resource_change::Request {
                type_name: "toy_leaky".into(),
                prior_state: dv(&Value::Null),
                planned_state: plan.planned_state.clone(),
                config: dv(&config()),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert!(apply.diagnostics.is_empty(), "{:?}", apply.diagnostics);
        no_write_only(&apply.new_state);

        let read = svc
            .read_resource(Request::new(pb::read_resource::Request {
                type_name: "toy_leaky".into(),
                current_state: apply.new_state.clone(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
        no_write_only(&read.new_state);

        let import = svc
            .import_resource_state(Request::new(pb::import_resource_state::Request {
                type_name: "toy_leaky".into(),
                id: "b".into(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(import.imported_resources.len(), 1);
        no_write_only(&import.imported_resources[0].state);
    }

    #[tokio::test]
    async fn a_client_without_the_capability_cannot_set_a_write_only_attribute() {
        let svc = service();
        let validate = |config: Value, write_only: bool| {
            svc.validate_resource_config(Request::new(pb::validate_resource_config::Request {
                type_name: "toy_leaky".into(),
                config: dv(&config),
                client_capabilities: caps(write_only),
            }))
        };
        let refused = validate(config(), false)
            .await
            .unwrap()
            .into_inner()
            .diagnostics;
        let mut paths: Vec<Vec<String>> = refused
            .iter()
            .map(|d| {
                d.attribute
                    .as_ref()
                    .unwrap()
                    .steps
                    .iter()
                    .map(|s| format!("{:?}", s.selector))
                    .collect()
            })
            .collect();
        paths.sort();
        assert_eq!(refused.len(), 2, "{refused:?}");
        assert!(paths[0].concat().contains("conn") && paths[0].concat().contains("key_wo"));
        assert!(
            refused
                .iter()
                .all(|d| d.summary.contains("Write-only attribute not supported"))
        );
        assert!(refused.iter().all(|d| !d.detail.contains(CANARY)));
        // With the capability, or without a write-only value (unknown counts as set), the configuration is valid.
        assert!(
            validate(config(), true)
                .await
                .unwrap()
                .into_inner()
                .diagnostics
                .is_empty()
        );
        let plain = Value::object([("name", Value::string("a"))]);
        assert!(
            validate(plain.clone(), false)
                .await
                .unwrap()
                .into_inner()
                .diagnostics
                .is_empty()
        );
        let mut unknown = plain.clone();
        unknown.set_attr("password_wo", Value::unknown());
        assert_eq!(
            validate(unknown, false)
                .await
                .unwrap()
                .into_inner()
                .diagnostics
                .len(),
            1
        );

        // A plan from such a client is refused too, before the resource plans.
        let plan = svc
            .plan_resource_change(Request::new(pb::plan_resource_change::Request {
                type_name: "toy_leaky".into(),
                prior_state: dv(&Value::Null),
                proposed_new_state: dv(&config()),
                config: dv(&config()),
                client_capabilities: None,
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(plan.diagnostics.len(), 2, "{:?}", plan.diagnostics);
        assert!(plan.planned_state.is_none());
    }

    #[tokio::test]
    async fn write_only_attributes_outside_managed_resources_fail_the_schema() {
        let svc = ProviderService::new(Arc::new(Toy {
            bad_data_source: true,
        }));
        let schema = svc
            .get_provider_schema(Request::new(Default::default()))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(schema.diagnostics.len(), 1, "{:?}", schema.diagnostics);
        assert!(
            schema.diagnostics[0]
                .detail
                .contains("data source toy_bad: attribute secret_wo is write-only"),
            "{:?}",
            schema.diagnostics
        );
    }
}
