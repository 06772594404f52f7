//! Ownership that a label cannot forge. The bridge labels what it writes (`sveltos.clusterinventory.io/bridge`),
//! but anyone who can create objects in a namespace can copy a label. So the bridge also records the UID the API
//! server gave each object it created (or that the operator explicitly adopted or imported) in the resource's
//! private state, which only Terraform holds: an object is this bridge's when it carries the label **and** its
//! UID is recorded. An object that only carries the label is an impostor: never updated, never deleted, reported.
//!
//! States written before UIDs were recorded (v0.1) carry no ledger; for them the object names listed in the
//! state's own `clusters` attribute (which only Terraform writes) are trusted once, and the next apply records
//! their UIDs.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// The kinds of objects the bridge owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A SveltosCluster.
    SveltosCluster,
    /// A kubeconfig Secret.
    Secret,
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Self::SveltosCluster => "SveltosCluster",
            Self::Secret => "Secret",
        }
    }
}

/// Why private state cannot be read as a ledger.
#[derive(Debug, thiserror::Error)]
#[error("the resource's private state is not an ownership ledger: {0}")]
pub struct LedgerError(#[source] serde_json::Error);

/// The UIDs of the objects this bridge owns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// Format version.
    #[serde(default)]
    v: u32,
    /// `"<Kind> namespace/name"` to UID.
    #[serde(default)]
    objects: BTreeMap<String, String>,
    /// Legacy states only: `"<Kind> namespace/name"` trusted by name (not serialized).
    #[serde(skip)]
    trusted_names: BTreeSet<String>,
    /// After `import`: every object carrying the bridge's label is taken over at the next read (not serialized).
    #[serde(skip)]
    take_over_labelled: bool,
    /// A digest of the inventory reads of the configuration last applied (namespaces, credential label and
    /// consumer): a refresh reads ahead for the plan only with settings an apply recorded here, never with a
    /// configuration that came from the cluster (an import).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reads: Option<String>,
}

/// The private-state marker `import` leaves for the read that follows it.
pub const IMPORTED: &[u8] = b"imported";

fn slot(kind: Kind, id: &str) -> String {
    format!("{} {id}", kind.prefix())
}

impl Ledger {
    /// Reads the ledger from private state. Empty private state is a state written before UIDs were recorded:
    /// `legacy_ids` (the `namespace/name` of every SveltosCluster and Secret listed in the state's `clusters`)
    /// are then trusted by name. The import marker takes over every labelled object.
    pub fn from_private(
        private: &[u8],
        legacy: impl FnOnce() -> Vec<(Kind, String)>,
    ) -> Result<Self, LedgerError> {
        if private.is_empty() {
            return Ok(Self {
                trusted_names: legacy().into_iter().map(|(k, id)| slot(k, &id)).collect(),
                ..Self::default()
            });
        }
        if private == IMPORTED {
            return Ok(Self {
                take_over_labelled: true,
                ..Self::default()
            });
        }
        serde_json::from_slice(private).map_err(LedgerError)
    }

    /// This ledger recording `reads` (see the field).
    pub fn with_reads(mut self, reads: Option<String>) -> Self {
        self.reads = reads;
        self
    }

    /// The inventory reads digest an apply recorded.
    pub fn reads(&self) -> Option<&str> {
        self.reads.as_deref()
    }

    /// The private state to store.
    pub fn to_private(&self) -> Vec<u8> {
        let mut out = self.clone();
        out.v = 1;
        serde_json::to_vec(&out).unwrap_or_default()
    }

    /// Whether the object `id` of `kind` with `uid` (already known to carry the bridge's label) is owned.
    pub fn owns(&self, kind: Kind, id: &str, uid: Option<&str>) -> bool {
        let key = slot(kind, id);
        if self.take_over_labelled || self.trusted_names.contains(&key) {
            return true;
        }
        uid.is_some_and(|u| self.objects.get(&key).is_some_and(|r| r == u))
    }

    /// Whether an object at `id` with `uid` is one this bridge recorded (whatever its labels say now).
    pub fn recorded(&self, kind: Kind, id: &str, uid: Option<&str>) -> bool {
        uid.is_some_and(|u| self.objects.get(&slot(kind, id)).is_some_and(|r| r == u))
    }

    /// Records an object the bridge created, adopted or imported.
    pub fn record(&mut self, kind: Kind, id: &str, uid: &str) {
        let key = slot(kind, id);
        self.trusted_names.remove(&key);
        self.objects.insert(key, uid.to_string());
    }

    /// Trusts an object by name until its UID is recorded: used only after an apply that timed out, for the
    /// names that apply was writing (their UIDs are recorded by the read that follows).
    pub fn trust_name(&mut self, kind: Kind, id: &str) {
        self.trusted_names.insert(slot(kind, id));
    }

    /// Forgets a deleted object.
    pub fn forget(&mut self, kind: Kind, id: &str) {
        let key = slot(kind, id);
        self.trusted_names.remove(&key);
        self.objects.remove(&key);
    }

    /// A ledger that owns every labelled object (tests of the layers above ownership).
    #[cfg(test)]
    pub fn trusting() -> Self {
        Self {
            take_over_labelled: true,
            ..Self::default()
        }
    }

    /// Number of recorded objects.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }
}

/// The claim a bridge name holds on a management cluster: one ConfigMap per bridge name, holding a random
/// instance id (also in the bridge's state) and the bridge's configuration record (for `import`). A second state
/// using the same name finds the claim with another instance id and stops before it writes anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The instance id of the state that holds the name.
    pub instance: String,
    /// The configuration record (the bridge's arguments as JSON, no secrets).
    pub config: Option<String>,
}

/// Name of the claim ConfigMap of bridge `bridge`.
pub fn claim_name(bridge: &str) -> String {
    format!("sveltos-bridge-{bridge}")
}

/// Default namespace of claims.
pub const DEFAULT_CLAIM_NAMESPACE: &str = "default";

/// Why a state may not use a bridge name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "bridge name {bridge:?} is claimed by another Terraform state (ConfigMap {claim}, instance {other}); this state's \
     instance is {mine}"
)]
pub struct ClaimConflict {
    /// The bridge name.
    pub bridge: String,
    /// `namespace/name` of the claim.
    pub claim: String,
    /// The instance id in the claim.
    pub other: String,
    /// This state's instance id (`none` for a new resource).
    pub mine: String,
}

/// Whether a state whose instance id is `mine` (`None`: a new resource, or a state written before claims
/// existed when `legacy`) may use the name that `claim` holds.
pub fn check_claim(
    bridge: &str,
    claim_id: &str,
    mine: Option<&str>,
    legacy: bool,
    claim: Option<&Claim>,
) -> Result<(), ClaimConflict> {
    let Some(claim) = claim else {
        return Ok(());
    };
    match mine {
        Some(m) if m == claim.instance => Ok(()),
        None if legacy => Ok(()),
        _ => Err(ClaimConflict {
            bridge: bridge.to_string(),
            claim: claim_id.to_string(),
            other: claim.instance.clone(),
            mine: mine.unwrap_or("none").to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_alone_is_not_ownership() {
        let mut l = Ledger::from_private(b"", Vec::new).unwrap();
        assert!(!l.owns(Kind::SveltosCluster, "a/c1", Some("u1")));
        l.record(Kind::SveltosCluster, "a/c1", "u1");
        assert!(l.owns(Kind::SveltosCluster, "a/c1", Some("u1")));
        // Deleted and recreated by someone else under the same name: another UID.
        assert!(!l.owns(Kind::SveltosCluster, "a/c1", Some("u2")));
        assert!(!l.owns(Kind::Secret, "a/c1", Some("u1")));
        let back = Ledger::from_private(&l.to_private(), Vec::new).unwrap();
        assert!(back.owns(Kind::SveltosCluster, "a/c1", Some("u1")));
        l.forget(Kind::SveltosCluster, "a/c1");
        assert!(!l.owns(Kind::SveltosCluster, "a/c1", Some("u1")));
    }

    #[test]
    fn one_state_per_bridge_name() {
        let claim = Claim {
            instance: "i-1".into(),
            config: None,
        };
        assert!(check_claim("b", "default/c", None, false, None).is_ok());
        assert!(check_claim("b", "default/c", Some("i-1"), false, Some(&claim)).is_ok());
        let e = check_claim("b", "default/c", None, false, Some(&claim)).unwrap_err();
        assert!(
            e.to_string().contains("default/c") && e.to_string().contains("i-1"),
            "{e}"
        );
        assert!(check_claim("b", "default/c", Some("i-2"), false, Some(&claim)).is_err());
        // A state written before claims existed takes the claim over at its next apply.
        assert!(check_claim("b", "default/c", None, true, Some(&claim)).is_ok());
    }

    #[test]
    fn legacy_states_trust_the_names_they_list_and_import_takes_over() {
        let l = Ledger::from_private(b"", || {
            vec![(Kind::Secret, "a/c1-sveltos-kubeconfig".into())]
        })
        .unwrap();
        assert!(l.owns(Kind::Secret, "a/c1-sveltos-kubeconfig", Some("any")));
        assert!(!l.owns(Kind::Secret, "a/other", Some("any")));
        let l = Ledger::from_private(IMPORTED, Vec::new).unwrap();
        assert!(l.owns(Kind::SveltosCluster, "x/y", None));
        assert!(Ledger::from_private(b"{not json", Vec::new).is_err());
    }
}
