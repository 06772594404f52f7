//! Who may use a bridge name: the check of its claim ([`Claim`]) that plan and apply make ([`check`]), and the
//! takeover rule ([`claimant`]) that the check and destroy's release of the claim share.

use super::ownership::{Claim, ClaimConflict, check_claim};

/// Who checks the claim: this state's instance id (`None`: a new resource, or a state older than claims), whether
/// the state has the bridge, the instance id of this bridge's state this process saw last (refreshed or planned:
/// Terraform refreshes a bridge, then plans its replacement with no prior state), and whether Terraform plans
/// this resource as the replacement of an existing one (`-replace`, `replace_triggered_by`: it then passes the
/// private data of the plan of the object it replaces; a replacement of a tainted object gets none). An imported
/// state takes over the claim of the instance its import found (`takes_over`), and only that one ([`claimant`]).
#[derive(Debug, Clone, Default)]
pub struct Checker<'a> {
    /// This state's instance id.
    pub instance: Option<&'a str>,
    /// After an import, until this state's first apply: the instance whose claim it takes over.
    pub takes_over: Option<&'a str>,
    /// The state has the bridge.
    pub existing: bool,
    /// The instance id of this bridge's state this process saw last.
    pub seen: Option<String>,
    /// Terraform plans this resource as the replacement of an existing one.
    pub replacement: bool,
}

/// What a claim check found.
#[derive(Debug)]
pub struct Checked {
    /// The claim, if the name has one.
    pub claim: Option<Claim>,
    /// The claim is this state's own bridge, which this plan replaces (`-replace`): destroyed first, it releases
    /// the claim and removes its clusters, and the replacement registers them again.
    pub replaces_own: bool,
}

/// Why a state may not use a bridge name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimRefusal {
    /// This state's own bridge (seen by this process), planned again with no prior state and not as a
    /// replacement: Terraform marked it tainted and would replace it without the record of what it owns.
    /// `failed_first`: its last run may be a first apply that failed (Terraform taints those).
    #[error("{conflict}: this state's own bridge, marked tainted")]
    Tainted {
        /// The claim, held by this state's own bridge.
        conflict: ClaimConflict,
        /// Its last run may be a first apply that failed.
        failed_first: bool,
    },
    /// Another instance holds the name: another state's bridge, or the bridge this resource replaces with
    /// `create_before_destroy` (not destroyed yet; the two cannot be told apart then).
    #[error(transparent)]
    UsedByAnother(ClaimConflict),
}

/// The instance that speaks for a state at a claim held by `held`: the instance its import found (`takes_over`)
/// while the claim still holds it, else the state's own (`own`; `None` for a new resource or a state older than
/// claims).
pub fn claimant<'a>(
    held: &str,
    own: Option<&'a str>,
    takes_over: Option<&'a str>,
) -> Option<&'a str> {
    match takes_over {
        Some(from) if from == held => Some(from),
        _ => own,
    }
}

/// Checks that `who` may use the name of `bridge`, whose claim (`claim_id`, `namespace/name`) is `claim` as read:
/// a state written before claims existed takes it over, and so does a new resource whose own first apply died
/// ([`Claim::abandoned`] at `now`, `alive` answering for the run's holder).
pub fn check(
    bridge: &str,
    claim_id: &str,
    claim: Option<Claim>,
    who: &Checker<'_>,
    (now, alive): (jiff::Timestamp, impl Fn(&str) -> Option<bool>),
) -> Result<Checked, ClaimRefusal> {
    let legacy = who.existing && who.instance.is_none();
    let abandoned = !who.existing && claim.as_ref().is_some_and(|c| c.abandoned(now, alive));
    let instance = match &claim {
        Some(c) => claimant(&c.instance, who.instance, who.takes_over),
        None => who.instance,
    };
    let conflict = check_claim(
        bridge,
        claim_id,
        instance,
        legacy,
        claim.as_ref(),
        abandoned,
    );
    let replaces_own = match conflict {
        Ok(()) => false,
        // This state's own bridge, seen in this plan, planned again with no prior state.
        Err(e) if who.instance.is_none() && who.seen.as_deref() == Some(e.other.as_str()) => {
            if !who.replacement {
                let run = claim.as_ref().and_then(|c| c.run.as_ref());
                let failed_first = run.is_some_and(|r| r.may_have_failed_first());
                return Err(ClaimRefusal::Tainted {
                    conflict: e,
                    failed_first,
                });
            }
            true
        }
        Err(e) => return Err(ClaimRefusal::UsedByAnother(e)),
    };
    Ok(Checked {
        claim,
        replaces_own,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ownership::Run;

    fn now() -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_800_000_000).unwrap()
    }

    fn alive(_: &str) -> Option<bool> {
        Some(true)
    }

    fn claim_of(instance: &str, first: bool, failed: Option<bool>) -> Claim {
        let mut c = Claim::new(instance.into(), None);
        c.run = Some(Run {
            holder: "h:1".into(),
            started: "2027-01-15T08:00:00Z".into(),
            until: "2027-01-15T09:00:00Z".into(),
            done: true,
            first,
            failed,
        });
        c
    }

    fn checked(claim: Option<Claim>, who: &Checker<'_>) -> Result<Checked, ClaimRefusal> {
        check("b", "default/sveltos-bridge-b", claim, who, (now(), alive))
    }

    #[test]
    fn an_import_speaks_for_the_instance_it_found_while_the_claim_holds_it() {
        assert_eq!(
            claimant("i-old", Some("i-new"), Some("i-old")),
            Some("i-old")
        );
        // Once this state's apply took the claim over, its own instance holds it.
        assert_eq!(
            claimant("i-new", Some("i-new"), Some("i-old")),
            Some("i-new")
        );
        assert_eq!(
            claimant("i-other", Some("i-new"), Some("i-old")),
            Some("i-new")
        );
        assert_eq!(claimant("i-1", None, None), None);
        let who = Checker {
            instance: Some("i-new"),
            takes_over: Some("i-old"),
            existing: true,
            ..Default::default()
        };
        assert!(checked(Some(claim_of("i-old", false, Some(false))), &who).is_ok());
        let refused = checked(Some(claim_of("i-third", false, Some(false))), &who);
        assert!(matches!(refused, Err(ClaimRefusal::UsedByAnother(_))));
    }

    #[test]
    fn this_states_own_bridge_planned_without_a_prior_state_is_tainted_unless_replaced() {
        let mut who = Checker {
            seen: Some("i-1".into()),
            ..Default::default()
        };
        let refused = checked(Some(claim_of("i-1", true, Some(true))), &who).unwrap_err();
        assert!(matches!(
            refused,
            ClaimRefusal::Tainted {
                failed_first: true,
                ..
            }
        ));
        let refused = checked(Some(claim_of("i-1", false, Some(false))), &who).unwrap_err();
        assert!(matches!(
            refused,
            ClaimRefusal::Tainted {
                failed_first: false,
                ..
            }
        ));
        who.replacement = true;
        let c = checked(Some(claim_of("i-1", false, Some(false))), &who).unwrap();
        assert!(c.replaces_own && c.claim.is_some());
        // Another state's claim is never this state's own.
        who.seen = Some("i-2".into());
        let refused = checked(Some(claim_of("i-1", false, Some(false))), &who);
        assert!(matches!(refused, Err(ClaimRefusal::UsedByAnother(_))));
    }

    #[test]
    fn a_legacy_state_or_a_new_resource_after_a_dead_first_apply_takes_the_claim() {
        let legacy = Checker {
            existing: true,
            ..Default::default()
        };
        assert!(checked(Some(claim_of("i-1", false, Some(false))), &legacy).is_ok());
        let new = Checker::default();
        let mut dead = claim_of("i-1", true, None);
        dead.run.as_mut().unwrap().done = false;
        dead.run.as_mut().unwrap().until = "2027-01-15T07:30:00Z".into();
        assert!(checked(Some(dead.clone()), &new).is_ok());
        dead.run.as_mut().unwrap().until = "2099-01-01T00:00:00Z".into();
        assert!(checked(Some(dead), &new).is_err(), "its run is alive");
        let c = checked(None, &new).unwrap();
        assert!(!c.replaces_own && c.claim.is_none());
    }
}
