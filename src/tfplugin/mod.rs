//! A generic Terraform / OpenTofu plugin server (protocol 6) for providers written in Rust.
//!
//! This layer knows nothing about any particular provider: it speaks go-plugin + tfplugin6 over gRPC and hands the
//! provider decoded [`Value`]s. A provider implements a few small traits:
//!
//! * [`Provider`]: the provider configuration [`Schema`], `configure`, and the lists of resources and data sources;
//! * [`Resource`]: `schema`, `plan`, `apply`, `read`, optionally `validate`, `import`, `upgrade_state`;
//! * [`DataSource`]: `schema`, `read`, optionally `validate`;
//! * [`EphemeralResource`] (optional, listed by [`Provider::ephemeral_resources`]): `schema`, `open`, optionally
//!   `validate`, `renew`, `close`;
//!
//! and calls [`serve`] from `main`:
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use tfsveltos::tfplugin::{self, Provider, ServeOptions};
//! # async fn run(provider: Arc<dyn Provider>) -> Result<(), tfplugin::ServeError> {
//! tfplugin::logging::init("provider");
//! let debug = std::env::args().any(|a| a == "--debug");
//! tfplugin::serve(provider, ServeOptions::new("example/thing").debug(debug)).await
//! # }
//! ```
//!
//! What the server does for the provider:
//! * the go-plugin handshake (magic cookie, protocol negotiation, one line on stdout), a Unix socket in a private
//!   directory (loopback TCP where there are no Unix sockets), AutoMTLS with client-certificate pinning (required
//!   outside debug mode), the health / stdio / controller services, and `--debug` reattach mode;
//! * caches schemas, decodes every `DynamicValue` with the right schema (msgpack or JSON) and encodes results back,
//!   so providers never see wire formats; decode/encode problems become diagnostics with attribute paths;
//! * answers every RPC Terraform may call: unknown type names and unsupported features (functions,
//!   list resources, actions, state stores, resource identity, moves) get an empty response or an error
//!   diagnostic, never a crash;
//! * respects client capabilities: a `deferred` answer is only sent when the client allows deferral, otherwise it
//!   becomes an error diagnostic.
//! * keeps write-only attributes ([`Attribute::write_only()`], managed resources only) out of state and plan: it sets
//!   them to null in every state a resource answers with (planned, new, refreshed, imported, upgraded), whatever
//!   the resource returned, and refuses a value for one from a client without the write-only capability, which
//!   would store it.
//!
//! Null means "absent" everywhere: a plan with a null `proposed_new_state` is a destroy (passed to
//! [`Resource::plan`], which may just return it), an apply with a null `planned_state` is a delete.
//! When encoding a provider's [`Value`], attributes it left out are null, and absent list/set/map nested blocks
//! become empty collections (as Terraform requires). Helpers: [`Schema::mark_computed_unknown`] (the usual plan
//! for computed attributes), [`PlanResponse::planned`], [`UpgradeResponse::decode`].
//!
//! Modules: [`value`] (values, types, the msgpack / JSON codecs), [`schema`], [`diag`], [`path`], [`provider`]
//! (traits and request / response types), [`logging`] (hclog JSON on stderr, `TF_LOG_PROVIDER` / `TF_LOG`),
//! [`tls`] (AutoMTLS). [`start`] + [`ListenConfig`] run the same server in-process (tests, embedding).

pub mod binary;
mod convert;
pub mod diag;
pub mod docs;
pub mod logging;
pub mod path;
#[doc(hidden)]
pub mod pb;
pub mod provider;
pub mod schema;
mod serve;
mod server;
pub mod tls;
pub mod value;

pub use diag::{Diagnostic, Diagnostics, Severity};
pub use path::{AttributePath, PathStep};
pub use provider::*;
pub use schema::*;
pub use serve::{
    ListenAddr, ListenConfig, MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE, MAX_MESSAGE_SIZE,
    PROTOCOL_VERSION, RunningServer, ServeError, ServeOptions, Transport, negotiate_protocol,
    serve, start,
};
pub use value::{Fields, Number, Refinements, Sensitive, Type, Value, ValueError};
