//! What apply writes and deletes to turn what exists into a plan made for apply.

use k8s_openapi::api::core::v1::Secret;

use super::Plan;
use crate::api::SveltosCluster;
use crate::domain::{
    desired::{DesiredCluster, Packed},
    exec::ExecInvocation,
    observed::{BridgedObjects, Observed, ObservedCluster},
};

/// A write apply has to make for one cluster. `Debug` never shows the Secret's data.
#[derive(Clone)]
pub struct Write {
    /// Profile key.
    pub key: String,
    /// Secret to apply first (`None`: keep it, or mint at apply when the key is in [`Plan::exec`]).
    pub secret: Option<Secret>,
    /// SveltosCluster to apply after the Secret (`None`: up to date).
    pub sveltos_cluster: Option<SveltosCluster>,
    /// Mint the credential with this exec run, then apply its Secret.
    pub exec: Option<ExecInvocation>,
    /// The SveltosCluster exists and is adopted (not created by this bridge): clear others' field ownership first,
    /// so that what the bridge later stops setting is really removed.
    pub adopt_sveltos_cluster: bool,
    /// Likewise for the Secret.
    pub adopt_secret: bool,
    /// The profile is unhealthy and the SveltosCluster is paused (`unhealthy = "pause"`).
    pub health_pause: bool,
    /// Labels others added under `copy_labels.exclude` that apply removes from the SveltosCluster after writing
    /// it (`copy_labels.remove_foreign`), guarded by its UID.
    pub remove_labels: Vec<String>,
    /// The objects to write, still packed (from a plan made with [`Inputs::pack`](super::Inputs::pack)): `secret`
    /// and `sveltos_cluster` are then `None` until [`Write::unpack`].
    pub packed: Option<Box<Packed>>,
}

impl Write {
    /// This write with its objects unpacked, when they are packed: what [`take_actions`] would have given for a plan
    /// holding them built (the fields Sveltos took over on renewal left out of the SveltosCluster).
    pub fn unpack(mut self, observed: &Observed) -> Write {
        match self.packed.take() {
            Some(p) => attach(self, p.unpack(), observed),
            None => self,
        }
    }
}

impl std::fmt::Debug for Write {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Write")
            .field("key", &self.key)
            .field(
                "secret",
                &crate::domain::desired::SecretName(self.secret.as_ref()),
            )
            .field("sveltos_cluster", &self.sveltos_cluster)
            .field("exec", &self.exec)
            .field("adopt_sveltos_cluster", &self.adopt_sveltos_cluster)
            .field("adopt_secret", &self.adopt_secret)
            .field("health_pause", &self.health_pause)
            .field("remove_labels", &self.remove_labels)
            .field("packed", &self.packed)
            .finish()
    }
}

/// A delete apply has to make for one cluster (SveltosCluster first, then Secret).
#[derive(Debug, Clone)]
pub struct Delete {
    /// Profile key.
    pub key: String,
    /// `(namespace, name)` of the SveltosCluster, if it exists.
    pub sveltos_cluster: Option<(String, String)>,
    /// `(namespace, name)` of the Secret, if it exists.
    pub secret: Option<(String, String)>,
}

fn split(id: &str) -> (String, String) {
    let (ns, name) = id.split_once('/').unwrap_or(("", id));
    (ns.to_string(), name.to_string())
}

/// What apply must do to turn `observed` into `plan`: only objects that differ are written, only owned objects
/// that are no longer wanted are deleted. The writes carry copies of the plan's objects (see [`take_actions`]),
/// still packed when the plan holds them packed ([`Write::unpack`]).
///
/// `plan` is a plan made for apply ([`Phase::Apply`](super::Phase::Apply)); a plan made in another phase has no objects to write, and
/// passing one is a bug (this panics).
pub fn actions(plan: &Plan, observed: &Observed) -> (Vec<Write>, Vec<Delete>) {
    made_for_apply(plan);
    let writes = plan
        .desired
        .iter()
        .filter_map(|(key, d)| {
            let (mut shape, secret, stale) = shape(plan, key, d, observed)?;
            if d.packed.is_some() {
                shape.packed = d.packed.clone();
                return Some(shape);
            }
            let objects = (
                d.secret.as_deref().filter(|_| secret).cloned(),
                d.sveltos_cluster.as_deref().filter(|_| stale).cloned(),
            );
            Some(attach(shape, objects, observed))
        })
        .collect();
    (writes, deletes(plan, observed))
}

/// [`actions`], with the objects of the clusters written moved out of `plan` rather than copied (each cluster's
/// entry stays): apply holds one copy of what it writes, and each write's objects are freed once it is made (about
/// 5.5 KB a cluster: 55 MB at ten thousand clusters). The plan's objects are not needed after its actions.
pub fn take_actions(plan: &mut Plan, observed: &Observed) -> (Vec<Write>, Vec<Delete>) {
    made_for_apply(plan);
    let shapes: Vec<(Write, bool, bool)> = plan
        .desired
        .iter()
        .filter_map(|(key, d)| shape(plan, key, d, observed))
        .collect();
    let deletes = deletes(plan, observed);
    let writes = shapes
        .into_iter()
        .map(|(mut shape, secret, stale)| {
            let mut d = plan.desired.get_mut(&shape.key);
            if let Some(packed) = d.as_mut().and_then(|d| d.packed.take()) {
                // Unpacked by the write itself ([`Write::unpack`]), one at a time.
                shape.packed = Some(packed);
                return shape;
            }
            let objects = d.map_or((None, None), |d| {
                let secret = if secret { d.secret.take() } else { None };
                let sc = if stale {
                    d.sveltos_cluster.take()
                } else {
                    None
                };
                let (secret, sc) = (secret.map(|s| *s), sc.map(|s| *s));
                (secret, sc)
            });
            attach(shape, objects, observed)
        })
        .collect();
    (writes, deletes)
}

fn made_for_apply(plan: &Plan) {
    assert!(
        plan.for_apply,
        "actions() needs a plan made for apply (Phase::Apply)"
    );
}

/// The write of cluster `key` without its objects, whether its Secret is written and whether its SveltosCluster is
/// stale; `None`: nothing to write.
fn shape(
    plan: &Plan,
    key: &str,
    d: &DesiredCluster,
    observed: &Observed,
) -> Option<(Write, bool, bool)> {
    // A cluster without objects was found up to date when planned (see `plan`), against this same `observed`:
    // `actions` is only ever given what was observed when its plan was made. Packed objects are only those that
    // differ (what `differs` found when they were packed).
    let current = observed.owned.get(key).map(|b| &**b);
    let cur_sc = current.and_then(|c| c.sveltos_cluster.as_ref());
    let exec = plan.exec.get(key).cloned();
    let (secret, sc_stale) = match &d.packed {
        Some(p) => (p.has_secret(), p.has_sveltos_cluster()),
        None => {
            d.sveltos_cluster.as_ref()?;
            let (secret, sc_stale) = differs(d, current, exec.is_some())?;
            (secret.is_some(), sc_stale)
        }
    };
    let write = Write {
        key: key.to_string(),
        secret: None,
        sveltos_cluster: None,
        exec,
        adopt_sveltos_cluster: observed.foreign_clusters.contains_key(key),
        adopt_secret: d
            .entry
            .secret
            .as_ref()
            .is_some_and(|s| observed.foreign_secrets.contains_key(s)),
        health_pause: plan.health_paused.contains(key),
        remove_labels: cur_sc.map(|s| removable(s, d)).unwrap_or_default(),
        packed: None,
    };
    Some((write, secret, sc_stale))
}

/// `write` with its objects: the Secret to write, and the SveltosCluster when it is stale (the fields Sveltos took
/// over on renewal left out of it).
fn attach(
    mut write: Write,
    (secret, sc): (Option<Secret>, Option<SveltosCluster>),
    observed: &Observed,
) -> Write {
    let cur_sc = observed
        .owned
        .get(&write.key)
        .and_then(|c| c.sveltos_cluster.as_ref());
    let rewrite_source = secret.is_some() || write.exec.is_some();
    write.sveltos_cluster = sc.map(|mut sc| {
        if sc.spec.token_request_renewal_option.is_some()
            && let Some(cur) = cur_sc
        {
            leave_renewal_to_sveltos(&mut sc, cur, rewrite_source);
        }
        sc
    });
    write.secret = secret;
    write
}

/// The owned clusters `plan` neither bridges nor keeps.
fn deletes(plan: &Plan, observed: &Observed) -> Vec<Delete> {
    observed
        .owned
        .iter()
        .filter(|(k, _)| !plan.desired.contains_key(*k) && !plan.kept.contains_key(*k))
        .map(|(k, o)| Delete {
            key: k.clone(),
            sveltos_cluster: o.sveltos_cluster.as_ref().map(|s| split(&s.id)),
            secret: o.secret.as_ref().map(|s| split(&s.id)),
        })
        .collect()
}

/// What of `d` (a cluster built with its objects) differs from `current`, what exists and the bridge owns:
/// `None` when nothing does; otherwise the Secret to write (if it differs) and whether the SveltosCluster is
/// stale. `mint`: the credential is minted at apply (its Secret is then written whatever exists).
pub(super) fn differs<'a>(
    d: &'a DesiredCluster,
    current: Option<&BridgedObjects>,
    mint: bool,
) -> Option<(Option<&'a Secret>, bool)> {
    let desired_sc = d.sveltos_cluster.as_ref()?;
    let renewed = desired_sc.spec.token_request_renewal_option.is_some();
    let cur_secret = current.and_then(|c| c.secret.as_ref());
    let cur_sc = current.and_then(|c| c.sveltos_cluster.as_ref());
    let secret = d.secret.as_ref().filter(|_| {
        cur_secret.is_none_or(|s| {
            s.sha(renewed).cloned() != d.entry.kubeconfig_sha256
                || s.credential_source.as_deref() != Some(d.entry.credential_source.as_str())
                || s.expiry(renewed).cloned() != d.entry.credential_expires_at
        })
    });
    let record = desired_sc
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(crate::domain::BRIDGE_CONFIG_ANNOTATION));
    let sc_stale = cur_sc.is_none_or(|s| {
        s.labels != d.entry.labels
            || s.config_sha256 != d.entry.config_sha256
            || s.record.as_ref() != record
            || !removable(s, d).is_empty()
    });
    // Sveltos renews this cluster's credentials: a rotated source credential is written and the SveltosCluster
    // pointed back at it; otherwise what Sveltos took over on renewal is left to it.
    let rewrite_source = secret.is_some() || mint;
    let sc_stale = sc_stale || (renewed && rewrite_source && cur_sc.is_some());
    (secret.is_some() || mint || sc_stale).then_some((secret.map(|s| &**s), sc_stale))
}

/// The labels apply removes from SveltosCluster `cur` (see [`Write::remove_labels`]): those marked removable that
/// the bridge does not write itself (a label it writes and someone took over is written back instead).
fn removable(cur: &ObservedCluster, d: &DesiredCluster) -> Vec<String> {
    cur.removable_labels
        .iter()
        .filter(|k| !d.entry.labels.contains_key(*k))
        .cloned()
        .collect()
}

/// For a SveltosCluster whose credentials Sveltos renews: leaves out of the apply body the fields
/// sveltoscluster-manager has taken over by its own updates on renewal (`spec.kubeconfigKeyName`, the renewal
/// interval), so the bridge never reverts them; unless the source credential is rewritten (the SveltosCluster then
/// points at it again) or the renewal settings themselves changed.
fn leave_renewal_to_sveltos(sc: &mut SveltosCluster, cur: &ObservedCluster, rewrite_source: bool) {
    let wanted = sc
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(crate::domain::TOKEN_RENEWAL_ANNOTATION));
    let settings_changed = cur.renewal.as_ref() != wanted;
    if !rewrite_source && !cur.owned_spec.contains("kubeconfigKeyName") {
        sc.spec.kubeconfig_key_name = None;
    }
    if !settings_changed
        && !cur.owned_renewal.contains("renewTokenRequestInterval")
        && let Some(o) = sc.spec.token_request_renewal_option.as_mut()
    {
        o.renew_token_request_interval = String::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::plan::Phase;
    use crate::domain::plan::fixture::*;

    /// At apply, only the clusters that differ from what exists hold their objects (at ten thousand clusters and
    /// 1 % of changes, a hundred clusters' objects instead of ten thousand); the others keep their entries.
    #[test]
    fn a_plan_for_apply_holds_only_the_objects_it_writes() {
        let f = Fixture::new();
        let observed = observed_after(&f.run(), "main");
        let mut f2 = Fixture::new();
        f2.observed = observed.clone();
        let unchanged = f2.run();
        assert!(
            unchanged
                .desired
                .values()
                .all(|d| d.sveltos_cluster.is_none() && d.secret.is_none())
        );
        assert_eq!(unchanged.entries(), f.run().entries());
        assert!(actions(&unchanged, &observed).0.is_empty());
        f2.set_label(0, "env", "staging");
        let changed = f2.run();
        let key = f2.profiles[0].key();
        for (k, d) in &changed.desired {
            assert_eq!(d.sveltos_cluster.is_some(), *k == key, "{k}");
        }
        let (writes, _) = actions(&changed, &observed);
        assert_eq!(
            writes.iter().map(|w| w.key.as_str()).collect::<Vec<_>>(),
            [key.as_str()]
        );
    }

    /// `take_actions` makes the same writes and deletes as `actions`, moving the objects it writes out of the plan
    /// (apply then holds one copy of them) and leaving every entry and every object it does not write.
    #[test]
    fn take_actions_moves_the_objects_written_out_of_the_plan() {
        let f = Fixture::new();
        let observed = observed_after(&f.run(), "main");
        let mut f2 = Fixture::new();
        f2.observed = observed.clone();
        f2.set_label(0, "env", "staging");
        f2.phase = Phase::Plan;
        let entries = f2.run().entries();
        f2.phase = Phase::Apply;
        let mut plan = f2.run();
        let written = f2.profiles[0].key();
        // A cluster planned with objects that are not written (up to date) keeps them.
        let kept = f2.profiles[1].key();
        let with_objects = f.run().desired[&kept].clone();
        assert!(with_objects.sveltos_cluster.is_some() && with_objects.secret.is_some());
        plan.desired.insert(kept.clone(), with_objects);
        let (copied, copied_deletes) = actions(&plan, &observed);
        let (taken, deletes) = take_actions(&mut plan, &observed);
        assert_eq!(format!("{taken:?}"), format!("{copied:?}"));
        assert_eq!(format!("{deletes:?}"), format!("{copied_deletes:?}"));
        assert_eq!(
            taken
                .iter()
                .map(|w| w.secret.as_ref().map(|s| &s.data))
                .collect::<Vec<_>>(),
            copied
                .iter()
                .map(|w| w.secret.as_ref().map(|s| &s.data))
                .collect::<Vec<_>>()
        );
        // A relabelled cluster: its SveltosCluster is written (taken), its Secret is not (kept).
        assert!(taken[0].sveltos_cluster.is_some() && taken[0].secret.is_none());
        let d = &plan.desired[&written];
        assert!(d.sveltos_cluster.is_none() && d.secret.is_some(), "{d:?}");
        let d = &plan.desired[&kept];
        assert!(d.sveltos_cluster.is_some() && d.secret.is_some(), "{d:?}");
        assert_eq!(plan.entries(), entries);
    }

    #[test]
    #[should_panic(expected = "needs a plan made for apply")]
    fn actions_refuse_a_plan_not_made_for_apply() {
        let mut f = Fixture::new();
        f.phase = Phase::Plan;
        let _ = actions(&f.run(), &Observed::default());
    }

    #[test]
    fn apply_then_plan_converges_with_no_writes() {
        let f = Fixture::new();
        let p = f.run();
        let (writes, deletes) = actions(&p, &Observed::default());
        assert_eq!((writes.len(), deletes.len()), (2, 0));
        assert!(
            writes
                .iter()
                .all(|w| w.secret.is_some() && w.sveltos_cluster.is_some())
        );
        let observed = observed_after(&p, "main");
        assert_eq!(
            observed.entries(|_| false),
            p.entries(),
            "read after apply equals the plan"
        );
        let mut f2 = Fixture::new();
        f2.observed = observed.clone();
        let p2 = f2.run();
        let (writes, deletes) = actions(&p2, &observed);
        assert!(writes.is_empty() && deletes.is_empty());
    }

    #[test]
    fn removed_profile_deletes_only_owned_objects() {
        let f = Fixture::new();
        let observed = observed_after(&f.run(), "main");
        let mut f2 = Fixture::new();
        f2.profiles.pop();
        f2.observed = observed.clone();
        let (writes, deletes) = actions(&f2.run(), &observed);
        assert!(writes.is_empty());
        assert_eq!(deletes.len(), 1);
        assert_eq!(deletes[0].sveltos_cluster, Some(("b".into(), "c1".into())));
        assert_eq!(
            deletes[0].secret,
            Some(("b".into(), "c1-sveltos-kubeconfig".into()))
        );
    }

    #[test]
    fn label_change_rewrites_only_the_cluster() {
        let f = Fixture::new();
        let observed = observed_after(&f.run(), "main");
        let mut f2 = Fixture::new();
        f2.set_label(0, "env", "staging");
        f2.observed = observed.clone();
        let (writes, _) = actions(&f2.run(), &observed);
        assert_eq!(writes.len(), 1);
        assert!(writes[0].secret.is_none() && writes[0].sveltos_cluster.is_some());
    }

    #[test]
    fn argument_changes_rewrite_no_sveltos_cluster() {
        let mut f = Fixture::new();
        f.spec.config_record = Some("{\"v\":1}".into());
        let p = f.run();
        let observed = observed_after(&p, "main");
        let mut f2 = Fixture::new();
        f2.spec.config_record = Some("{\"v\":2}".into());
        f2.observed = observed.clone();
        let p2 = f2.run();
        assert_eq!(p2.entries(), p.entries(), "plan shows no cluster change");
        let (writes, _) = actions(&p2, &observed);
        assert!(
            writes.is_empty(),
            "the configuration record lives in the claim, not on every SveltosCluster: {writes:?}"
        );
    }

    #[test]
    fn sveltos_token_renewal_is_never_reverted_but_a_rotated_source_is_written() {
        let mut f = Fixture::new();
        f.spec.token_renewal = Some(crate::domain::TokenRenewal {
            interval: "1h".into(),
            token_duration: Some("3h".into()),
            sa_namespace: Some("kube-system".into()),
            sa_name: Some("sveltos".into()),
        });
        let first = f.run();
        let sc = first.desired["a/c1"].sveltos_cluster.as_ref().unwrap();
        let opt = sc.spec.token_request_renewal_option.as_ref().unwrap();
        assert_eq!(
            (
                opt.renew_token_request_interval.as_str(),
                opt.sa_name.as_deref()
            ),
            ("1h", Some("sveltos"))
        );
        f.observed = observed_after(&first, "main");
        // What sveltoscluster-manager does on renewal, by plain updates: it takes over spec.kubeconfigKeyName (now
        // `re-kubeconfig`) and the interval, and rewrites the Secret's data. The bridge owns neither field any more;
        // its hashes do not move (the Secret is compared by the source hash it recorded).
        for o in f.observed.owned.values_mut() {
            let sc = o.sveltos_cluster.as_mut().unwrap();
            sc.owned_spec.remove("kubeconfigKeyName");
            sc.owned_renewal.remove("renewTokenRequestInterval");
        }
        let p = f.run();
        let (writes, deletes) = actions(&p, &f.observed);
        assert!(
            writes.is_empty() && deletes.is_empty(),
            "a renewal is never reverted: {writes:?}"
        );
        // A rotated source credential is written, and the SveltosCluster pointed back at it; the interval Sveltos
        // shortened stays Sveltos'.
        f.secrets[0] = labelled_secret(
            "a",
            "s1",
            "c1",
            None,
            &[(
                "Config",
                "apiVersion: v1\nclusters:\n- name: x\n  cluster:\n    server: https://10.0.0.9\n",
            )],
        );
        let p = f.run();
        let (writes, _) = actions(&p, &f.observed);
        assert_eq!(writes.len(), 1, "{writes:?}");
        let w = &writes[0];
        assert!(w.secret.is_some());
        let sc = w.sveltos_cluster.as_ref().unwrap();
        assert_eq!(sc.spec.kubeconfig_key_name.as_deref(), Some("kubeconfig"));
        assert_eq!(
            sc.spec
                .token_request_renewal_option
                .as_ref()
                .unwrap()
                .renew_token_request_interval,
            ""
        );
        // Changing the renewal settings themselves shows and is written.
        f.secrets[0] = labelled_secret("a", "s1", "c1", None, &[("Config", KUBECONFIG)]);
        f.spec.token_renewal.as_mut().unwrap().interval = "2h".into();
        let p = f.run();
        assert_ne!(
            p.desired["a/c1"].entry.config_sha256,
            f.observed.owned["a/c1"].entry(true).config_sha256
        );
        let (writes, _) = actions(&p, &f.observed);
        let sc = writes
            .iter()
            .find(|w| w.key == "a/c1")
            .unwrap()
            .sveltos_cluster
            .as_ref()
            .unwrap();
        assert_eq!(
            sc.spec
                .token_request_renewal_option
                .as_ref()
                .unwrap()
                .renew_token_request_interval,
            "2h"
        );
    }
}
