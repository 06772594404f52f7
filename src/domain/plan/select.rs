//! First planning phase: which ClusterProfiles are selected, and where each one's credential comes from.

use std::collections::{BTreeMap, BTreeSet};

use super::Inputs;
use crate::api::ClusterProfile;
use crate::domain::{
    Selection, UnhealthyPolicy,
    credentials::{Lookup, SecretIndex, locate, resolve::secrets_to_read},
    desired::secret_name,
    is_healthy,
    observed::Observed,
    selection_miss, unhealthy_reason,
};

/// A located credential per selected profile (first planning phase).
#[derive(Debug, Clone, Default)]
pub struct Located {
    /// `(profile index in Inputs::profiles, lookup)` for every selected, non-skipped profile.
    pub lookups: Vec<(usize, Lookup)>,
    /// Profiles not selected, by key, with the reason.
    pub unselected: BTreeMap<String, String>,
    /// Bridged clusters whose profile is not healthy, kept registered as they are (`unhealthy = "keep"`).
    pub unhealthy_kept: BTreeSet<String>,
    /// Bridged clusters whose profile is not healthy, paused (`unhealthy = "pause"`).
    pub unhealthy_paused: BTreeSet<String>,
}

impl Located {
    /// Secrets named by `kubeconfig-secretreader` providers, which the caller must read (`namespace/name`).
    pub fn secrets_to_read(&self) -> BTreeSet<(String, String)> {
        secrets_to_read(self.lookups.iter().map(|(_, l)| l))
    }
}

/// The objects a plan may create: for every selected profile, its SveltosCluster and Secret (`namespace`,
/// `name`) unless this bridge already owns them. Only these can collide with objects someone else made, so only
/// these need checking; a plan that creates nothing checks nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreationTargets {
    /// SveltosClusters not owned yet.
    pub clusters: BTreeSet<(String, String)>,
    /// Secrets not owned yet.
    pub secrets: BTreeSet<(String, String)>,
}

impl CreationTargets {
    /// Whether there is nothing to check.
    pub fn is_empty(&self) -> bool {
        self.clusters.is_empty() && self.secrets.is_empty()
    }

    /// Number of objects to check.
    pub fn len(&self) -> usize {
        self.clusters.len() + self.secrets.len()
    }

    /// The namespaces involved.
    pub fn namespaces(&self) -> BTreeSet<String> {
        self.clusters
            .iter()
            .chain(&self.secrets)
            .map(|(ns, _)| ns.clone())
            .collect()
    }
}

impl Located {
    /// What a plan over these lookups may create that `observed` does not show as ours.
    pub fn creation_targets(
        &self,
        profiles: &[ClusterProfile],
        observed: &Observed,
    ) -> CreationTargets {
        let mut out = CreationTargets::default();
        for (i, _) in &self.lookups {
            let p = &profiles[*i];
            let ns = p.metadata.namespace.clone().unwrap_or_default();
            let name = p.metadata.name.clone().unwrap_or_default();
            let owned = observed.owned.get(&p.key());
            if owned.is_none_or(|o| o.sveltos_cluster.is_none()) {
                out.clusters.insert((ns.clone(), name.clone()));
            }
            if owned.is_none_or(|o| o.secret.is_none()) {
                out.secrets.insert((ns, secret_name(&name)));
            }
        }
        out
    }
}

/// First phase: select profiles and locate their credentials. With `require_healthy`, health gates
/// registration, not existence: an unhealthy profile is not registered, but an already bridged cluster whose
/// profile turns unhealthy follows `unhealthy` (kept, paused or removed).
pub fn locate_all(inputs: &Inputs<'_>) -> Located {
    let spec = inputs.spec;
    let index = SecretIndex::new(
        inputs.credential_secrets,
        &spec.credentials,
        inputs.namespace_labels,
    );
    let mut out = Located::default();
    let health_blind = Selection {
        require_healthy: false,
        ..spec.selection.clone()
    };
    for (i, p) in inputs.profiles.iter().enumerate() {
        let key = p.key();
        if let Some(reason) = selection_miss(&health_blind, p) {
            out.unselected.insert(key, reason);
            continue;
        }
        if spec.overrides.get(&key).is_some_and(|o| o.skip) {
            out.unselected.insert(key, "skipped by overrides".into());
            continue;
        }
        if spec.selection.require_healthy && !is_healthy(p) {
            let bridged = inputs.observed.owned.contains_key(&key);
            match spec.unhealthy {
                UnhealthyPolicy::Keep if bridged => {
                    out.unhealthy_kept.insert(key);
                    continue;
                }
                UnhealthyPolicy::Pause if bridged => {
                    out.unhealthy_paused.insert(key);
                }
                _ => {
                    out.unselected.insert(key, unhealthy_reason());
                    continue;
                }
            }
        }
        out.lookups
            .push((i, locate(p, &spec.credentials, inputs.providers, &index)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::plan::fixture::*;
    use crate::domain::plan::*;

    #[test]
    fn creation_targets_are_the_unowned_objects_of_selected_profiles() {
        let mut f = Fixture::new();
        f.profiles.push(profile("a", "c2", &[]));
        f.spec.overrides.insert(
            "a/c2".into(),
            Override {
                skip: true,
                ..Default::default()
            },
        );
        let inputs = |f: &Fixture| -> Located {
            locate_all(&Inputs {
                spec: &f.spec,
                profiles: &f.profiles,
                credential_secrets: &f.secrets,
                checked_kubeconfigs: None,
                namespace_labels: &f.ns_labels,
                providers: None,
                observed: &f.observed,
                now: jiff::Timestamp::from_second(1_800_000_000).unwrap(),
                phase: Phase::Plan,
                planned_mints: None,
                undecodable: &NO_UNDECODABLE,
                cluster_api: &crate::domain::plan::NO_CLUSTER_API,
                pack: false,
            })
        };
        let t = inputs(&f).creation_targets(&f.profiles, &f.observed);
        let pairs = |v: &[(&str, &str)]| -> BTreeSet<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            t.clusters,
            pairs(&[("a", "c1"), ("b", "c1")]),
            "skipped profiles are not targets"
        );
        assert_eq!(
            t.secrets,
            pairs(&[
                ("a", "c1-sveltos-kubeconfig"),
                ("b", "c1-sveltos-kubeconfig")
            ])
        );
        assert_eq!(t.namespaces().into_iter().collect::<Vec<_>>(), ["a", "b"]);

        // After apply, nothing is left to check; a deleted Secret of ours is a target again.
        f.observed = observed_after(&f.run(), "main");
        assert!(
            inputs(&f)
                .creation_targets(&f.profiles, &f.observed)
                .is_empty()
        );
        f.observed.owned.get_mut("b/c1").unwrap().secret = None;
        let t = inputs(&f).creation_targets(&f.profiles, &f.observed);
        assert_eq!((t.clusters.len(), t.secrets.len()), (0, 1));
    }

    #[test]
    fn selection_filters() {
        let mut f = Fixture::new();
        f.spec.selection = Selection {
            label_selector: Some(Selector::parse("env=prod").unwrap()),
            ..Default::default()
        };
        assert_eq!(f.run().entries().keys().collect::<Vec<_>>(), ["a/c1"]);
        f.spec.selection = Selection {
            namespaces: vec!["b".into()],
            ..Default::default()
        };
        assert_eq!(f.run().entries().keys().collect::<Vec<_>>(), ["b/c1"]);
        f.spec.selection = Selection {
            require_healthy: true,
            ..Default::default()
        };
        set_healthy(&mut f.profiles[1], true);
        set_healthy(&mut f.profiles[0], false);
        assert_eq!(f.run().entries().keys().collect::<Vec<_>>(), ["b/c1"]);
        f.spec.selection = Selection::default();
        f.spec.overrides.insert(
            "a/c1".into(),
            Override {
                skip: true,
                ..Default::default()
            },
        );
        assert_eq!(f.run().entries().keys().collect::<Vec<_>>(), ["b/c1"]);
    }

    #[test]
    fn health_gates_registration_not_existence() {
        let mut f = Fixture::new();
        f.spec.selection.require_healthy = true;
        for p in &mut f.profiles {
            set_healthy(p, true);
        }
        f.observed = observed_after(&f.run(), "main");
        set_healthy(&mut f.profiles[1], false);
        // keep: registered as it is.
        let p = f.run();
        assert!(p.kept.contains_key("b/c1") && p.removals.is_empty());
        assert!(
            p.problems
                .iter()
                .any(|x| x.path == vec![Step::Attr("require_healthy")])
        );
        // pause: paused.
        f.spec.unhealthy = UnhealthyPolicy::Pause;
        let p = f.run();
        assert_eq!(
            p.desired["b/c1"]
                .sveltos_cluster
                .as_ref()
                .unwrap()
                .spec
                .paused,
            Some(true)
        );
        let (writes, _) = actions(&p, &f.observed);
        assert!(
            writes
                .iter()
                .any(|w| w.key == "b/c1" && w.sveltos_cluster.is_some())
        );
        // remove: deregistered.
        f.spec.unhealthy = UnhealthyPolicy::Remove;
        let p = f.run();
        assert_eq!(p.removals, ["b/c1"]);
        // A new unhealthy profile is not registered.
        f.spec.unhealthy = UnhealthyPolicy::Keep;
        f.observed = Observed::default();
        assert!(!f.run().entries().contains_key("b/c1"));
    }
}
