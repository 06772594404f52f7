//! Which SveltosClusters a bridge owns, as `sveltos_clusters` reports it: by the bridge's own rule (its label, and
//! the UID the bridge recorded at that name or the mark of one of its runs; see `crate::domain::ledger_copy`),
//! read from the bridge's claim in the operator's namespace. The label alone is never enough: anyone who can
//! create a SveltosCluster can copy it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::{
    api::keys,
    domain::{
        journal::Journals,
        ledger_copy::LedgerCopy,
        ownership::{Claim, MARK_ANNOTATION, RunKey},
    },
};

/// Whether `meta` carries the label of bridge `bridge` (a necessary condition of ownership, and the server-side
/// filter's rule).
pub fn labelled_for(meta: &ObjectMeta, bridge: &str) -> bool {
    meta.labels
        .as_ref()
        .and_then(|l| l.get(keys::BRIDGE_LABEL))
        .is_some_and(|v| v == bridge)
}

/// What the claim of a bridge tells about its SveltosClusters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BridgeOwnership {
    /// No claim at the bridge's name: no bridge of that name has applied, so it owns nothing.
    NoClaim,
    /// The claim's copy of the bridge's ledger, and the claim's run keys.
    Known {
        /// The copy.
        copy: LedgerCopy,
        /// The run keys.
        keys: Vec<RunKey>,
        /// The runs' write journals.
        journals: Journals,
    },
    /// The claim holds no readable copy: its bridge was last applied by an earlier version of the provider, its
    /// last applies died before they finished, or it manages more clusters than the claim can hold.
    Unknown,
}

impl BridgeOwnership {
    /// What `claim` tells.
    pub fn from_claim(claim: Option<Claim>) -> Self {
        let Some(claim) = claim else {
            return Self::NoClaim;
        };
        match claim.ledger_copy.as_deref().and_then(LedgerCopy::decode) {
            Some(copy) => Self::Known {
                copy,
                keys: claim.keys,
                journals: claim.journals,
            },
            None => Self::Unknown,
        }
    }

    /// Whether bridge `bridge` owns the SveltosCluster whose metadata is `meta` (`None`: cannot tell).
    pub fn owns(&self, meta: &ObjectMeta, bridge: &str) -> Option<bool> {
        if !labelled_for(meta, bridge) {
            return Some(false);
        }
        match self {
            Self::NoClaim => Some(false),
            Self::Unknown => None,
            Self::Known {
                copy,
                keys,
                journals,
            } => {
                let id = format!(
                    "{}/{}",
                    meta.namespace.as_deref().unwrap_or_default(),
                    meta.name.as_deref().unwrap_or_default()
                );
                let mark = meta
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(MARK_ANNOTATION))
                    .map(String::as_str);
                copy.owns_journaled(&id, meta.uid.as_deref(), mark, keys, journals)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::domain::ownership::{Kind, Ledger};

    fn meta(name: &str, bridge: Option<&str>, uid: &str, mark: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            namespace: Some("ns".into()),
            name: Some(name.into()),
            uid: Some(uid.into()),
            labels: bridge
                .map(|b| BTreeMap::from([(keys::BRIDGE_LABEL.to_string(), b.to_string())])),
            annotations: mark
                .map(|m| BTreeMap::from([(MARK_ANNOTATION.to_string(), m.to_string())])),
            ..Default::default()
        }
    }

    #[test]
    fn the_claim_decides_and_the_label_is_only_necessary() {
        let key = RunKey::new([3; 32]);
        let mut ledger = Ledger::default().with_run_keys(vec![key.clone()]);
        ledger.record(Kind::SveltosCluster, "ns/c1", "u1");
        let mark = key.mark(Kind::SveltosCluster, "ns/died");
        let mut claim = Claim::new("i".into(), None);
        claim.keys = vec![key.clone()];
        claim.ledger_copy = Some(LedgerCopy::of(&ledger, &key).encode());
        let known = BridgeOwnership::from_claim(Some(claim.clone()));
        assert_eq!(
            known.owns(&meta("c1", Some("b"), "u1", None), "b"),
            Some(true)
        );
        assert_eq!(
            known.owns(&meta("c1", Some("other"), "u1", None), "b"),
            Some(false),
            "another bridge's label"
        );
        assert_eq!(
            known.owns(&meta("fake", Some("b"), "u7", None), "b"),
            Some(false),
            "a copied label"
        );
        assert_eq!(
            known.owns(&meta("c1", Some("b"), "u7", Some(&mark)), "b"),
            Some(false),
            "recreated at a recorded name"
        );
        assert_eq!(
            known.owns(&meta("died", Some("b"), "u8", Some(&mark)), "b"),
            Some(true),
            "written by a run that died"
        );
        assert_eq!(
            known.owns(&meta("fake", Some("b"), "u8", Some(&mark)), "b"),
            Some(false),
            "a mark copied to another name"
        );
        // The dead run journaled `died` with UID u8: a recreation with the mark copied is not the bridge's.
        let mut journaled = claim.clone();
        let entry = key.journal_entry(Kind::SveltosCluster, "ns/died", "u8");
        journaled
            .journals
            .add_batch(&key.journal_batch_key(0), &entry);
        let journaled = BridgeOwnership::from_claim(Some(journaled));
        assert_eq!(
            journaled.owns(&meta("died", Some("b"), "u8", Some(&mark)), "b"),
            Some(true)
        );
        assert_eq!(
            journaled.owns(&meta("died", Some("b"), "u9", Some(&mark)), "b"),
            Some(false),
            "recreated with the mark copied at a name the dead run journaled"
        );
        let none = BridgeOwnership::from_claim(None);
        assert_eq!(
            none.owns(&meta("c1", Some("b"), "u1", None), "b"),
            Some(false)
        );
        claim.ledger_copy = None;
        let old = BridgeOwnership::from_claim(Some(claim.clone()));
        assert_eq!(old, BridgeOwnership::Unknown);
        assert_eq!(old.owns(&meta("c1", Some("b"), "u1", None), "b"), None);
        assert_eq!(old.owns(&meta("c1", None, "u1", None), "b"), Some(false));
        claim.ledger_copy = Some("garbage".into());
        assert_eq!(
            BridgeOwnership::from_claim(Some(claim)),
            BridgeOwnership::Unknown
        );
    }
}
