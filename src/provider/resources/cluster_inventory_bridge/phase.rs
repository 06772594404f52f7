//! The phase detector: tells Terraform's first plan of a bridge from the plan it makes again right before apply
//! (the protocol does not say which is which), from what this provider process saw of the bridge. Terraform
//! refreshes (`ReadResource`) before the first plan, in the same process; the re-plan before apply runs in the
//! process of the apply walk, without a refresh (for `apply` as for a saved plan). See
//! `crate::domain::plan::Phase`.
//!
//! The same record per bridge holds what was read ahead for its next plan ([`Pending`]).

use std::{collections::HashMap, sync::Mutex};

use crate::{domain::plan::Phase, runtime::read_ahead::OwnedAhead, tfplugin::Value};

use super::read_ahead::Pending;

/// What one provider process saw of a bridge.
#[derive(Debug, Default)]
struct Seen {
    refreshed: bool,
    planned: bool,
    /// The instance id of the state refreshed or planned last: Terraform refreshes a tainted bridge, then plans
    /// its replacement with no prior state, and plans a bridge to `-replace` with its prior state, then its
    /// replacement with none; this tells those cases from another state using the name.
    seen_instance: Option<String>,
    /// Reads started ahead for the next refresh or plan of this bridge (see `super::read_ahead`).
    pending: Pending,
    /// Its SveltosClusters, being listed since its state was upgraded, for the next refresh.
    listed: Option<OwnedAhead>,
}

/// What this provider process saw of each bridge, by name.
#[derive(Debug, Default)]
pub struct PhaseMemo(Mutex<HashMap<String, Seen>>);

impl PhaseMemo {
    fn with<T>(&self, bridge: &str, f: impl FnOnce(&mut Seen) -> T) -> T {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(m.entry(bridge.to_string()).or_default())
    }

    /// A refresh of `bridge`, whose state has instance id `instance`: the next plan of it is a first plan.
    pub fn refreshed(&self, bridge: &str, instance: Option<String>) {
        self.with(bridge, |m| {
            m.refreshed = true;
            m.planned = false;
            m.seen_instance = instance;
        });
    }

    /// A plan of `bridge` with a prior state whose instance id is `instance` (without a refresh, `-refresh=false`).
    pub fn seen(&self, bridge: &str, instance: Option<String>) {
        self.with(bridge, |m| m.seen_instance = instance);
    }

    /// The instance id of the state of `bridge` this process refreshed or planned last.
    pub fn seen_instance(&self, bridge: &str) -> Option<String> {
        self.with(bridge, |m| m.seen_instance.clone())
    }

    /// The phase of a plan of `bridge` (`existing`: it has a prior state), recorded as made: the first plan after
    /// a refresh, or of a new bridge, is [`Phase::Plan`]; any other is the re-plan before apply
    /// ([`Phase::Replan`]).
    pub fn plan_phase(&self, bridge: &str, existing: bool) -> Phase {
        self.with(bridge, |m| {
            let first = (m.refreshed || !existing) && !m.planned;
            m.planned = true;
            if first { Phase::Plan } else { Phase::Replan }
        })
    }

    /// Takes what is pending for `bridge` (nothing is left; a listing for a refresh that did not come is
    /// cancelled).
    pub fn take_pending(&self, bridge: &str) -> Pending {
        self.with(bridge, |m| {
            m.listed = None;
            std::mem::take(&mut m.pending)
        })
    }

    /// Keeps `listed` for the next refresh of `bridge`, cancelling what was listed before.
    pub fn set_listed(&self, bridge: &str, listed: OwnedAhead) {
        self.with(bridge, |m| m.listed = Some(listed));
    }

    /// Takes what is being listed for the refresh of `bridge`.
    pub fn take_listed(&self, bridge: &str) -> Option<OwnedAhead> {
        self.with(bridge, |m| m.listed.take())
    }

    /// Cancels what was read ahead for the bridge named in `state` (a state or a configuration).
    pub fn cancel_pending(&self, state: &Value) {
        if let Some(bridge) = state.get_attr("name").as_str() {
            drop(self.take_pending(bridge));
        }
    }

    /// Keeps `pending` for the next plan of `bridge`, dropping (cancelling) what was pending before.
    pub fn set_pending(&self, bridge: &str, pending: Pending) {
        self.with(bridge, |m| m.pending = pending);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_plan_after_a_refresh_is_the_plan_and_the_next_one_the_replan() {
        let memo = PhaseMemo::default();
        memo.refreshed("b", Some("i-1".into()));
        assert_eq!(memo.plan_phase("b", true), Phase::Plan);
        assert_eq!(memo.plan_phase("b", true), Phase::Replan);
        // A refresh starts over.
        memo.refreshed("b", Some("i-1".into()));
        assert_eq!(memo.plan_phase("b", true), Phase::Plan);
    }

    #[test]
    fn an_existing_bridge_planned_without_a_refresh_is_the_replan_before_apply() {
        let memo = PhaseMemo::default();
        assert_eq!(memo.plan_phase("b", true), Phase::Replan);
        assert_eq!(memo.plan_phase("b", true), Phase::Replan);
    }

    #[test]
    fn a_new_bridge_is_planned_first_then_replanned() {
        let memo = PhaseMemo::default();
        assert_eq!(memo.plan_phase("b", false), Phase::Plan);
        assert_eq!(memo.plan_phase("b", false), Phase::Replan);
    }

    #[test]
    fn bridges_are_told_apart_by_name() {
        let memo = PhaseMemo::default();
        memo.refreshed("a", Some("i-a".into()));
        assert_eq!(memo.seen_instance("a").as_deref(), Some("i-a"));
        assert_eq!(memo.seen_instance("b"), None);
        memo.seen("b", Some("i-b".into()));
        assert_eq!(memo.seen_instance("b").as_deref(), Some("i-b"));
        assert_eq!(memo.plan_phase("b", true), Phase::Replan);
        assert_eq!(memo.plan_phase("a", true), Phase::Plan);
    }

    #[test]
    fn what_is_pending_is_taken_once() {
        let memo = PhaseMemo::default();
        memo.set_pending(
            "b",
            Pending {
                refreshed: Some(super::super::read_ahead::Refreshed {
                    private_sha256: "x".into(),
                    ledger: None,
                    observed: Default::default(),
                }),
                inventory: None,
            },
        );
        assert!(memo.take_pending("b").refreshed.is_some());
        assert!(memo.take_pending("b").refreshed.is_none());
    }
}
