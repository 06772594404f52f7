//! The ledger's copy in the claim, for readers that have no Terraform state: the `sveltos_clusters` data source
//! tells which SveltosClusters a bridge owns by the bridge's own rule ([`super::ownership::Ledger::owns_marked`]),
//! not by its label, which anyone who can create a SveltosCluster can copy.
//!
//! The private state stays the source of truth; at the end of every apply the bridge copies the SveltosCluster
//! part of its ledger into its claim (in the operator's namespace, which tenants can neither read nor write): for
//! each recorded cluster a digest of its `namespace/name` and of its UID, with the run key it was recorded
//! under ([`Since`]), and a tombstone for each name the bridge recorded and no longer owns. Digests are keyed
//! with the run that wrote the copy (64 bits each): nobody without the claim can compute one, so nobody can
//! choose a name whose digest hides another cluster's; two names with one digest make that digest unknown, never
//! owned. An entry takes 43 bytes: ten thousand clusters take 430 kB of the claim's 1 MiB (a copy that does not
//! fit is left out, and readers say they cannot tell).

use std::collections::BTreeMap;

use super::{
    journal::Journals,
    ownership::{Kind, Ledger, RunKey, Since},
};

/// Bytes kept of each keyed digest.
const DIGEST_BYTES: usize = 8;

/// Format version, the first field of the text.
const VERSION: &str = "2";

type Digest8 = [u8; DIGEST_BYTES];

fn digest(key: &RunKey, what: &str, s: &str) -> Digest8 {
    let full = key.digest(format!("ledger-copy {what} {s}").as_bytes());
    let mut out = [0u8; DIGEST_BYTES];
    out.copy_from_slice(&full[..DIGEST_BYTES]);
    out
}

/// What the copy holds at one name digest.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    /// A recorded cluster: its UID's digest, and the fingerprint of the run key it was recorded under.
    Recorded { uid: Digest8, since: Option<String> },
    /// A name the bridge recorded and no longer owns.
    Tombstone { since: String },
    /// Two names share this digest: nothing can be told there.
    Ambiguous,
}

/// The SveltosClusters a bridge recorded, by keyed digest of `namespace/name`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerCopy {
    /// Fingerprint of the run key the digests are made with.
    key: String,
    entries: BTreeMap<Digest8, Entry>,
}

impl LedgerCopy {
    /// The copy of `ledger`'s SveltosClusters, with digests keyed by `key` (the run's, kept in the claim).
    pub fn of(ledger: &Ledger, key: &RunKey) -> Self {
        let mut copy = Self {
            key: key.fingerprint(),
            entries: BTreeMap::new(),
        };
        let mut names: BTreeMap<Digest8, &str> = BTreeMap::new();
        let kind = Kind::SveltosCluster;
        let recorded = ledger.recorded_of(kind).map(|(id, uid)| {
            let since = ledger.since_of(kind, id).map(String::from);
            let entry = Entry::Recorded {
                uid: digest(key, "uid", uid),
                since,
            };
            (id, entry)
        });
        let buried = ledger.tombstones_of(kind).map(|(id, fp)| {
            let entry = Entry::Tombstone {
                since: fp.to_string(),
            };
            (id, entry)
        });
        for (id, entry) in recorded.chain(buried) {
            copy.add(&mut names, digest(key, "name", id), id, entry);
        }
        copy
    }

    /// Adds `entry` for `id` at its digest `d`; a digest another name already has (in `names`) becomes
    /// [`Entry::Ambiguous`].
    fn add<'a>(
        &mut self,
        names: &mut BTreeMap<Digest8, &'a str>,
        d: Digest8,
        id: &'a str,
        entry: Entry,
    ) {
        match names.insert(d, id) {
            Some(other) if other != id => self.entries.insert(d, Entry::Ambiguous),
            _ => self.entries.insert(d, entry),
        };
    }

    /// Whether bridge-labelled SveltosCluster `id` (`namespace/name`) with `uid` and mark annotation `mark` is
    /// the bridge's, by the rule of `Ledger::owns_marked` with the claim's run keys `keys` (oldest first);
    /// `None` when the copy cannot tell (its key has left the claim, or two names share the digest). No run
    /// journal is consulted (see [`LedgerCopy::owns_journaled`]).
    pub fn owns(
        &self,
        id: &str,
        uid: Option<&str>,
        mark: Option<&str>,
        keys: &[RunKey],
    ) -> Option<bool> {
        self.owns_journaled(id, uid, mark, keys, &Journals::default())
    }

    /// [`LedgerCopy::owns`], a mark counting only where the journal of its run admits the object (the claim's
    /// `journals`: see [`super::journal`]).
    pub fn owns_journaled(
        &self,
        id: &str,
        uid: Option<&str>,
        mark: Option<&str>,
        keys: &[RunKey],
        journals: &Journals,
    ) -> Option<bool> {
        let key = keys.iter().find(|k| k.fingerprint() == self.key)?;
        let since = match self.entries.get(&digest(key, "name", id)) {
            Some(Entry::Ambiguous) => return None,
            Some(Entry::Recorded {
                uid: recorded,
                since,
            }) => {
                if uid.is_some_and(|u| digest(key, "uid", u) == *recorded) {
                    return Some(true);
                }
                since.as_deref().map_or(Since::Never, Since::After)
            }
            Some(Entry::Tombstone { since }) => Since::After(since),
            None => Since::Any,
        };
        let marked = mark.is_some_and(|m| {
            since.keys(keys).iter().any(|k| {
                k.mark(Kind::SveltosCluster, id) == m
                    && k.admitted_by(journals, Kind::SveltosCluster, id, uid)
            })
        });
        Some(marked)
    }

    /// Number of names the copy holds (recorded clusters and tombstones).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the copy holds no name.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The text kept in the claim: `2;<key fingerprint>;` then, comma-separated and sorted,
    /// `<name digest>:<uid digest>:<since>` for a recorded cluster, `<name digest>::<since>` for a tombstone and
    /// `<name digest>:*` for a shared digest, digests in hex.
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(self.entries.len() * 43 + 16);
        out.push_str(VERSION);
        out.push(';');
        out.push_str(&self.key);
        out.push(';');
        for (i, (name, entry)) in self.entries.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&hex::encode(name));
            match entry {
                Entry::Recorded { uid, since } => {
                    out.push(':');
                    out.push_str(&hex::encode(uid));
                    out.push(':');
                    out.push_str(since.as_deref().unwrap_or_default());
                }
                Entry::Tombstone { since } => {
                    out.push_str("::");
                    out.push_str(since);
                }
                Entry::Ambiguous => out.push_str(":*"),
            }
        }
        out
    }

    /// The copy from its text; `None` when any part of it is malformed or of another version (a reader then
    /// cannot tell ownership).
    pub fn decode(text: &str) -> Option<Self> {
        let mut fields = text.splitn(3, ';');
        if fields.next()? != VERSION {
            return None;
        }
        let key = fingerprint(fields.next()?)?;
        let mut entries = BTreeMap::new();
        for item in fields.next()?.split(',').filter(|p| !p.is_empty()) {
            let (name, rest) = item.split_once(':')?;
            let entry = match rest.split_once(':') {
                None if rest == "*" => Entry::Ambiguous,
                None => return None,
                Some(("", since)) => Entry::Tombstone {
                    since: fingerprint(since)?,
                },
                Some((uid, since)) => Entry::Recorded {
                    uid: hex8(uid)?,
                    since: if since.is_empty() {
                        None
                    } else {
                        Some(fingerprint(since)?)
                    },
                },
            };
            if entries.insert(hex8(name)?, entry).is_some() {
                return None;
            }
        }
        Some(Self { key, entries })
    }
}

fn hex8(s: &str) -> Option<Digest8> {
    hex::decode(s).ok()?.try_into().ok()
}

fn fingerprint(s: &str) -> Option<String> {
    let ok = s.len() == 8
        && s.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
    ok.then(|| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger(entries: &[(&str, &str)], keys: &[RunKey]) -> Ledger {
        let mut l = Ledger::default().with_run_keys(keys.to_vec());
        for (id, uid) in entries {
            l.record(Kind::SveltosCluster, id, uid);
        }
        // Secrets are not copied: readers list SveltosClusters.
        l.record(Kind::Secret, "a/c1-sveltos-kubeconfig", "s1");
        l
    }

    fn copy_of(l: &Ledger, key: &RunKey) -> LedgerCopy {
        LedgerCopy::decode(&LedgerCopy::of(l, key).encode()).unwrap()
    }

    #[test]
    fn the_copy_owns_what_the_ledger_owns() {
        let (k1, k2) = (RunKey::new([7; 32]), RunKey::new([8; 32]));
        let keys = [k1.clone(), k2.clone()];
        let old_mark = k1.mark(Kind::SveltosCluster, "a/c1");
        let new_mark = k2.mark(Kind::SveltosCluster, "a/new");
        let late_mark = k2.mark(Kind::SveltosCluster, "a/c1");
        // Recorded under k1 (the newest key then); k2 came later.
        let l = ledger(&[("a/c1", "u1"), ("b/c2", "u2")], &keys[..1]).with_run_keys(keys.to_vec());
        let copy = copy_of(&l, &k2);
        assert_eq!(copy.len(), 2);
        let cases: [(&str, Option<&str>, Option<&str>); 9] = [
            ("a/c1", Some("u1"), None),
            ("b/c2", Some("u2"), None),
            // Deleted and recreated by someone else at the same name, with the mark copied.
            ("a/c1", Some("u9"), Some(&old_mark)),
            // Recreated by a later run that died before recording it.
            ("a/c1", Some("u9"), Some(&late_mark)),
            ("a/c1", None, None),
            // A name never recorded: only the mark of one of the claim's run keys.
            ("a/new", Some("u3"), Some(&new_mark)),
            ("a/other", Some("u3"), Some(&new_mark)),
            ("a/new", Some("u3"), Some("00")),
            ("a/new", Some("u3"), None),
        ];
        for (id, uid, m) in cases {
            assert_eq!(
                copy.owns(id, uid, m, &keys),
                Some(l.owns_marked(Kind::SveltosCluster, id, uid, m)),
                "{id} {uid:?} {m:?}"
            );
        }
        assert_eq!(
            copy.owns("a/c1", Some("u9"), Some(&old_mark), &keys),
            Some(false)
        );
        assert_eq!(
            copy.owns("a/c1", Some("u9"), Some(&late_mark), &keys),
            Some(true)
        );
        assert_eq!(
            copy.owns("a/new", Some("u3"), Some(&new_mark), &[]),
            None,
            "the copy's key left the claim"
        );
    }

    #[test]
    fn a_tombstone_refuses_the_marks_of_its_time_in_the_copy_too() {
        let (k1, k2, k3) = (
            RunKey::new([1; 32]),
            RunKey::new([2; 32]),
            RunKey::new([3; 32]),
        );
        let mark1 = k1.mark(Kind::SveltosCluster, "a/c1");
        let mark3 = k3.mark(Kind::SveltosCluster, "a/c1");
        let basis = ledger(&[("a/c1", "u1")], std::slice::from_ref(&k1));
        // Refreshed with c1 replaced (or gone): a tombstone under k1.
        let next = basis
            .with_run_keys(vec![k1.clone(), k2.clone()])
            .successor([]);
        let keys = [k1.clone(), k2.clone(), k3.clone()];
        let next = next.with_run_keys(keys.to_vec());
        let copy = copy_of(&next, &k2);
        for (mark, owned) in [(&mark1, false), (&mark3, true)] {
            assert_eq!(
                next.owns_marked(Kind::SveltosCluster, "a/c1", Some("u7"), Some(mark)),
                owned
            );
            assert_eq!(
                copy.owns("a/c1", Some("u7"), Some(mark), &keys),
                Some(owned)
            );
        }
    }

    #[test]
    fn a_shared_digest_tells_nothing() {
        let key = RunKey::new([9; 32]);
        let mut copy = LedgerCopy {
            key: key.fingerprint(),
            ..LedgerCopy::default()
        };
        let mut names = BTreeMap::new();
        // Two names given one digest (forced here: 64-bit keyed digests do not collide by chance).
        let d = digest(&key, "name", "a/c1");
        let recorded = |uid| Entry::Recorded {
            uid: digest(&key, "uid", uid),
            since: None,
        };
        copy.add(&mut names, d, "a/c1", recorded("u1"));
        copy.add(&mut names, d, "a/c1", recorded("u1"));
        let keys = [key.clone()];
        assert_eq!(copy.owns("a/c1", Some("u1"), None, &keys), Some(true));
        copy.add(&mut names, d, "a/victim", recorded("u2"));
        let copy = LedgerCopy::decode(&copy.encode()).unwrap();
        assert_eq!(copy.owns("a/c1", Some("u1"), None, &keys), None);
        assert_eq!(copy.owns("a/c1", Some("u2"), None, &keys), None);
    }

    #[test]
    fn encoding_is_compact_and_strict() {
        let key = RunKey::new([5; 32]);
        let entries: Vec<(String, String)> = (0..10_000)
            .map(|i| (format!("ns-{}/cluster-{i}", i % 50), format!("uid-{i}")))
            .collect();
        let refs: Vec<(&str, &str)> = entries
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let text = LedgerCopy::of(&ledger(&refs, std::slice::from_ref(&key)), &key).encode();
        assert!(text.len() <= 10_000 * 43 + 16, "{} bytes", text.len());
        assert_eq!(LedgerCopy::decode(&text).unwrap().len(), 10_000);
        let fp = key.fingerprint();
        assert_eq!(
            LedgerCopy::decode(&format!("2;{fp};")),
            Some(LedgerCopy {
                key: fp.clone(),
                entries: BTreeMap::new()
            })
        );
        for bad in [
            String::new(),
            "garbage".into(),
            format!("1;{fp};"),
            "2;zz;".into(),
            format!("2;{fp};zz:00"),
            format!("2;{fp};0011223344556677:0011:"),
            format!("2;{fp};0011223344556677"),
            format!("2;{fp};0011223344556677:0011223344556677:xyz"),
            format!("2;{fp};0011223344556677:*,0011223344556677:*"),
        ] {
            assert_eq!(LedgerCopy::decode(&bad), None, "{bad}");
        }
    }
}
