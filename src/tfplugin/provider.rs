//! The traits a provider implements, and their request / response types.
//!
//! The server decodes every `DynamicValue` with the matching schema before calling these methods and encodes the
//! returned [`Value`]s with it afterwards, so implementations only handle [`Value`]s. Null states mean "does not
//! exist": a plan whose `proposed_new_state` is null is a destroy, an apply whose `planned_state` is null is a delete,
//! a read that returns a null `new_state` tells Terraform the object is gone.

use super::diag::{Diagnostic, Diagnostics};
use super::path::AttributePath;
use super::schema::Schema;
use super::value::Value;
use async_trait::async_trait;
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

/// Stands for redacted bytes in `Debug` output.
struct RedactedBytes(Option<usize>);

impl fmt::Debug for RedactedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(n) => write!(f, "<redacted, {n} bytes>"),
            None => f.write_str("None"),
        }
    }
}

/// Byte fields whose contents `Debug` never shows.
trait Redact {
    fn redacted(&self) -> RedactedBytes;
}

impl Redact for Vec<u8> {
    fn redacted(&self) -> RedactedBytes {
        RedactedBytes(Some(self.len()))
    }
}

impl Redact for Option<Vec<u8>> {
    fn redacted(&self) -> RedactedBytes {
        RedactedBytes(self.as_ref().map(Vec::len))
    }
}

/// `Debug` for a request / response type: `shown` fields as usual ([`Value`]s redact their strings themselves),
/// `redacted` byte fields (private data, raw state) by length only.
macro_rules! debug_redacting {
    ($ty:ident { $($shown:ident),* $(,)? } redacted { $($secret:ident),* $(,)? }) => {
        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($ty))
                    $(.field(stringify!($shown), &self.$shown))*
                    $(.field(stringify!($secret), &self.$secret.redacted()))*
                    .finish()
            }
        }
    };
}

debug_redacting!(PlanRequest { type_name, prior_state, proposed_new_state, config, provider_meta, client,
    prior_unread } redacted { prior_private });
debug_redacting!(PlanResponse { planned_state, attribute_bytes, requires_replace, diagnostics, deferred }
    redacted { planned_private });
debug_redacting!(ApplyRequest { type_name, prior_state, planned_state, config, provider_meta }
    redacted { planned_private });
debug_redacting!(ApplyResponse { new_state, attribute_bytes, diagnostics } redacted { private });
debug_redacting!(ReadRequest { type_name, current_state, provider_meta, client, unread } redacted { private });
debug_redacting!(ReadResponse { new_state, attribute_bytes, diagnostics, deferred } redacted { private });
debug_redacting!(ImportedResource { type_name, state } redacted { private });
debug_redacting!(UpgradeRequest { type_name, version } redacted { raw_state_json });
debug_redacting!(OpenEphemeralRequest { type_name, config, client } redacted {});
debug_redacting!(OpenEphemeralResponse { result, renew_at, diagnostics, deferred } redacted { private });
debug_redacting!(RenewEphemeralRequest { type_name } redacted { private });
debug_redacting!(RenewEphemeralResponse { renew_at, diagnostics } redacted { private });
debug_redacting!(CloseEphemeralRequest { type_name } redacted { private });

/// The SHA-256 (hex) of the msgpack bytes of each top-level attribute a request carried and the plugin layer left
/// undecoded (see [`Resource::read_unread_attributes`]): what a resource compares with what it recorded when it
/// answered that attribute, to answer it again exactly as received ([`AttributeBytes::Received`]) without decoding it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnreadDigests(std::collections::BTreeMap<String, String>);

impl UnreadDigests {
    /// The digest of the bytes received for the attribute `name`, if the request carried it undecoded.
    pub fn sha256(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// Records the digest of the attribute `name`.
    pub fn insert(&mut self, name: impl Into<String>, sha256: impl Into<String>) {
        self.0.insert(name.into(), sha256.into());
    }
}

/// A top-level attribute of an answered state given as msgpack bytes rather than in the state's [`Value`] (whatever
/// the state holds there is not encoded): a large computed attribute answered without being encoded again.
/// Ignored where the state is null, in a destroy's plan, and when the whole state is kept
/// ([`ReadResponse::keep_current_state`], [`ApplyResponse::keep_prior_state`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttributeBytes {
    /// The bytes the request carried for the attribute, which the plugin layer left undecoded: the current state's
    /// for a read, the prior state's for a plan (see [`UnreadDigests`]).
    Received,
    /// Bytes the resource encoded with [`Schema::encode_attribute`] (to record their digest, say).
    Encoded(EncodedAttribute),
}

/// One top-level attribute's value encoded by [`Schema::encode_attribute`]: one msgpack item of the attribute's
/// type, which only that function makes. `Debug` shows the attribute and the length.
#[derive(Clone, PartialEq, Eq)]
pub struct EncodedAttribute {
    name: String,
    bytes: Vec<u8>,
}

impl EncodedAttribute {
    pub(crate) fn new(name: &str, bytes: Vec<u8>) -> Self {
        Self {
            name: name.to_owned(),
            bytes,
        }
    }

    /// The attribute these bytes are the value of.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The msgpack bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl fmt::Debug for EncodedAttribute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "EncodedAttribute({}, {} bytes)",
            self.name,
            self.bytes.len()
        )
    }
}

/// What the Terraform client supports (sent with most requests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientCapabilities {
    /// The client understands deferred actions; only then may a response carry a [`DeferredReason`].
    pub deferral_allowed: bool,
    /// The client supports write-only attributes.
    pub write_only_attributes_allowed: bool,
}

/// Why an action is deferred to a later plan/apply round. Only honoured when
/// [`ClientCapabilities::deferral_allowed`]; otherwise the server turns it into an error diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeferredReason {
    /// Unspecified.
    Unknown,
    /// The resource configuration contains unknown values.
    ResourceConfigUnknown,
    /// The provider configuration contains unknown values.
    ProviderConfigUnknown,
    /// A prerequisite is absent.
    AbsentPrereq,
}

/// `ConfigureProvider` input.
#[derive(Debug, Clone, Default)]
pub struct ConfigureRequest {
    /// The provider configuration (may contain unknowns at plan time).
    pub config: Value,
    /// Terraform/OpenTofu version string.
    pub terraform_version: String,
    /// Client capabilities.
    pub client: ClientCapabilities,
}

/// `PlanResourceChange` input.
#[derive(Clone, Default)]
pub struct PlanRequest {
    /// Resource type name.
    pub type_name: String,
    /// State before the change; null on create.
    pub prior_state: Value,
    /// Terraform's proposal (config merged with prior state); null on destroy.
    pub proposed_new_state: Value,
    /// The configuration; null on destroy.
    pub config: Value,
    /// Private data saved with the prior state.
    pub prior_private: Vec<u8>,
    /// `provider_meta` block (null unless the provider declares one).
    pub provider_meta: Value,
    /// Client capabilities.
    pub client: ClientCapabilities,
    /// The digests of the prior state's attributes left undecoded ([`Resource::plan_unread_attributes`]).
    pub prior_unread: UnreadDigests,
}

impl PlanRequest {
    /// Whether this plans a destroy.
    pub fn is_destroy(&self) -> bool {
        self.proposed_new_state.is_null()
    }

    /// Whether this plans a create.
    pub fn is_create(&self) -> bool {
        self.prior_state.is_null() && !self.proposed_new_state.is_null()
    }
}

/// `PlanResourceChange` output.
#[derive(Clone, Default)]
pub struct PlanResponse {
    /// The planned state (unknown where apply will decide; null for a destroy).
    pub planned_state: Value,
    /// Top-level attributes of the planned state given as bytes ([`AttributeBytes::Received`]: the prior
    /// state's); null in `planned_state`.
    pub attribute_bytes: Vec<(&'static str, AttributeBytes)>,
    /// Attributes whose change forces replacement.
    pub requires_replace: Vec<AttributePath>,
    /// Private data handed to apply.
    pub planned_private: Vec<u8>,
    /// Diagnostics.
    pub diagnostics: Diagnostics,
    /// Defer this change (only if the client allows it).
    pub deferred: Option<DeferredReason>,
}

impl PlanResponse {
    /// A response planning `planned_state`, keeping `req`'s private data.
    pub fn planned(req: &PlanRequest, planned_state: Value) -> Self {
        Self {
            planned_state,
            planned_private: req.prior_private.clone(),
            ..Self::default()
        }
    }

    /// A response with only an error diagnostic (planned state = proposed).
    pub fn error(req: &PlanRequest, diagnostic: Diagnostic) -> Self {
        Self {
            planned_state: req.proposed_new_state.clone(),
            planned_private: req.prior_private.clone(),
            diagnostics: diagnostic.into(),
            ..Self::default()
        }
    }
}

/// `ApplyResourceChange` input.
#[derive(Clone, Default)]
pub struct ApplyRequest {
    /// Resource type name.
    pub type_name: String,
    /// State before the change; null on create.
    pub prior_state: Value,
    /// The planned state; null on delete.
    pub planned_state: Value,
    /// The configuration; null on delete.
    pub config: Value,
    /// Private data from plan.
    pub planned_private: Vec<u8>,
    /// `provider_meta` block.
    pub provider_meta: Value,
}

impl ApplyRequest {
    /// Whether this applies a delete.
    pub fn is_delete(&self) -> bool {
        self.planned_state.is_null()
    }

    /// Whether this applies a create.
    pub fn is_create(&self) -> bool {
        self.prior_state.is_null() && !self.planned_state.is_null()
    }
}

/// `ApplyResourceChange` output.
#[derive(Clone, Default)]
pub struct ApplyResponse {
    /// The new state (wholly known; null after a delete). On error, return what exists now.
    pub new_state: Value,
    /// Top-level attributes of the new state given as bytes (only [`AttributeBytes::Encoded`]); null in
    /// `new_state`.
    pub attribute_bytes: Vec<(&'static str, AttributeBytes)>,
    /// The new state is the prior state (the apply wrote nothing, or cannot tell what exists now): the plugin layer
    /// answers with the prior state exactly as the client sent it (whole, even its attributes left undecoded by
    /// [`Resource::apply_unread_attributes`]) and ignores `new_state`.
    pub keep_prior_state: bool,
    /// Private data saved with the state.
    pub private: Vec<u8>,
    /// Diagnostics.
    pub diagnostics: Diagnostics,
}

/// `ReadResource` input.
#[derive(Clone, Default)]
pub struct ReadRequest {
    /// Resource type name.
    pub type_name: String,
    /// The state Terraform has.
    pub current_state: Value,
    /// Private data saved with the state.
    pub private: Vec<u8>,
    /// `provider_meta` block.
    pub provider_meta: Value,
    /// Client capabilities.
    pub client: ClientCapabilities,
    /// The digests of the current state's attributes left undecoded ([`Resource::read_unread_attributes`]).
    pub unread: UnreadDigests,
}

/// `ReadResource` output.
#[derive(Clone, Default)]
pub struct ReadResponse {
    /// What exists now (null if the object is gone).
    pub new_state: Value,
    /// Top-level attributes of the new state given as bytes ([`AttributeBytes::Received`]: the current state's);
    /// null in `new_state`.
    pub attribute_bytes: Vec<(&'static str, AttributeBytes)>,
    /// The new state is the current state (the read was deferred, or cannot tell what exists now): the plugin layer
    /// answers with the current state exactly as the client sent it (whole, even its attributes left undecoded by
    /// [`Resource::read_unread_attributes`]) and ignores `new_state`.
    pub keep_current_state: bool,
    /// Private data to save.
    pub private: Vec<u8>,
    /// Diagnostics.
    pub diagnostics: Diagnostics,
    /// Defer the read (only if the client allows it).
    pub deferred: Option<DeferredReason>,
}

/// `ImportResourceState` input.
#[derive(Debug, Clone, Default)]
pub struct ImportRequest {
    /// Resource type name.
    pub type_name: String,
    /// The import ID given by the user.
    pub id: String,
    /// Client capabilities.
    pub client: ClientCapabilities,
}

/// One imported object.
#[derive(Clone, Default)]
pub struct ImportedResource {
    /// Resource type name (usually the requested one).
    pub type_name: String,
    /// Its state (Terraform reads it next).
    pub state: Value,
    /// Private data.
    pub private: Vec<u8>,
}

/// `ImportResourceState` output.
#[derive(Debug, Clone, Default)]
pub struct ImportResponse {
    /// Imported objects.
    pub imported: Vec<ImportedResource>,
    /// Diagnostics.
    pub diagnostics: Diagnostics,
    /// Defer the import (only if the client allows it).
    pub deferred: Option<DeferredReason>,
}

/// `UpgradeResourceState` input.
#[derive(Clone, Default)]
pub struct UpgradeRequest {
    /// Resource type name.
    pub type_name: String,
    /// Schema version the state was written with.
    pub version: i64,
    /// The stored state as JSON (as written by any earlier schema version).
    pub raw_state_json: Vec<u8>,
}

/// `UpgradeResourceState` output.
#[derive(Debug, Clone, Default)]
pub struct UpgradeResponse {
    /// The state, conforming to the current schema.
    pub upgraded_state: Value,
    /// Diagnostics.
    pub diagnostics: Diagnostics,
}

impl UpgradeResponse {
    /// Decodes `raw_state_json` against `schema` (attributes unknown to the schema are an error).
    pub fn decode(raw_state_json: &[u8], schema: &Schema) -> Self {
        match super::value::json::decode_state(raw_state_json, schema) {
            Ok(v) => Self {
                upgraded_state: v,
                diagnostics: Diagnostics::new(),
            },
            Err(e) => Self {
                upgraded_state: Value::Null,
                diagnostics: e.to_diagnostic("Invalid stored state").into(),
            },
        }
    }
}

/// `ReadDataSource` input.
#[derive(Debug, Clone, Default)]
pub struct DataReadRequest {
    /// Data source type name.
    pub type_name: String,
    /// The configuration (computed attributes null).
    pub config: Value,
    /// `provider_meta` block.
    pub provider_meta: Value,
    /// Client capabilities.
    pub client: ClientCapabilities,
}

/// `ReadDataSource` output.
#[derive(Debug, Clone, Default)]
pub struct DataReadResponse {
    /// The result: the config with computed attributes filled in.
    pub state: Value,
    /// Diagnostics.
    pub diagnostics: Diagnostics,
    /// Defer the read (only if the client allows it).
    pub deferred: Option<DeferredReason>,
}

/// A provider: its configuration schema, its resources and data sources.
#[async_trait]
pub trait Provider: Send + Sync + 'static {
    /// Schema of the `provider` configuration block.
    fn schema(&self) -> Schema;

    /// The resource types (called once; the server caches them by type name).
    fn resources(&self) -> Vec<Arc<dyn Resource>>;

    /// The data source types (called once).
    fn data_sources(&self) -> Vec<Arc<dyn DataSource>>;

    /// The ephemeral resource types (called once). Default: none.
    ///
    /// Declaring them is safe with every client: Terraform before 1.10 and OpenTofu before 1.11 neither list nor
    /// call them (they only fail on a configuration that uses an `ephemeral` block).
    fn ephemeral_resources(&self) -> Vec<Arc<dyn EphemeralResource>> {
        Vec::new()
    }

    /// Schema of the `provider_meta` block, if the provider supports one.
    fn provider_meta_schema(&self) -> Option<Schema> {
        None
    }

    /// Validates the provider configuration (may contain unknowns).
    async fn validate_config(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// Configures the provider. Called before any resource or data source operation except validation.
    async fn configure(&self, req: ConfigureRequest) -> Diagnostics;

    /// Terraform asked the provider to stop in-flight operations (Ctrl-C). Return an error message, if any.
    async fn stop(&self) -> Option<String> {
        None
    }
}

/// A managed resource type.
#[async_trait]
pub trait Resource: Send + Sync + 'static {
    /// Full type name, e.g. `example_thing`.
    fn type_name(&self) -> &'static str;

    /// Schema (with its version).
    fn schema(&self) -> Schema;

    /// Validates a configuration (may contain unknowns).
    async fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// Plans a create, update or destroy.
    async fn plan(&self, req: PlanRequest) -> PlanResponse;

    /// Top-level attributes of the prior and proposed state that [`Resource::plan`] does not read, given the
    /// prior private data: the plugin layer leaves them undecoded and null in the [`PlanRequest`] (large computed
    /// attributes the plan recomputes cost memory and time to decode for nothing). Default: none.
    fn plan_unread_attributes(&self, _prior_private: &[u8]) -> &'static [&'static str] {
        &[]
    }

    /// Applies a planned create, update or delete.
    async fn apply(&self, req: ApplyRequest) -> ApplyResponse;

    /// Top-level attributes of the prior state that [`Resource::apply`] does not read, given the planned private
    /// data: the plugin layer leaves them undecoded and null in the [`ApplyRequest`]'s `prior_state`. An apply whose
    /// new state is the prior state (it wrote nothing, or cannot tell what exists now) answers with
    /// [`ApplyResponse::keep_prior_state`] to give the prior state back whole. Default: none.
    fn apply_unread_attributes(&self, _planned_private: &[u8]) -> &'static [&'static str] {
        &[]
    }

    /// Refreshes the state.
    async fn read(&self, req: ReadRequest) -> ReadResponse;

    /// Top-level attributes of the current state that [`Resource::read`] does not read, given the private data: the
    /// plugin layer leaves them undecoded and null in the [`ReadRequest`] (a read that rebuilds a large computed
    /// attribute from what exists need not decode the old one). A read whose answer is the current state answers
    /// with [`ReadResponse::keep_current_state`] to give it back whole. Default: none.
    fn read_unread_attributes(&self, _private: &[u8]) -> &'static [&'static str] {
        &[]
    }

    /// Imports an existing object by ID. Default: import is not supported.
    async fn import(&self, req: ImportRequest) -> ImportResponse {
        ImportResponse {
            diagnostics: Diagnostic::error(
                "Import not supported",
                format!("Resource type {} does not support import.", req.type_name),
            )
            .into(),
            ..ImportResponse::default()
        }
    }

    /// Upgrades a stored state to the current schema. Default: decode the JSON against the current schema.
    async fn upgrade_state(&self, req: UpgradeRequest) -> UpgradeResponse {
        UpgradeResponse::decode(&req.raw_state_json, &self.schema())
    }
}

/// A data source type.
#[async_trait]
pub trait DataSource: Send + Sync + 'static {
    /// Full type name, e.g. `example_things`.
    fn type_name(&self) -> &'static str;

    /// Schema.
    fn schema(&self) -> Schema;

    /// Validates a configuration (may contain unknowns).
    async fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// Reads the data.
    async fn read(&self, req: DataReadRequest) -> DataReadResponse;
}

/// `OpenEphemeralResource` input.
#[derive(Clone, Default)]
pub struct OpenEphemeralRequest {
    /// Ephemeral resource type name.
    pub type_name: String,
    /// The configuration. May contain unknowns when Terraform opens the resource during `plan`; answer with
    /// [`OpenEphemeralResponse::deferred`] (if the client allows it) or with a result whose attributes depending on
    /// the unknowns are unknown.
    pub config: Value,
    /// Client capabilities.
    pub client: ClientCapabilities,
}

/// `OpenEphemeralResource` output.
#[derive(Clone, Default)]
pub struct OpenEphemeralResponse {
    /// The result: the configuration with computed attributes filled in. Never stored by Terraform (neither in
    /// state nor in plan files), but it may be passed to other providers' configurations within the same run.
    pub result: Value,
    /// Opaque bytes handed back to [`EphemeralResource::renew`] and [`EphemeralResource::close`] (for example a
    /// lease ID). Terraform keeps them in memory only. Empty means none.
    pub private: Vec<u8>,
    /// When Terraform should call [`EphemeralResource::renew`] if the resource is still in use then (for example
    /// shortly before a credential expires). `None`: never.
    pub renew_at: Option<SystemTime>,
    /// Diagnostics.
    pub diagnostics: Diagnostics,
    /// Defer opening (only if the client allows it; otherwise the server turns it into an error diagnostic).
    pub deferred: Option<DeferredReason>,
}

/// `RenewEphemeralResource` input.
#[derive(Clone, Default)]
pub struct RenewEphemeralRequest {
    /// Ephemeral resource type name.
    pub type_name: String,
    /// The private bytes from the last open or renew (empty if none).
    pub private: Vec<u8>,
}

/// `RenewEphemeralResource` output.
#[derive(Clone, Default)]
pub struct RenewEphemeralResponse {
    /// New private bytes for the next renew / close; `None` keeps the current ones.
    pub private: Option<Vec<u8>>,
    /// When to renew again; `None`: never.
    pub renew_at: Option<SystemTime>,
    /// Diagnostics.
    pub diagnostics: Diagnostics,
}

/// `CloseEphemeralResource` input.
#[derive(Clone, Default)]
pub struct CloseEphemeralRequest {
    /// Ephemeral resource type name.
    pub type_name: String,
    /// The private bytes from the last open or renew (empty if none).
    pub private: Vec<u8>,
}

/// An ephemeral resource type (Terraform >= 1.10, OpenTofu >= 1.11): a value that exists only during one
/// `plan` or `apply` run, such as a short-lived credential, and never reaches state or plan files.
///
/// Lifecycle within one run, driven by Terraform:
/// 1. [`validate`](Self::validate) the configuration (may contain unknowns);
/// 2. [`open`](Self::open) it: compute the result, optionally return `private` bytes and a `renew_at` time;
/// 3. while other resources still need it and `renew_at` has passed, [`renew`](Self::renew) it with the current
///    private bytes (renew cannot change the result: only extend what backs it, such as a lease);
/// 4. [`close`](Self::close) it once nothing needs it any more (release leases, revoke tokens).
///
/// Open, renew and close may be called on different provider processes' lifetimes only in the sense that
/// `private` is all the state carried between them: keep anything needed later in it, not in `self`.
///
/// The server decodes the configuration and encodes the result with [`schema`](Self::schema); mark secret
/// attributes [`sensitive`](super::Attribute::sensitive) so that the CLIs redact them in their output.
/// Private bytes and values never appear in this layer's logs, and the request / response types redact them in
/// `Debug`.
#[async_trait]
pub trait EphemeralResource: Send + Sync + 'static {
    /// Full type name, e.g. `example_token`.
    fn type_name(&self) -> &'static str;

    /// Schema of configuration and result (its version is ignored: nothing is stored).
    fn schema(&self) -> Schema;

    /// Validates a configuration (may contain unknowns).
    async fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// Opens the resource: produces its result.
    async fn open(&self, req: OpenEphemeralRequest) -> OpenEphemeralResponse;

    /// Renews what backs the result. Default: nothing to renew (keeps the private bytes, asks for no further renew).
    async fn renew(&self, _req: RenewEphemeralRequest) -> RenewEphemeralResponse {
        RenewEphemeralResponse::default()
    }

    /// Releases what backs the result. Default: nothing to release.
    async fn close(&self, _req: CloseEphemeralRequest) -> Diagnostics {
        Diagnostics::new()
    }
}
