//! The error every operation of [`crate::k8s::io`] returns: the verb, the object, the HTTP code and the cause.

use std::time::Duration;

use kube::core::Status;

/// An API error with the object it concerns.
#[derive(Debug, thiserror::Error)]
#[error("{action} {object}: {message}")]
pub struct IoError {
    /// What was being done (`list`, `apply`, `delete`, `get`).
    pub action: &'static str,
    /// Kind and `namespace/name` (or the collection).
    pub object: String,
    /// What went wrong, with a hint where one helps.
    pub message: String,
    /// HTTP status, when the server answered.
    pub code: Option<u16>,
    /// The underlying failure.
    #[source]
    pub source: IoCause,
}

/// What made an [`IoError`].
#[derive(Debug, thiserror::Error)]
pub enum IoCause {
    /// The client or the API server failed (the last attempt's error when retries were exhausted).
    #[error(transparent)]
    Kube(#[from] kube::Error),
    /// The object could not be serialized into a request body.
    #[error("cannot serialize the object")]
    Serialize(#[source] serde_json::Error),
    /// The last attempt got no complete answer within [`ATTEMPT_TIMEOUT`](super::ATTEMPT_TIMEOUT).
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The answer is an object that does not decode as its kind (the message names the field).
    #[error("the object does not decode")]
    Undecodable,
    /// The answers passed a read budget ([`ReadBudget`](super::ReadBudget)); the message says which.
    #[error("over the read budget")]
    Budget,
    /// The API server serves the resource in no version the provider reads; the message names them.
    #[error("no version the provider reads is served")]
    NotServed,
}

impl IoError {
    /// An error for `action` on `object` (already `Kind namespace/name`) caused by `source`.
    pub fn new(
        action: &'static str,
        object: impl Into<String>,
        kind: &str,
        source: IoCause,
    ) -> Self {
        let (message, code) = match &source {
            IoCause::Kube(e) => (describe(e, kind), status(e).map(|s| s.code)),
            IoCause::Serialize(e) => (format!("cannot serialize: {e}"), None),
            IoCause::Timeout(t) => (
                format!("no complete answer from the API server within {t:?}"),
                None,
            ),
            IoCause::Undecodable => ("the object does not decode".into(), None),
            IoCause::Budget => ("over the read budget".into(), None),
            IoCause::NotServed => ("no version the provider reads is served".into(), None),
        };
        IoError {
            action,
            object: object.into(),
            message,
            code,
            source,
        }
    }
}

impl IoError {
    /// Whether the API server does not serve the resource at all (HTTP 404 on a collection: its CRD is not
    /// installed), as opposed to a missing object.
    pub fn not_served(&self) -> bool {
        matches!(
            self.kube_error(),
            Some(kube::Error::Api(s)) if s.code == 404 && is_not_served(&s.message)
        )
    }

    /// The Kubernetes client error behind this one, if it came from the client or the API server.
    pub fn kube_error(&self) -> Option<&kube::Error> {
        match &self.source {
            IoCause::Kube(e) => Some(e),
            _ => None,
        }
    }
}

/// The Status the API server answered with, if it answered.
pub(super) fn status(err: &kube::Error) -> Option<&Status> {
    match err {
        kube::Error::Api(s) => Some(s),
        _ => None,
    }
}

/// Whether a 404's message says the API server serves no such resource (rather than no such object): its answer
/// for a resource of a group it serves, or the plain `404 page not found` for a group it does not serve at all.
fn is_not_served(message: &str) -> bool {
    message.contains("the server could not find the requested resource")
        || message.trim() == "404 page not found"
}

/// What went wrong, in words, with a hint where one helps (a CRD not installed, access not granted).
fn describe(err: &kube::Error, kind: &str) -> String {
    match err {
        kube::Error::Api(s) if s.code == 404 && is_not_served(&s.message) => {
            format!("the {kind} API is not served by this cluster: install its CRD (HTTP 404)")
        }
        kube::Error::Api(s) if s.code == 403 => format!(
            "forbidden (HTTP 403): {}. Grant the provider's identity access to {kind} objects.",
            s.message
        ),
        kube::Error::Api(s) => format!("{} (HTTP {}, reason {})", s.message, s.code, s.reason),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use kube::core::Status;

    use super::*;

    fn error(code: u16, message: &str, reason: &str) -> IoError {
        let e = kube::Error::Api(Status::failure(message, reason).with_code(code).boxed());
        IoError::new(
            "list",
            "ClusterSummary in namespace ns",
            "ClusterSummary",
            IoCause::Kube(e),
        )
    }

    #[test]
    fn a_resource_or_a_group_not_served_is_told_from_a_missing_object() {
        // A group the API server serves without that resource, and a group it does not serve at all (kube gets a
        // plain-text body it cannot parse as a Status).
        for (message, reason) in [
            (
                "the server could not find the requested resource",
                "NotFound",
            ),
            ("404 page not found\n", "Failed to parse error data"),
        ] {
            let e = error(404, message, reason);
            assert!(e.not_served(), "{message}");
            assert!(e.message.contains("API is not served"), "{}", e.message);
        }
        assert!(!error(404, "clustersummaries \"x\" not found", "NotFound").not_served());
        assert!(!error(403, "forbidden", "Forbidden").not_served());
    }
}
