//! Reads and writes against the API server: LISTs, server-side apply with the provider's field
//! manager, deletes, and one retry policy for all of them.
//!
//! | File | What it is |
//! |---|---|
//! | `retry.rs` | The one retry policy ([`with_retry`]) and its bounds |
//! | `error.rs` | [`IoError`]: the verb, the object, the HTTP code and the cause |
//! | `list.rs` | LISTs: of objects, one request per namespace ([`list_each`]); of metadata, paginated within a [`ReadBudget`] ([`list_metadata_each`]); of objects others may bloat, paginated within a budget, each within a cap ([`list_bounded_each`], [`list_bounded`]) |
//! | `decode.rs` | Every answer decoded depth-safe ([`decode_object`]), a LIST's item by item; the items that do not decode ([`Undecodable`]) |
//! | `get.rs` | Reads of one object by name |
//! | `discovery.rs` | Discovery: the versions of a group the server serves (and the one it prefers), the resources of one version |
//! | `server_side_apply.rs` | Server-side apply, and adoption ([`take_ownership`]) |
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

mod decode;
mod delete;
mod discovery;
mod error;
mod get;
mod list;
mod patch;
mod retry;
mod server_side_apply;
mod target;

use kube::Client;

pub use decode::{ItemCap, PAGE_SIZE, Undecodable, decode_object};
pub use delete::{Deleted, delete, delete_owned};
pub use discovery::{DISCOVERY_BYTES, group_versions, preferred_version, serves};
pub use error::{IoCause, IoError};
pub use get::{Got, get, get_by_list, get_metadata, get_metadata_opt, get_opt};
pub use list::{
    ANSWER_BYTES, OWNED_BYTES, RUN_BYTES, ReadBudget, list, list_bounded, list_bounded_each,
    list_cluster_scoped, list_each, list_metadata, list_metadata_each,
};
pub use patch::{Patched, remove_labels};
pub use retry::{ATTEMPT_TIMEOUT, MAX_ATTEMPTS, OPERATION_BOUND, RETRY_WINDOW, with_retry};
pub use server_side_apply::{server_side_apply, take_ownership};
pub use target::api;

/// The body of the answer to `request`, read to at most `cap` bytes: `None` when it is longer (the rest is not
/// read). Without a cap, the whole body. An error answer (4xx, 5xx) is the API server's Status, as
/// [`Client::request_text`] gives it.
async fn capped_text(
    client: &Client,
    request: http::Request<Vec<u8>>,
    cap: Option<usize>,
) -> Result<Option<String>, kube::Error> {
    use futures::AsyncReadExt;
    let Some(cap) = cap else {
        return client.request_text(request).await.map(Some);
    };
    let body = client.request_stream(request).await?;
    let mut bytes = Vec::new();
    Box::pin(body)
        .take(cap as u64 + 1)
        .read_to_end(&mut bytes)
        .await
        // A transport failure while reading the body: retried, as the client's own failures are.
        .map_err(|e| kube::Error::Service(Box::new(e)))?;
    if bytes.len() > cap {
        return Ok(None);
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(kube::Error::FromUtf8)
}

/// Builds the client for `config` with kube's own retry layer turned off: [`with_retry`] is the only one.
pub fn client(mut config: kube::Config) -> Result<Client, kube::Error> {
    config.default_retry = false;
    Client::try_from(config)
}
