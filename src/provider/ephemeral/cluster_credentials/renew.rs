//! When to renew an exec credential.

use std::time::{Duration, SystemTime};

/// When to renew a credential expiring at `expires_at`: `refresh_before` ahead of it, or halfway to it when that
/// moment has passed already. `None`: no expiry, or already expired (nothing to renew).
pub fn renew_at(
    expires_at: Option<&str>,
    refresh_before: Duration,
    now: SystemTime,
) -> Option<SystemTime> {
    let expiry = SystemTime::from(expires_at?.parse::<jiff::Timestamp>().ok()?);
    let left = expiry.duration_since(now).ok().filter(|d| !d.is_zero())?;
    Some(match left.checked_sub(refresh_before) {
        Some(wait) if !wait.is_zero() => now + wait,
        _ => now + left / 2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renew_at_is_refresh_before_ahead_of_expiry_or_halfway() {
        let now = SystemTime::from("2030-01-01T00:00:00Z".parse::<jiff::Timestamp>().unwrap());
        let min = |m: u64| Duration::from_secs(60 * m);
        assert_eq!(
            renew_at(Some("2030-01-01T01:00:00Z"), min(10), now),
            Some(now + min(50))
        );
        // Already inside refresh_before: halfway to expiry, never in the past.
        assert_eq!(
            renew_at(Some("2030-01-01T00:04:00Z"), min(10), now),
            Some(now + min(2))
        );
        assert_eq!(renew_at(Some("2029-12-31T23:00:00Z"), min(10), now), None);
        assert_eq!(renew_at(None, min(10), now), None);
        assert_eq!(renew_at(Some("soon"), min(10), now), None);
    }
}
