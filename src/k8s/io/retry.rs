//! The one retry policy of every request to the API server: [`with_retry`].
//!
//! Clients made by [`client`](super::client) have kube's own retry layer turned off, so this is the only one.
//!
//! * Retried: HTTP 429 and 5xx answers, transport errors (connection refused or reset, TLS or HTTP failures
//!   while an API server restarts) and attempts that take longer than [`ATTEMPT_TIMEOUT`]. Anything else
//!   (400, 403, 404, 409, 422, ...) fails at once.
//! * At most [`MAX_ATTEMPTS`] (6) HTTP requests per operation (one LIST, one page of a paginated LIST, one GET,
//!   one apply, one delete): the first and up to 5 retries.
//! * Before retry *n* the call sleeps a random time in `[d/2, d]` with `d = 250 ms × 2^(n-1)`, capped at
//!   4 s (exponential backoff with jitter: at most 7.75 s of sleeping in all). A 429 that carries
//!   `retryAfterSeconds` is not retried sooner than that.
//! * No retry starts later than [`RETRY_WINDOW`] (15 s) after the first attempt began, and each attempt is
//!   abandoned after [`ATTEMPT_TIMEOUT`] (30 s). So an operation ends within [`OPERATION_BOUND`] (45 s);
//!   against a server that answers every request with 503 at once, within about 8 s.

use std::{
    future::Future,
    hash::{BuildHasher, Hasher},
    time::Duration,
};

use tokio::time::Instant;

use super::error::{IoCause, IoError, status};

/// Most HTTP requests one operation makes: the first attempt and up to 5 retries.
pub const MAX_ATTEMPTS: u32 = 6;
/// Longest one attempt may take (connecting, credential plugins, the server's answer and its body).
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(30);
/// No retry starts later than this after the operation's first attempt began.
pub const RETRY_WINDOW: Duration = Duration::from_secs(15);
/// Upper bound on the duration of one operation, retries included: [`RETRY_WINDOW`] + [`ATTEMPT_TIMEOUT`].
pub const OPERATION_BOUND: Duration = Duration::from_secs(45);
/// Backoff before the first retry (upper end of its jitter range).
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// Largest backoff between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(4);

/// Whether a failure is transient: HTTP 429 and 5xx, transport errors.
fn is_retryable(err: &kube::Error) -> bool {
    match err {
        kube::Error::Api(s) => s.code == 429 || s.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// The sleep before retry `retry` (1-based): uniformly random in `[d/2, d]`, `d` doubling from
/// [`FIRST_BACKOFF`] up to [`MAX_BACKOFF`].
fn backoff(retry: u32, random: u64) -> Duration {
    let ceiling = FIRST_BACKOFF
        .saturating_mul(1u32 << retry.saturating_sub(1).min(16))
        .min(MAX_BACKOFF);
    let half = ceiling / 2;
    let span = u64::try_from(half.as_micros()).unwrap_or(u64::MAX);
    half + Duration::from_micros(random % span.saturating_add(1))
}

/// A random number for jitter (std's per-instance random hash keys; no cryptographic use).
fn jitter_seed() -> u64 {
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

/// The server's `retryAfterSeconds` on a 429, if any.
fn retry_after(err: &kube::Error) -> Option<Duration> {
    let s = status(err).filter(|s| s.code == 429)?;
    let secs = s.details.as_ref()?.retry_after_seconds;
    (secs > 0).then(|| Duration::from_secs(u64::from(secs)))
}

/// Runs `op`, retrying transient failures as the [module documentation](self) describes; the error names
/// `action`, `kind` and `object`.
pub async fn with_retry<T, F, Fut>(
    action: &'static str,
    kind: &str,
    object: &str,
    mut op: F,
) -> Result<T, IoError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let started = Instant::now();
    let mut attempt = 1;
    loop {
        let cause = match tokio::time::timeout(ATTEMPT_TIMEOUT, op()).await {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(e)) => IoCause::Kube(e),
            Err(_) => IoCause::Timeout(ATTEMPT_TIMEOUT),
        };
        let transient = match &cause {
            IoCause::Kube(e) => is_retryable(e),
            IoCause::Timeout(_) => true,
            IoCause::Serialize(_) | IoCause::Undecodable | IoCause::Budget | IoCause::NotServed => {
                false
            }
        };
        let mut delay = backoff(attempt, jitter_seed());
        if let IoCause::Kube(e) = &cause
            && let Some(after) = retry_after(e)
        {
            delay = delay.max(after);
        }
        let in_window = started.elapsed().saturating_add(delay) <= RETRY_WINDOW;
        if !(transient && attempt < MAX_ATTEMPTS && in_window) {
            return Err(IoError::new(
                action,
                format!("{kind} {object}"),
                kind,
                cause,
            ));
        }
        tracing::debug!(action, kind, object, attempt, ?delay, error = %cause, "retrying Kubernetes request");
        tokio::time::sleep(delay).await;
        attempt += 1;
    }
}

#[cfg(test)]
mod tests {
    use kube::core::Status;

    use super::*;

    #[test]
    fn backoff_is_exponential_jittered_and_capped() {
        let mut total_max = Duration::ZERO;
        for retry in 1..MAX_ATTEMPTS {
            let ceiling = (FIRST_BACKOFF * (1 << (retry - 1))).min(MAX_BACKOFF);
            for random in [0, 1, 12_345, u64::MAX / 3, u64::MAX] {
                let d = backoff(retry, random);
                assert!(
                    d >= ceiling / 2 && d <= ceiling,
                    "retry {retry}: {d:?} not in [{:?}, {ceiling:?}]",
                    ceiling / 2
                );
            }
            total_max += ceiling;
        }
        assert_eq!(
            total_max,
            Duration::from_millis(7750),
            "the module doc promises at most 7.75 s of sleep"
        );
        assert!(RETRY_WINDOW + ATTEMPT_TIMEOUT <= OPERATION_BOUND);
        // Distinct seeds give distinct sleeps (jitter).
        assert_ne!(backoff(3, 1), backoff(3, 400_000));
        assert_eq!(backoff(1000, 0), MAX_BACKOFF / 2);
    }

    fn api_error(code: u16) -> kube::Error {
        kube::Error::Api(Status::failure("boom", "Reason").with_code(code).boxed())
    }

    #[tokio::test]
    async fn permanent_errors_are_not_retried_and_chain_their_cause() {
        for code in [400, 403, 404, 409, 422] {
            let mut calls = 0;
            let err = with_retry("get", "Secret", "ns/name", || {
                calls += 1;
                async move { Err::<(), _>(api_error(code)) }
            })
            .await
            .unwrap_err();
            assert_eq!(calls, 1, "HTTP {code} must not be retried");
            assert_eq!(err.code, Some(code));
            assert!(err.to_string().starts_with("get Secret ns/name: "), "{err}");
            let source = std::error::Error::source(&err).expect("a source");
            assert!(source.to_string().contains("boom"), "{source}");
            assert!(matches!(err.kube_error(), Some(kube::Error::Api(s)) if s.code == code));
        }
    }

    #[tokio::test]
    async fn transient_errors_are_retried_until_success() {
        let mut calls = 0;
        let got = with_retry("list", "ClusterProfile", "in all namespaces", || {
            calls += 1;
            let n = calls;
            async move {
                match n {
                    1 => Err(api_error(503)),
                    2 => Err(api_error(429)),
                    _ => Ok(n),
                }
            }
        })
        .await
        .unwrap();
        assert_eq!(got, 3);
    }
}
