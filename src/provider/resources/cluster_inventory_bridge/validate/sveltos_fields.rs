//! The checks of the settings that go into a SveltosCluster's spec beyond the kubeconfig (`data`,
//! `readiness_checks`, `liveness_checks`), and of `wait_for_ready`'s `ready_timeout`.

use super::Report;
use crate::{
    domain::{DEFAULT_READY_TIMEOUT, duration::parse_duration},
    provider::resources::cluster_inventory_bridge::model::BridgeConfig,
    tfplugin::AttributePath,
};

impl BridgeConfig {
    /// `wait_for_ready` with its `ready_timeout` (longer than 0): how long apply waits, `None` without the wait.
    pub(super) fn parse_ready_wait(&self, err: &mut impl Report) -> Option<std::time::Duration> {
        let timeout = match self.ready_timeout.as_deref().map(parse_duration) {
            None => DEFAULT_READY_TIMEOUT,
            Some(Ok(d)) if !d.is_zero() => d,
            Some(Ok(_)) => {
                err(
                    AttributePath::attr("ready_timeout"),
                    "Invalid ready_timeout",
                    "ready_timeout must be longer than 0.".into(),
                );
                DEFAULT_READY_TIMEOUT
            }
            Some(Err(e)) => {
                err(
                    AttributePath::attr("ready_timeout"),
                    "Invalid ready_timeout",
                    e.to_string(),
                );
                DEFAULT_READY_TIMEOUT
            }
        };
        self.wait_for_ready.unwrap_or(false).then_some(timeout)
    }
}
