//! `fail_on_skipped`: a run that leaves clusters out (the bridge's `skipped`) fails, once every other cluster is
//! applied and recorded. The failure is an error answered together with the new state, which Terraform saves; on
//! an existing bridge it marks nothing tainted. So that Terraform applies the bridge at every run while clusters
//! are skipped (and the apply can fail), the plan leaves `skipped` unknown then. A bridge being created is another
//! matter: Terraform marks a resource whose creation fails tainted, and replacing a bridge deregisters every
//! cluster, so its plan fails instead and nothing is applied.

use std::collections::BTreeMap;

use crate::{
    domain::plan::{LISTED, Skipped},
    tfplugin::{AttributePath, Diagnostic},
};

/// What `fail_on_skipped` makes of a plan.
pub(super) enum AtPlan {
    /// Nothing: the option is off, or no cluster is skipped.
    Open,
    /// The apply will fail after its writes: `skipped` is planned unknown, with this warning.
    FailsAfterApply(Diagnostic),
    /// A bridge being created: the plan fails with this error.
    Refused(Diagnostic),
}

/// The gate at plan: `on` is `fail_on_skipped`, `existing` whether the bridge exists (a new bridge, or the
/// replacement of one, is created by the apply).
pub(super) fn at_plan(on: bool, existing: bool, skipped: &BTreeMap<String, Skipped>) -> AtPlan {
    let skipped = &gated(skipped);
    if !on || skipped.is_empty() {
        return AtPlan::Open;
    }
    let n = skipped.len();
    let list = listing(skipped);
    if !existing {
        return AtPlan::Refused(at_option(Diagnostic::error(
            format!("{n} cluster(s) skipped on the bridge's first apply"),
            format!(
                "fail_on_skipped is set, and Terraform marks a bridge whose creation fails tainted (replacing it \
                 would deregister every cluster), so nothing was applied:\n{list}\n\n{}",
                "Fix them (or exclude them with overrides[\"<namespace>/<name>\"].skip = true), or apply once \
                 without fail_on_skipped: from then on, an apply registers every other cluster before it fails."
            ),
        )));
    }
    AtPlan::FailsAfterApply(at_option(Diagnostic::warning(
        format!("{n} cluster(s) skipped: the apply will fail once every other cluster is applied"),
        format!(
            "fail_on_skipped is set: the apply registers, updates and deregisters every other cluster as planned, \
             records them in the state, then fails naming these:\n{list}\n\n{}",
            "While a cluster is skipped, skipped is known only after apply, so every plan has a change and every \
             apply fails."
        ),
    )))
}

/// The gate at apply: the error of an apply that left clusters out (`skipped`, as it wrote them in the state).
pub(super) fn at_apply(on: bool, skipped: &BTreeMap<String, Skipped>) -> Option<Diagnostic> {
    let skipped = &gated(skipped);
    if !on || skipped.is_empty() {
        return None;
    }
    Some(at_option(Diagnostic::error(
        format!("{} cluster(s) skipped", skipped.len()),
        format!(
            "fail_on_skipped is set. Every other cluster was applied and is recorded in the state; these were left \
             out or kept as they are:\n{}\n\n{}",
            listing(skipped),
            "Fix them (or exclude them with overrides[\"<namespace>/<name>\"].skip = true) and apply again."
        ),
    )))
}

/// The skipped clusters the gate counts: every one but those the configuration chose to skip
/// ([`Skipped::chosen`]: the duplicates `duplicate_members = "register_one"` skips).
fn gated(skipped: &BTreeMap<String, Skipped>) -> BTreeMap<&String, &Skipped> {
    skipped.iter().filter(|(_, s)| !s.chosen()).collect()
}

fn at_option(d: Diagnostic) -> Diagnostic {
    d.with_attribute(AttributePath::attr("fail_on_skipped"))
}

/// One line per skipped cluster, as the plan's grouped warnings list them (the first [`LISTED`], then a count).
fn listing(skipped: &BTreeMap<&String, &Skipped>) -> String {
    let mut lines: Vec<String> = skipped
        .iter()
        .take(LISTED)
        .map(|(key, s)| {
            let state = if s.kept {
                "kept as it is"
            } else {
                "not registered"
            };
            format!("- {key} ({state}): {}", s.cause)
        })
        .collect();
    if skipped.len() > LISTED {
        lines.push(format!("- and {} more", skipped.len() - LISTED));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::plan::Cause;

    fn skipped(n: usize) -> BTreeMap<String, Skipped> {
        (0..n)
            .map(|i| {
                let s = Skipped {
                    cause: "no usable credentials".into(),
                    kept: i % 2 == 0,
                    reason: Some(Cause::Credentials("no usable credentials")),
                };
                (format!("ns/c{i:02}"), s)
            })
            .collect()
    }

    #[test]
    fn off_or_nothing_skipped_is_open() {
        assert!(matches!(at_plan(false, true, &skipped(3)), AtPlan::Open));
        assert!(matches!(at_plan(true, true, &skipped(0)), AtPlan::Open));
        assert!(at_apply(false, &skipped(3)).is_none());
        assert!(at_apply(true, &skipped(0)).is_none());
    }

    #[test]
    fn an_existing_bridge_is_applied_then_fails_a_new_one_is_refused() {
        let AtPlan::FailsAfterApply(w) = at_plan(true, true, &skipped(2)) else {
            panic!("an existing bridge is applied");
        };
        assert!(!w.is_error());
        let AtPlan::Refused(e) = at_plan(true, false, &skipped(2)) else {
            panic!("a new bridge is refused");
        };
        assert!(e.is_error());
        let e = at_apply(true, &skipped(2)).unwrap();
        assert!(e.is_error());
        assert_eq!(e.summary, "2 cluster(s) skipped");
        assert!(
            e.detail
                .contains("- ns/c00 (kept as it is): no usable credentials")
        );
        assert!(
            e.detail
                .contains("- ns/c01 (not registered): no usable credentials")
        );
    }

    #[test]
    fn duplicates_skipped_by_register_one_do_not_count() {
        let mut s = skipped(0);
        let cause = format!("{}: ns/a is registered", Cause::DuplicateMember.describe());
        let reason = Some(Cause::DuplicateMember);
        s.insert(
            "other/a".into(),
            Skipped {
                cause,
                kept: false,
                reason,
            },
        );
        // Told by the cause the plan found, not by its words: another cause worded alike counts.
        let cause = format!("{}: forged", Cause::DuplicateMember.describe());
        let reason = Some(Cause::Collision);
        s.insert(
            "other/b".into(),
            Skipped {
                cause,
                kept: false,
                reason,
            },
        );
        let e = at_apply(true, &s).unwrap();
        assert_eq!(e.summary, "1 cluster(s) skipped");
        assert!(e.detail.contains("other/b") && !e.detail.contains("other/a"));
        s.remove("other/b");
        assert!(matches!(at_plan(true, true, &s), AtPlan::Open));
        assert!(at_apply(true, &s).is_none());
        s.extend(skipped(1));
        let e = at_apply(true, &s).unwrap();
        assert_eq!(e.summary, "1 cluster(s) skipped");
        assert!(!e.detail.contains("other/a"), "{}", e.detail);
    }

    #[test]
    fn long_lists_are_cut() {
        let e = at_apply(true, &skipped(LISTED + 5)).unwrap();
        assert_eq!(e.detail.matches("\n- ns/").count(), LISTED);
        assert!(e.detail.contains("- and 5 more"));
    }
}
