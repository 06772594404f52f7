//! The write journal of an apply run: what a run wrote, name and UID, kept in the bridge's claim while the run is
//! still writing (see `docs/design/adr/0002-run-write-journal.md`).
//!
//! A run marks every object it writes with its run key (`RunKey::mark`, in the ownership module), so that a run that
//! dies before Terraform records the UIDs leaves objects the next run recognises. A mark proves who wrote a
//! *name*, not which object stands there now: a tenant who deletes such an object and creates it again with the
//! label and mark copied must not be taken for the bridge's. So the run also journals, in batches as its writes
//! return, a keyed digest of each object's name and of the UID the API server gave it. Where the journal of a run
//! names an object, that run's mark counts only for the UID journaled there; a recreated object has another UID
//! and is refused. A name the run wrote after its last batch reached the claim is not in its journal: there the
//! mark alone still counts. That tail is the residual window, bounded by [`BATCH_OBJECTS`] and
//! [`BATCH_INTERVAL`] plus the writes in flight.
//!
//! In the claim each batch is one data key, `written.<key fingerprint>.<batch number>`, whose value lists its
//! entries comma-separated: each the base64url (no padding) of 16 bytes, 8 of the keyed digest of
//! `"<Kind> namespace/name"` then 8 of the keyed digest of the UID. Digests are keyed with the run key (kept in
//! the claim, in the operator's namespace): nobody else can compute one. A run of an earlier version journals
//! nothing: its marks count as before.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// A batch is written once this many objects wait to be journaled.
pub const BATCH_OBJECTS: usize = 64;

/// ... or once the oldest of them has waited this long.
pub const BATCH_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// The prefix of the claim's data keys holding journal batches.
pub const DATA_PREFIX: &str = "written.";

type Digest8 = [u8; 8];

/// The keyed digest of a run (`RunKey::digest`, HMAC-SHA256 with the run's key), given by the caller: this module
/// knows no key.
pub trait Keyed: Fn(&[u8]) -> [u8; 32] {}

impl<F: Fn(&[u8]) -> [u8; 32]> Keyed for F {}

fn digest(keyed: &impl Keyed, what: &str, s: &str) -> Digest8 {
    let full = keyed(format!("journal {what} {s}").as_bytes());
    let mut out = [0u8; 8];
    out.copy_from_slice(&full[..8]);
    out
}

/// The journal entry of the object at `slot` (`"<Kind> namespace/name"`) with `uid`, digests keyed by `keyed`.
pub fn entry(keyed: impl Keyed, slot: &str, uid: &str) -> String {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&digest(&keyed, "name", slot));
    bytes[8..].copy_from_slice(&digest(&keyed, "uid", uid));
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The claim's data key of batch `n` of the run whose key has `fingerprint`.
pub fn batch_key(fingerprint: &str, n: u32) -> String {
    format!("{DATA_PREFIX}{fingerprint}.{n}")
}

/// The journals of the runs a claim holds: for each run key (by fingerprint), the UID digests journaled at each
/// name digest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Journals {
    runs: BTreeMap<String, BTreeMap<Digest8, BTreeSet<Digest8>>>,
    /// The data keys read, by fingerprint (to remove those of keys that left the claim).
    keys: BTreeMap<String, Vec<String>>,
    /// The bytes of the claim's data the batches read take (keys and values).
    bytes: usize,
}

impl Journals {
    /// Adds the batch read at the claim's data key `data_key` (ignored unless it is a journal batch; entries that
    /// do not decode are skipped).
    pub fn add_batch(&mut self, data_key: &str, value: &str) {
        let Some((fp, _n)) = data_key
            .strip_prefix(DATA_PREFIX)
            .and_then(|rest| rest.split_once('.'))
        else {
            return;
        };
        let run = self.runs.entry(fp.to_string()).or_default();
        for e in value.split(',') {
            let Some(bytes) = URL_SAFE_NO_PAD
                .decode(e)
                .ok()
                .and_then(|b| <[u8; 16]>::try_from(b.as_slice()).ok())
            else {
                continue;
            };
            let (mut name, mut uid) = ([0u8; 8], [0u8; 8]);
            name.copy_from_slice(&bytes[..8]);
            uid.copy_from_slice(&bytes[8..]);
            run.entry(name).or_default().insert(uid);
        }
        self.keys
            .entry(fp.to_string())
            .or_default()
            .push(data_key.to_string());
        self.bytes += data_key.len() + value.len();
    }

    /// The bytes of the claim's data the batches read take.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Whether the mark of the run whose key has `fingerprint` (digests by `keyed`) counts for the object at
    /// `slot` with `uid`: always for a run that journaled nothing (an earlier version's, or one that died before
    /// its first batch) and at a name its journal does not hold (written after its last batch); elsewhere only
    /// for a UID journaled at that name.
    pub fn admits(
        &self,
        fingerprint: &str,
        keyed: impl Keyed,
        slot: &str,
        uid: Option<&str>,
    ) -> bool {
        let Some(run) = self.runs.get(fingerprint) else {
            return true;
        };
        match run.get(&digest(&keyed, "name", slot)) {
            None => true,
            Some(uids) => uid.is_some_and(|u| uids.contains(&digest(&keyed, "uid", u))),
        }
    }

    /// Whether the run whose key has `fingerprint` journaled the object at `slot` with `uid`.
    pub fn journaled(&self, fingerprint: &str, keyed: impl Keyed, slot: &str, uid: &str) -> bool {
        self.runs
            .get(fingerprint)
            .and_then(|run| run.get(&digest(&keyed, "name", slot)))
            .is_some_and(|uids| uids.contains(&digest(&keyed, "uid", uid)))
    }

    /// The data keys of the batches of runs whose key fingerprint is not among `kept` (to remove from the claim).
    pub fn stale_keys(&self, kept: &[String]) -> Vec<String> {
        self.keys
            .iter()
            .filter(|(fp, _)| !kept.contains(fp))
            .flat_map(|(_, keys)| keys.iter().cloned())
            .collect()
    }

    /// Number of batches read.
    pub fn batches(&self) -> usize {
        self.keys.values().map(Vec::len).sum()
    }
}

/// The objects of one run waiting to be journaled, and when the first of them started waiting (in the caller's
/// clock, as seconds or any monotonic unit it likes): pure bookkeeping of [`BATCH_OBJECTS`] and
/// [`BATCH_INTERVAL`], the IO is the caller's.
#[derive(Debug)]
pub struct Pending<T> {
    entries: Vec<String>,
    since: Option<T>,
    next: u32,
}

impl<T> Default for Pending<T> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            since: None,
            next: 0,
        }
    }
}

impl<T: Copy> Pending<T> {
    /// Adds an entry, waiting since `now` if it is the first.
    pub fn push(&mut self, entry: String, now: T) {
        self.entries.push(entry);
        self.since.get_or_insert(now);
    }

    /// Whether a batch is due: [`BATCH_OBJECTS`] entries wait, or the first has waited `waited(since)` past
    /// [`BATCH_INTERVAL`].
    pub fn due(&self, waited: impl Fn(T) -> std::time::Duration) -> bool {
        self.entries.len() >= BATCH_OBJECTS
            || self.since.is_some_and(|s| waited(s) >= BATCH_INTERVAL)
    }

    /// Takes the entries waiting as batch number `n` (`None` when none wait).
    pub fn take(&mut self) -> Option<(u32, Vec<String>)> {
        if self.entries.is_empty() {
            return None;
        }
        self.since = None;
        let n = self.next;
        self.next += 1;
        Some((n, std::mem::take(&mut self.entries)))
    }

    /// Puts back the entries of a batch that could not be written (they go with the next one).
    pub fn put_back(&mut self, entries: Vec<String>, now: T) {
        self.entries.extend(entries);
        self.since.get_or_insert(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for a run key's HMAC (this module knows no key): SHA-256 of the key byte and the message.
    fn keyed(k: u8) -> impl Keyed {
        move |m: &[u8]| -> [u8; 32] {
            use sha2::{Digest, Sha256};
            Sha256::new()
                .chain_update([k])
                .chain_update(m)
                .finalize()
                .into()
        }
    }

    #[test]
    fn a_journaled_name_admits_only_its_uid_and_a_name_after_the_last_batch_any() {
        let (k1, k2) = (("f1", keyed(1)), ("f2", keyed(2)));
        let sc = "SveltosCluster a/c1";
        let secret = "Secret a/c1-sveltos-kubeconfig";
        let mut j = Journals::default();
        assert!(
            j.admits(k1.0, &k1.1, sc, Some("u-tenant")),
            "no journal: an earlier version's run"
        );
        let batch = [entry(&k1.1, sc, "u1"), entry(&k1.1, secret, "u2")];
        j.add_batch(&batch_key(k1.0, 0), &batch.join(","));
        assert!(j.admits(k1.0, &k1.1, sc, Some("u1")));
        assert!(j.journaled(k1.0, &k1.1, sc, "u1"));
        assert!(
            !j.admits(k1.0, &k1.1, sc, Some("u-tenant")),
            "recreated with the mark copied"
        );
        assert!(!j.admits(k1.0, &k1.1, sc, None));
        assert!(j.admits(k1.0, &k1.1, secret, Some("u2")));
        assert!(
            !j.admits(k1.0, &k1.1, secret, Some("u1")),
            "the UID is the one journaled at that name"
        );
        assert!(
            j.admits(k1.0, &k1.1, "SveltosCluster a/c2", Some("u3")),
            "the tail: after the last batch"
        );
        assert!(
            j.admits(k2.0, &k2.1, sc, Some("u-tenant")),
            "another run's journal is its own"
        );
        // Garbage is skipped, other keys ignored.
        j.add_batch(&batch_key(k1.0, 1), "!!,AAAA");
        j.add_batch("run", "x");
        assert_eq!(j.batches(), 2);
        assert_eq!(j.stale_keys(&["f1".into()]), Vec::<String>::new());
        assert_eq!(
            j.stale_keys(&["f2".into()]),
            vec![batch_key("f1", 0), batch_key("f1", 1)]
        );
    }

    /// The extra writes a journal costs: one batch per [`BATCH_OBJECTS`] objects when writes are faster than
    /// [`BATCH_INTERVAL`], one per interval otherwise; at N = 1,000 clusters (2,000 objects written) 32 batches
    /// (1.6 % more writes) when every write returns within the interval. The residual window is what waits
    /// unwritten: never more than [`BATCH_OBJECTS`] entries, none older than [`BATCH_INTERVAL`] once due.
    #[test]
    fn batches_per_objects_and_per_interval() {
        let mut p: Pending<u64> = Pending::default();
        let mut batches = 0;
        for i in 0..2_000u64 {
            p.push(format!("e{i}"), i);
            // Fast writes: a millisecond apart.
            if p.due(|since| std::time::Duration::from_millis(i - since)) {
                let (_, taken) = p.take().unwrap();
                assert!(taken.len() <= BATCH_OBJECTS);
                batches += 1;
            }
        }
        batches += usize::from(p.take().is_some());
        assert_eq!(batches, 2_000usize.div_ceil(BATCH_OBJECTS));
        assert_eq!(batches, 32);
        // Slow writes: a batch once the first entry has waited the interval.
        let mut p: Pending<u64> = Pending::default();
        p.push("a".into(), 0);
        assert!(!p.due(|s| std::time::Duration::from_millis(500 - s)));
        assert!(p.due(|s| std::time::Duration::from_millis(1_000 - s)));
        let (n, entries) = p.take().unwrap();
        assert_eq!((n, entries.len()), (0, 1));
        p.put_back(entries, 5);
        assert_eq!(p.take().map(|(n, e)| (n, e.len())), Some((1, 1)));
        assert!(p.take().is_none());
    }
}
