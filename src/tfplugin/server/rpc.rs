//! The one prologue every RPC that carries values goes through: the logging context (a span naming the RPC and
//! the type it is about), the body on one `?` path, and the one place where a failure becomes a response.
//!
//! A body ([`Rpc::answer`]) finds its type (`ProviderService::resource`, ...), decodes what it needs
//! ([`Cached::decode`]) and calls the provider; anything that stops it early is a [`Failure`], which
//! [`ProviderService::rpc`] turns into the RPC's failure response ([`Rpc::failed`]).

use super::{Cached, ProviderService};
use crate::tfplugin::convert;
use crate::tfplugin::diag::{Diagnostic, Diagnostics};
use crate::tfplugin::pb::tfplugin6 as pb;
use crate::tfplugin::provider::{AttributeBytes, UnreadDigests};
use crate::tfplugin::value::msgpack::{self, Span as Unread};
use crate::tfplugin::value::{Value, ValueError};
use tonic::{Request, Response, Status};
use tracing::{Instrument, Span, debug, info_span};

pub(super) type RpcResult<T> = Result<Response<T>, Status>;

/// Why an RPC body stopped before it had an answer: the diagnostics to send instead.
pub(super) struct Failure(Diagnostics);

impl From<Diagnostic> for Failure {
    fn from(d: Diagnostic) -> Self {
        Self(d.into())
    }
}

impl From<Diagnostics> for Failure {
    fn from(d: Diagnostics) -> Self {
        Self(d)
    }
}

/// What an RPC is about, for its logging context.
pub(super) enum Target<'a> {
    Provider,
    Resource(&'a str),
    DataSource(&'a str),
    Ephemeral(&'a str),
}

impl Target<'_> {
    /// The span of one call of RPC `rpc` (`tf_rpc`, plus the type name under the field the CLI's logs use).
    fn span(&self, rpc: &'static str) -> Span {
        match self {
            Self::Provider => info_span!("rpc", tf_rpc = rpc),
            Self::Resource(t) => info_span!("rpc", tf_rpc = rpc, tf_resource_type = %t),
            Self::DataSource(t) => info_span!("rpc", tf_rpc = rpc, tf_data_source_type = %t),
            Self::Ephemeral(t) => {
                info_span!("rpc", tf_rpc = rpc, tf_ephemeral_resource_type = %t)
            }
        }
    }
}

/// A request of an RPC served through [`ProviderService::rpc`].
#[async_trait::async_trait]
pub(super) trait Rpc: Send + Sized + 'static {
    type Response: WithDiagnostics + Send;
    /// The RPC's protocol name (`tf_rpc` in the logs).
    const NAME: &'static str;

    fn target(&self) -> Target<'_>;

    /// The response when the body failed: only the diagnostics, unless the RPC must hand something back anyway
    /// (the state a failed read or apply leaves as it was). It sees the request as the body left it: a body takes
    /// out of the request (`std::mem::take`) only fields this function does not use.
    fn failed(&self, diagnostics: Vec<pb::Diagnostic>) -> Self::Response {
        only(diagnostics)
    }

    /// The body: the answer, or the failure that stopped it.
    async fn answer(req: &mut Self, svc: &ProviderService) -> Result<Self::Response, Failure>;
}

impl ProviderService {
    /// Serves one call of `R`: the prologue shared by every RPC that carries values.
    pub(super) async fn rpc<R: Rpc>(&self, req: Request<R>) -> RpcResult<R::Response> {
        let mut req = req.into_inner();
        let span = req.target().span(R::NAME);
        async {
            let answer = match R::answer(&mut req, self).await {
                Ok(answer) => answer,
                Err(Failure(diags)) => req.failed(convert::diagnostics(&diags)),
            };
            Ok(Response::new(answer))
        }
        .instrument(span)
        .await
    }
}

impl Cached {
    /// Decodes a value of this schema from the request (leaving the top-level attributes in `unread` null); a
    /// malformed value stops the RPC with a diagnostic naming `what` and the attribute path.
    pub(super) fn decode(
        &self,
        dv: Option<&pb::DynamicValue>,
        what: &str,
        unread: &[&str],
    ) -> Result<Value, Failure> {
        self.decode_unread(dv, what, unread).map(|(v, _)| v)
    }

    /// [`Cached::decode`], with where each attribute left undecoded lies in the request's msgpack (none if the
    /// value came as JSON, which is decoded whole).
    pub(super) fn decode_unread(
        &self,
        dv: Option<&pb::DynamicValue>,
        what: &str,
        unread: &[&str],
    ) -> Result<(Value, Vec<Unread>), Failure> {
        let decoded = match dv {
            Some(dv) if !dv.msgpack.is_empty() && !unread.is_empty() => {
                msgpack::decode_unread(&dv.msgpack, &self.ty, unread)
            }
            _ => convert::decode(dv, &self.ty).map(|v| (v, Vec::new())),
        };
        decoded.map_err(|e| decode_diag(what, &e).into())
    }

    /// [`Cached::encode_state`] with the top-level attributes of `bytes` given as bytes (see [`AttributeBytes`]):
    /// [`AttributeBytes::Received`] are those of `received` where `unread` says they lie. Bytes for a block or an
    /// attribute holding write-only attributes (they would bypass [`Cached::null_write_only`]), or received bytes of
    /// an attribute the request did not carry undecoded, are errors.
    pub(super) fn encode_state_with(
        &self,
        mut v: Value,
        bytes: &[(&'static str, AttributeBytes)],
        received: (Option<&pb::DynamicValue>, &[Unread]),
        what: &str,
        diags: &mut Diagnostics,
    ) -> Option<pb::DynamicValue> {
        if bytes.is_empty() || v.is_null() {
            return self.encode_state(v, what, diags);
        }
        let invalid = |detail: String| {
            Diagnostic::error(format!("Provider produced an invalid {what}"), detail)
        };
        let mut with = Vec::with_capacity(bytes.len());
        for (name, given) in bytes {
            // Bytes bypass `null_write_only`: only attributes without anything write-only in them.
            let attribute = self.block().attribute_named(name);
            if attribute.is_none_or(|a| a.has_write_only()) {
                diags.push(invalid(format!(
                    "{name:?} was answered as bytes, but it is not an attribute, or it holds write-only attributes."
                )));
                return None;
            }
            let slice = match given {
                AttributeBytes::Encoded(e) if e.name() == *name => Some(e.bytes()),
                AttributeBytes::Encoded(e) => {
                    let other = e.name();
                    diags.push(invalid(format!(
                        "{name:?} was answered with the bytes of the attribute {other:?}."
                    )));
                    return None;
                }
                AttributeBytes::Received => {
                    let (dv, unread) = received;
                    let span = unread.iter().find(|u| u.name == *name);
                    dv.zip(span).map(|(dv, u)| &dv.msgpack[u.range.clone()])
                }
            };
            let Some(slice) = slice else {
                diags.push(invalid(format!(
                    "{name:?} was answered as received, but the request did not carry it undecoded."
                )));
                return None;
            };
            // What the value holds there is not encoded.
            v.set_attr(*name, Value::Null);
            with.push((*name, slice));
        }
        let names = |received: bool| -> Vec<&str> {
            let of = |b: &AttributeBytes| matches!(b, AttributeBytes::Received) == received;
            bytes
                .iter()
                .filter(|(_, b)| of(b))
                .map(|(n, _)| *n)
                .collect()
        };
        let (as_received, encoded) = (names(true).join(","), names(false).join(","));
        debug!(as_received, encoded, "answered attributes as bytes");
        let dv = self.encode_state(v, what, diags)?;
        match msgpack::splice_attributes(&dv.msgpack, &with) {
            Ok(msgpack) => Some(pb::DynamicValue {
                msgpack,
                json: Vec::new(),
            }),
            Err(e) => {
                diags.push(e.to_diagnostic(&format!("Provider produced an invalid {what}")));
                None
            }
        }
    }

    /// Encodes a value the provider answered with; a value that does not fit the schema becomes an error
    /// diagnostic and no value.
    pub(super) fn encode(
        &self,
        v: &Value,
        what: &str,
        diags: &mut Diagnostics,
    ) -> Option<pb::DynamicValue> {
        match convert::encode(v, self.block(), &self.ty) {
            Ok(dv) => Some(dv),
            Err(e) => {
                diags.push(e.to_diagnostic(&format!("Provider produced an invalid {what}")));
                None
            }
        }
    }

    /// [`Cached::encode`] for a resource state: its write-only attributes are set to null first (see
    /// [`Cached::null_write_only`]). Every state of a managed resource this layer answers with goes through here.
    pub(super) fn encode_state(
        &self,
        mut v: Value,
        what: &str,
        diags: &mut Diagnostics,
    ) -> Option<pb::DynamicValue> {
        self.null_write_only(&mut v, what);
        self.encode(&v, what, diags)
    }
}

/// The digests of the attributes `unread` of `dv` (see [`UnreadDigests`]).
pub(super) fn unread_digests(dv: Option<&pb::DynamicValue>, unread: &[Unread]) -> UnreadDigests {
    use sha2::Digest;
    let mut digests = UnreadDigests::default();
    if let Some(dv) = dv {
        for u in unread {
            let sha = sha2::Sha256::digest(&dv.msgpack[u.range.clone()]);
            digests.insert(u.name.clone(), hex::encode(sha));
        }
    }
    digests
}

/// Turns a codec error on a request into an error diagnostic.
pub(super) fn decode_diag(what: &str, e: &ValueError) -> Diagnostic {
    e.to_diagnostic(&format!("Invalid {what} received from Terraform"))
}

/// The error for a type name this provider does not have.
pub(super) fn unknown_type(kind: &str, name: &str) -> Diagnostic {
    Diagnostic::error(
        format!("Unknown {kind} type"),
        format!("This provider has no {kind} type named {name:?}."),
    )
}

/// The error for a feature this layer does not offer.
pub(super) fn unsupported(feature: &str) -> Diagnostic {
    Diagnostic::error(
        format!("{feature} not supported"),
        format!("This provider does not implement {feature}."),
    )
}

/// Responses that carry diagnostics (and otherwise default to empty): the answer of every RPC for a feature this
/// layer does not offer, and of the others when they fail.
pub(super) trait WithDiagnostics: Default {
    fn set_diagnostics(&mut self, diagnostics: Vec<pb::Diagnostic>);
}

macro_rules! with_diagnostics {
    ($($ty:ty),* $(,)?) => {
        $(impl WithDiagnostics for $ty {
            fn set_diagnostics(&mut self, diagnostics: Vec<pb::Diagnostic>) {
                self.diagnostics = diagnostics;
            }
        })*
    };
}

with_diagnostics!(
    pb::validate_provider_config::Response,
    pb::validate_resource_config::Response,
    pb::validate_data_resource_config::Response,
    pb::upgrade_resource_state::Response,
    pb::configure_provider::Response,
    pb::read_resource::Response,
    pb::plan_resource_change::Response,
    pb::apply_resource_change::Response,
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
pub(super) fn only<T: WithDiagnostics>(diagnostics: Vec<pb::Diagnostic>) -> T {
    let mut resp = T::default();
    resp.set_diagnostics(diagnostics);
    resp
}
