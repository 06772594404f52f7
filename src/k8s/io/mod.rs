//! Reads and writes against the API server: LISTs, server-side apply with the provider's field
//! manager, deletes, and one retry policy for all of them.
//!
//! | File | What it is |
//! |---|---|
//! | `retry.rs` | The one retry policy ([`with_retry`]) and its bounds |
//! | `error.rs` | [`IoError`]: the verb, the object, the HTTP code and the cause |
//! | `list.rs` | LISTs, of objects or metadata, paginated ([`paginate`]) or one request per namespace ([`list_each`]) |
//! | `decode.rs` | A LIST answer decoded item by item; the items that do not decode ([`Undecodable`]) |
//! | `get.rs` | Reads of one object by name |
//! | `apply.rs` | Server-side apply, and adoption ([`take_ownership`]) |
//! | `delete.rs` | Deletes, with the owner's UID as a precondition ([`delete_owned`]) |
//! | `patch.rs` | Labels removed by a merge patch guarded by the owner's UID ([`remove_labels`]) |
//! | `target.rs` | Where an object lives: its [`api`] and the names its errors give it |
//!
//! # Retries
//!
//! There is exactly one retry layer: [`with_retry`]. Clients made by [`client`] have kube's own retry layer
//! turned off (it would otherwise retry 429/503/504 up to 15 times *inside* each of our attempts). What is
//! retried, how often and for how long: `retry.rs`.
//!
//! When the retries are exhausted the [`IoError`] names the verb, the kind and `namespace/name` (or the
//! collection), keeps the HTTP code, and chains the cause ([`IoCause`]).

mod apply;
mod decode;
mod delete;
mod error;
mod get;
mod list;
mod patch;
mod retry;
mod target;

use kube::Client;

pub use apply::{apply, take_ownership};
pub use decode::Undecodable;
pub use delete::{Deleted, delete, delete_owned};
pub use error::{IoCause, IoError};
pub use get::{get_by_list, get_metadata_opt, get_opt};
pub use list::{
    PAGE_SIZE, list, list_cluster_scoped, list_each, list_metadata, list_metadata_each,
    list_tolerant, paginate,
};
pub use patch::{Patched, remove_labels};
pub use retry::{ATTEMPT_TIMEOUT, MAX_ATTEMPTS, OPERATION_BOUND, RETRY_WINDOW, with_retry};
pub use target::api;

/// Builds the client for `config` with kube's own retry layer turned off: [`with_retry`] is the only one.
pub fn client(mut config: kube::Config) -> Result<Client, kube::Error> {
    config.default_retry = false;
    Client::try_from(config)
}
