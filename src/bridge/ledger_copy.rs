//! The ledger's copy in the claim, for readers that have no Terraform state: the `sveltos_clusters` data source
//! tells which SveltosClusters a bridge owns by the bridge's own rule ([`super::ownership::Ledger::owns_marked`]),
//! not by its label, which anyone who can create a SveltosCluster can copy.
//!
//! The private state stays the source of truth; at the end of every apply the bridge copies the SveltosCluster
//! part of its ledger into its claim (in the operator's namespace, which tenants cannot write). Each recorded
//! cluster is kept as two digests, of its `namespace/name` and of its UID (48 bits each, 25 bytes a cluster:
//! ten thousand clusters take 250 KB of the claim's 1 MiB), which is all a reader needs to compare what it
//! lists. The run keys the claim already holds recognise the clusters of a run that died before it recorded
//! them, exactly as the bridge does.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use super::ownership::{Kind, Ledger, RunKey};

/// Bytes kept of each SHA-256 digest.
const DIGEST_BYTES: usize = 6;

/// Largest encoded copy written into a claim (the ConfigMap holds 1 MiB in all): a larger fleet's claim carries
/// no copy, and readers then say they cannot tell ownership.
pub const MAX_ENCODED: usize = 768 * 1024;

type Digest6 = [u8; DIGEST_BYTES];

fn digest(s: &str) -> Digest6 {
    let full = Sha256::digest(s.as_bytes());
    let mut out = [0u8; DIGEST_BYTES];
    out.copy_from_slice(&full[..DIGEST_BYTES]);
    out
}

/// The SveltosClusters a bridge recorded, by digest of `namespace/name` to digest of UID.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerCopy {
    clusters: BTreeMap<Digest6, Digest6>,
}

impl LedgerCopy {
    /// The copy of `ledger`'s recorded SveltosClusters.
    pub fn of(ledger: &Ledger) -> Self {
        Self {
            clusters: ledger
                .recorded_of(Kind::SveltosCluster)
                .map(|(id, uid)| (digest(id), digest(uid)))
                .collect(),
        }
    }

    /// Whether bridge-labelled SveltosCluster `id` (`namespace/name`) with `uid` and mark annotation `mark` is
    /// the bridge's: its UID is the one recorded at its name, or, at a name never recorded, it carries the mark
    /// of one of the claim's run keys (`keys`). The rule of `Ledger::owns_marked`.
    pub fn owns(&self, id: &str, uid: Option<&str>, mark: Option<&str>, keys: &[RunKey]) -> bool {
        match self.clusters.get(&digest(id)) {
            Some(recorded) => uid.is_some_and(|u| digest(u) == *recorded),
            None => {
                mark.is_some_and(|m| keys.iter().any(|k| k.mark(Kind::SveltosCluster, id) == m))
            }
        }
    }

    /// Number of clusters recorded.
    pub fn len(&self) -> usize {
        self.clusters.len()
    }

    /// Whether no cluster is recorded.
    pub fn is_empty(&self) -> bool {
        self.clusters.is_empty()
    }

    /// The text kept in the claim: `<name digest>:<uid digest>` pairs in hex, comma-separated, sorted; `None`
    /// when it would be larger than [`MAX_ENCODED`].
    pub fn encode(&self) -> Option<String> {
        let size = self.clusters.len() * (4 * DIGEST_BYTES + 2);
        if size > MAX_ENCODED {
            return None;
        }
        let mut out = String::with_capacity(size);
        for (i, (id, uid)) in self.clusters.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&hex::encode(id));
            out.push(':');
            out.push_str(&hex::encode(uid));
        }
        Some(out)
    }

    /// The copy from its text; `None` when any part of it is malformed (a reader then cannot tell ownership).
    pub fn decode(text: &str) -> Option<Self> {
        let mut clusters = BTreeMap::new();
        for pair in text.split(',').filter(|p| !p.is_empty()) {
            let (id, uid) = pair.split_once(':')?;
            clusters.insert(hex6(id)?, hex6(uid)?);
        }
        Some(Self { clusters })
    }
}

fn hex6(s: &str) -> Option<Digest6> {
    hex::decode(s).ok()?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger(entries: &[(&str, &str)]) -> Ledger {
        let mut l = Ledger::default();
        for (id, uid) in entries {
            l.record(Kind::SveltosCluster, id, uid);
        }
        // Secrets are not copied: readers list SveltosClusters.
        l.record(Kind::Secret, "a/c1-sveltos-kubeconfig", "s1");
        l
    }

    #[test]
    fn the_copy_owns_what_the_ledger_owns() {
        let key = RunKey::new([7; 32]);
        let mark = key.mark(Kind::SveltosCluster, "a/new");
        let l = ledger(&[("a/c1", "u1"), ("b/c2", "u2")]).with_run_keys(vec![key.clone()]);
        let copy = LedgerCopy::decode(&LedgerCopy::of(&l).encode().unwrap()).unwrap();
        assert_eq!(copy.len(), 2);
        let keys = [key];
        let cases: [(&str, Option<&str>, Option<&str>); 7] = [
            ("a/c1", Some("u1"), None),
            ("b/c2", Some("u2"), None),
            // Deleted and recreated by someone else at the same name, even with a copied mark.
            ("a/c1", Some("u9"), Some(&mark)),
            ("a/c1", None, None),
            // A name never recorded: only the mark of one of the claim's run keys.
            ("a/new", Some("u3"), Some(&mark)),
            ("a/other", Some("u3"), Some(&mark)),
            ("a/new", Some("u3"), Some("00")),
        ];
        for (id, uid, m) in cases {
            assert_eq!(
                copy.owns(id, uid, m, &keys),
                l.owns_marked(Kind::SveltosCluster, id, uid, m),
                "{id} {uid:?} {m:?}"
            );
        }
        assert!(copy.owns("a/c1", Some("u1"), None, &keys));
        assert!(!copy.owns("a/c1", Some("u9"), Some(&mark), &keys));
        assert!(copy.owns("a/new", Some("u3"), Some(&mark), &keys));
        assert!(!copy.owns("a/new", Some("u3"), Some(&mark), &[]));
    }

    #[test]
    fn encoding_is_compact_bounded_and_strict() {
        let entries: Vec<(String, String)> = (0..10_000)
            .map(|i| (format!("ns-{}/cluster-{i}", i % 50), format!("uid-{i}")))
            .collect();
        let refs: Vec<(&str, &str)> = entries
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let text = LedgerCopy::of(&ledger(&refs)).encode().unwrap();
        assert!(text.len() < 260_000, "{} bytes", text.len());
        assert_eq!(LedgerCopy::decode(&text).unwrap().len(), 10_000);
        let huge: Vec<(String, String)> = (0..40_000)
            .map(|i| (format!("n/c{i}"), format!("u{i}")))
            .collect();
        let refs: Vec<(&str, &str)> = huge.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(LedgerCopy::of(&ledger(&refs)).encode(), None);
        assert_eq!(LedgerCopy::decode(""), Some(LedgerCopy::default()));
        assert_eq!(LedgerCopy::decode("zz:00"), None);
        assert_eq!(LedgerCopy::decode("0011223344:001122334455"), None);
        assert_eq!(LedgerCopy::decode("001122334455"), None);
    }
}
