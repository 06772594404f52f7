//! Ownership that a label cannot forge. The bridge labels what it writes (`sveltos.clusterinventory.io/bridge`),
//! but anyone who can create objects in a namespace can copy a label. So the bridge also records the UID the API
//! server gave each object it created (or that the operator explicitly adopted or imported) in the resource's
//! private state, which only Terraform holds: an object is this bridge's when it carries the label **and** its
//! UID is recorded. An object that only carries the label is an impostor: never updated, never deleted, reported.
//!
//! A run that dies between writing an object and returning its UID to Terraform leaves objects the next run
//! recognises by their run mark ([`RunKey`]). A mark proves who wrote *a* name, not which object is there now: a
//! tenant who deletes the bridge's object and recreates it with the mark copied must not be recognised. So the
//! ledger also remembers, for each recorded name and for each name it recorded and no longer owns (a
//! tombstone: deleted by the bridge, found gone or replaced), the newest run key at that time ([`Since`]):
//! there, only the marks of later runs count. At a name the ledger never held, a run that died after writing an
//! object left nothing in the ledger: there the run's write journal in the claim ([`super::journal`]) holds the
//! UID it was given, and a mark counts only for that UID (but for the last objects a run wrote before it died,
//! which no batch of its journal reached: the residual window the journal's module bounds).
//!
//! The ledger also keeps, for each kubeconfig Secret the bridge wrote, what it wrote there ([`WrittenCredential`]:
//! the kubeconfig's SHA-256, the credential's expiry and, for an exec credential, the settings that minted it).
//! The Secret's own annotations say the same, but whoever can patch the Secret writes them: an exec credential is
//! reused only while the Secret's data has the recorded hash, until the recorded expiry. A ledger without a record
//! for a Secret (one written before records were kept, or an import) verifies nothing there: its exec credential
//! is minted again and written once.
//!
//! States written before UIDs were recorded (v0.1) carry no ledger; for them the object names listed in the
//! state's own `clusters` attribute (which only Terraform writes) are trusted once, and the next apply records
//! their UIDs.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::journal::Journals;

/// The kinds of objects the bridge owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A SveltosCluster.
    SveltosCluster,
    /// A kubeconfig Secret.
    Secret,
}

impl Kind {
    /// The kind's name, as in `Secret ns/name`.
    pub fn prefix(self) -> &'static str {
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
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// Format version: read as stored, always written as [`FORMAT`].
    #[serde(default, serialize_with = "format_version")]
    v: u32,
    /// `"<Kind> namespace/name"` to UID.
    #[serde(default)]
    objects: BTreeMap<String, String>,
    /// `"<Kind> namespace/name"` of a recorded object to the fingerprint of the newest run key when it was
    /// recorded: a mark at that name counts only from a later run. A recorded name without one (a ledger
    /// written before fingerprints were kept) accepts no mark.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    since: BTreeMap<String, String>,
    /// Names this ledger recorded and no longer owns (the bridge deleted the object, or found it gone or
    /// replaced), to the fingerprint of the newest run key at the time: a mark there counts only from a later run,
    /// so a recreated object carrying a copied mark is not taken for the bridge's own. Dropped once that key has
    /// left the claim (every kept key is then later).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    tombstones: BTreeMap<String, String>,
    /// Legacy states only: `"<Kind> namespace/name"` trusted by name (not serialized).
    #[serde(skip)]
    trusted_names: BTreeSet<String>,
    /// After `import`: every object carrying the bridge's label is taken over at the next read (not serialized).
    #[serde(skip)]
    take_over_labelled: bool,
    /// The run keys of the claim (see [`Mark`]; not serialized: they stay in the claim).
    #[serde(skip)]
    run_keys: Vec<RunKey>,
    /// The journals of those runs (see [`super::journal`]; not serialized: they stay in the claim).
    #[serde(skip)]
    journals: Journals,
    /// A digest of the inventory reads of the configuration last applied (namespaces, credential label and
    /// consumer): a refresh reads ahead for the plan only with settings an apply recorded here, never with a
    /// configuration that came from the cluster (an import).
    #[serde(default)]
    reads: Option<String>,
    /// `namespace/name` of each recorded kubeconfig Secret to what the bridge last wrote in it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    written: BTreeMap<String, WrittenCredential>,
    /// After `import`, until this state's first apply: the instance id of the state whose claim the import found.
    /// This state then has an instance id of its own, and its next apply takes the claim over from that one,
    /// whose next plan fails (two states never manage one bridge, whichever of them is alive).
    #[serde(default)]
    takes_over: Option<String>,
    /// How the state's `clusters` was last answered with this private state, or with an earlier one (see
    /// [`Answered`]). Not about ownership: it rides with the ledger because the ledger is the private state.
    #[serde(rename = "cl", default)]
    answered: Option<Answered>,
}

/// The record of one answer of the state's `clusters` attribute: the SHA-256 of the entries it was built from (as
/// the mapping layer hashes them) and of the msgpack bytes the provider sent for it. It is a fact about bytes,
/// true whatever state it is stored with: bytes with that hash hold the value of those entries. A later request
/// whose `clusters` bytes have that hash, for entries with that hash, answers them as received, without decoding
/// or encoding them; any other bytes (a state edited by hand, another answer since) are decoded or encoded as
/// usual.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answered {
    /// SHA-256 (hex) of the entries.
    #[serde(rename = "e")]
    pub entries_sha256: String,
    /// SHA-256 (hex) of the msgpack bytes.
    #[serde(rename = "b")]
    pub bytes_sha256: String,
}

/// What the bridge wrote in one of its kubeconfig Secrets, as the ledger keeps it: the only record of it that the
/// tenants of the Secret's namespace cannot rewrite (the Secret's annotations say the same, and anyone who can
/// patch the Secret can change them).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrittenCredential {
    /// SHA-256 (hex) of the kubeconfig written.
    #[serde(rename = "sha")]
    pub kubeconfig_sha256: String,
    /// The credential's expiry (RFC 3339), as the exec plugin gave it.
    #[serde(rename = "exp", default)]
    pub expires_at: Option<String>,
    /// For an exec credential: the hash of the exec settings that minted it.
    #[serde(rename = "cfg", default)]
    pub config_sha256: Option<String>,
    /// The bridge wrote the token-renewal annotation with it: renewal was judged enabled for this cluster (not
    /// withheld), so Sveltos may rewrite the data. Only then does the recorded hash stand for the Secret's data
    /// ([`ObservedSecret::sha`](crate::domain::observed::ObservedSecret::sha)); a tenant who adds the annotation
    /// to another Secret cannot change this record. Absent (a record of a development build): `false`.
    #[serde(rename = "ren", default, skip_serializing_if = "std::ops::Not::not")]
    pub renewal: bool,
    /// The Secret's `resourceVersion` in the API server's answer to the write, when that answer held the kubeconfig
    /// written. Every later write of the Secret (a tenant's, Sveltos' renewal) changes it, so while the Secret
    /// (same UID) still has it, it holds what was written: its body need not be read again
    /// ([`crate::domain::observed::Observed::sort_labelled`]). `None`: read it.
    #[serde(rename = "rv", default)]
    pub resource_version: Option<String>,
    /// The kubeconfig copied here, as the apply that last wrote or kept it checked it: the
    /// [`source_sha256`](crate::domain::credentials::source_sha256) of the source's bytes (keyed by this build and
    /// the kubeconfig policy) whose checked, rewritten form has the hash recorded above. A plan that finds the same
    /// bytes under the same build and policy takes that hash without parsing them again; apply always checks.
    /// `None`: not copied (an exec credential), or not recorded.
    #[serde(rename = "src", default)]
    pub source_sha256: Option<String>,
}

/// The private-state marker `import` leaves for the read that follows it.
pub const IMPORTED: &[u8] = b"imported";

/// The format version of the ledger this build writes.
const FORMAT: u32 = 1;

fn format_version<S: serde::Serializer>(_: &u32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u32(FORMAT)
}

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

    /// This ledger recording how `clusters` was answered with it (see [`Answered`]).
    pub fn with_answered(mut self, answered: Answered) -> Self {
        self.answered = Some(answered);
        self
    }

    /// How `clusters` was last answered, as recorded.
    pub fn answered(&self) -> Option<&Answered> {
        self.answered.as_ref()
    }

    /// The private state to store (what is not stored, see [`Ledger::into_stored`], is left out).
    pub fn to_private(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// This ledger as [`Ledger::from_private`] reads back what [`Ledger::to_private`] writes of it: without the
    /// run keys and journals (they stay in the claim), names trusted for a legacy state, or an import's take-over.
    pub fn into_stored(self) -> Self {
        // Every field named: one added later must be sorted into stored or not here.
        let Self {
            v: _,
            objects,
            since,
            tombstones,
            trusted_names: _,
            take_over_labelled: _,
            run_keys: _,
            journals: _,
            reads,
            written,
            takes_over,
            answered,
        } = self;
        Self {
            v: FORMAT,
            objects,
            since,
            tombstones,
            trusted_names: BTreeSet::new(),
            take_over_labelled: false,
            run_keys: Vec::new(),
            journals: Journals::default(),
            reads,
            written,
            takes_over,
            answered,
        }
    }

    /// This ledger recognising the marks of `keys` (the run keys of the bridge's claim).
    pub fn with_run_keys(mut self, keys: Vec<RunKey>) -> Self {
        self.run_keys = keys;
        self
    }

    /// This ledger checking marks against the journals of the claim's runs (see [`super::journal`]).
    pub fn with_journals(mut self, journals: Journals) -> Self {
        self.journals = journals;
        self
    }

    /// Whether the object `id` of `kind` with `uid` (already known to carry the bridge's label) is owned.
    pub fn owns(&self, kind: Kind, id: &str, uid: Option<&str>) -> bool {
        self.owns_marked(kind, id, uid, None)
    }

    /// [`Ledger::owns`], or, for an object carrying `mark` (its [`MARK_ANNOTATION`]) made with one of the claim's
    /// run keys, an object a run of this state created and that run died before the state recorded its UID. At a
    /// name this ledger recorded or holds a tombstone for, only the marks of runs later than [`Since`] count; where
    /// the journal of the run that made the mark names the object, only for the UID journaled there.
    pub fn owns_marked(&self, kind: Kind, id: &str, uid: Option<&str>, mark: Option<&str>) -> bool {
        let key = slot(kind, id);
        if self.take_over_labelled || self.trusted_names.contains(&key) {
            return true;
        }
        let since = match self.objects.get(&key) {
            Some(recorded) if uid.is_some_and(|u| u == recorded) => return true,
            Some(_) => self
                .since
                .get(&key)
                .map_or(Since::Never, |fp| Since::After(fp)),
            None => self
                .tombstones
                .get(&key)
                .map_or(Since::Any, |fp| Since::After(fp)),
        };
        mark.is_some_and(|m| {
            since
                .keys(&self.run_keys)
                .iter()
                .any(|k| k.mark(kind, id) == m && k.admitted_by(&self.journals, kind, id, uid))
        })
    }

    /// Whether an object at `id` with `uid` is one this bridge recorded (whatever its labels say now).
    pub fn recorded(&self, kind: Kind, id: &str, uid: Option<&str>) -> bool {
        uid.is_some_and(|u| self.objects.get(&slot(kind, id)).is_some_and(|r| r == u))
    }

    /// Records an object the bridge created, adopted or imported (a mark at its name now counts only from a
    /// later run).
    pub fn record(&mut self, kind: Kind, id: &str, uid: &str) {
        let newest = self.newest_key();
        self.record_since(slot(kind, id), uid.to_string(), newest.as_deref());
    }

    /// [`Ledger::record`] of the object at `key`, the newest run key's fingerprint being `newest`.
    fn record_since(&mut self, key: String, uid: String, newest: Option<&str>) {
        self.trusted_names.remove(&key);
        self.tombstones.remove(&key);
        if let Some(newest) = newest {
            self.since.insert(key.clone(), newest.to_string());
        }
        self.objects.insert(key, uid);
    }

    /// Records what the bridge wrote in its kubeconfig Secret `id` (replacing what was recorded there).
    pub fn record_written(&mut self, id: &str, credential: WrittenCredential) {
        self.written.insert(id.to_string(), credential);
    }

    /// Records that the kubeconfig in Secret `id` is the checked form of the source whose
    /// [`WrittenCredential::source_sha256`] is `source`, when what is recorded there has the hash `written` (what
    /// the apply that checked the source would write); anything else recorded there is left as it is.
    pub fn record_source(&mut self, id: &str, written: &str, source: String) {
        if let Some(w) = self.written.get_mut(id)
            && w.kubeconfig_sha256 == written
        {
            w.source_sha256 = Some(source);
        }
    }

    /// The [`WrittenCredential::source_sha256`] recorded of every Secret.
    pub fn checked_sources(&self) -> impl Iterator<Item = &str> {
        self.written
            .values()
            .filter_map(|w| w.source_sha256.as_deref())
    }

    /// What the bridge last wrote in its kubeconfig Secret `id`, if recorded.
    pub fn written(&self, id: &str) -> Option<&WrittenCredential> {
        self.written.get(id)
    }

    /// Trusts an object by name until its UID is recorded: used only after an apply that timed out, for the
    /// names that apply was writing (their UIDs are recorded by the read that follows).
    pub fn trust_name(&mut self, kind: Kind, id: &str) {
        self.trusted_names.insert(slot(kind, id));
    }

    /// Forgets a deleted object, leaving a tombstone at its name.
    pub fn forget(&mut self, kind: Kind, id: &str) {
        let key = slot(kind, id);
        self.trusted_names.remove(&key);
        if kind == Kind::Secret {
            self.written.remove(id);
        }
        if self.objects.remove(&key).is_some() {
            self.bury(key);
        }
    }

    /// The ledger that follows this one once `owned` (kind, `namespace/name`, UID) is all the bridge owns: the
    /// same run keys, those objects recorded (with what was recorded written in the Secrets among them), a
    /// tombstone at every name recorded here and not owned any more (gone, or replaced by someone else's object),
    /// and the tombstones still in force.
    pub fn successor(&self, owned: impl IntoIterator<Item = (Kind, String, String)>) -> Ledger {
        let mut next = Ledger {
            run_keys: self.run_keys.clone(),
            journals: self.journals.clone(),
            tombstones: self.tombstones.clone(),
            since: self.since.clone(),
            ..Ledger::default()
        };
        // One fingerprint for them all (a hash each, ten thousands of times, was a share of a refresh).
        let newest = next.newest_key();
        for (kind, id, uid) in owned {
            next.record_since(slot(kind, &id), uid, newest.as_deref());
        }
        for key in self.objects.keys() {
            if !next.objects.contains_key(key) {
                next.bury(key.clone());
            }
        }
        let kept: BTreeSet<&String> = next.objects.keys().collect();
        next.since.retain(|k, _| kept.contains(k));
        // A version stands for the object it was read from: another object at that name (another UID) has it
        // read again.
        next.written = self
            .written
            .iter()
            .filter(|(id, _)| kept.contains(&slot(Kind::Secret, id)))
            .map(|(id, w)| {
                let key = slot(Kind::Secret, id);
                let mut w = w.clone();
                if self.objects.get(&key) != next.objects.get(&key) {
                    w.resource_version = None;
                }
                (id.clone(), w)
            })
            .collect();
        next.takes_over = self.takes_over.clone();
        next.prune();
        next
    }

    /// The instance id of the state whose claim this state takes over at its next apply (see `takes_over`).
    pub fn takes_over(&self) -> Option<&str> {
        self.takes_over.as_deref()
    }

    /// This ledger, taking the claim of instance `from` over at the next apply (`None`: taking nothing over).
    pub fn taking_over(mut self, from: Option<String>) -> Self {
        self.takes_over = from;
        self
    }

    /// A tombstone at `key`, with the run key of its record (or the newest one).
    fn bury(&mut self, key: String) {
        let since = self.since.remove(&key).or_else(|| self.newest_key());
        // Without any run key known, no mark can be checked now, and every later key is later anyway.
        if let Some(fp) = since {
            self.tombstones.insert(key, fp);
        }
    }

    /// Drops the tombstones whose run key has left the claim: every kept key is later.
    fn prune(&mut self) {
        if self.run_keys.is_empty() {
            return;
        }
        let kept: BTreeSet<String> = self.run_keys.iter().map(RunKey::fingerprint).collect();
        self.tombstones.retain(|_, fp| kept.contains(fp));
    }

    fn newest_key(&self) -> Option<String> {
        self.run_keys.last().map(RunKey::fingerprint)
    }

    /// The tombstones of `kind`: `(namespace/name, fingerprint)`.
    pub fn tombstones_of(&self, kind: Kind) -> impl Iterator<Item = (&str, &str)> {
        of_kind(&self.tombstones, kind)
    }

    /// The fingerprint of the run key recorded with object `id` of `kind`.
    pub fn since_of(&self, kind: Kind, id: &str) -> Option<&str> {
        self.since.get(&slot(kind, id)).map(String::as_str)
    }

    /// A ledger that owns every labelled object (tests of the layers above ownership).
    #[cfg(test)]
    pub fn trusting() -> Self {
        Self {
            take_over_labelled: true,
            ..Self::default()
        }
    }

    /// The namespaces of every name this ledger holds (recorded, trusted by name, or tombstoned): where what the
    /// bridge owns may be besides the namespaces it selects now. `None` after an import, which takes over labelled
    /// objects wherever they are.
    pub fn namespaces(&self) -> Option<BTreeSet<String>> {
        if self.take_over_labelled {
            return None;
        }
        let names = self
            .objects
            .keys()
            .chain(self.since.keys())
            .chain(self.tombstones.keys())
            .chain(self.trusted_names.iter());
        Some(
            names
                .filter_map(|slot| slot.split_once(' ')?.1.split_once('/'))
                .map(|(ns, _)| ns.to_string())
                .collect(),
        )
    }

    /// The recorded objects of `kind`: `(namespace/name, UID)`.
    pub fn recorded_of(&self, kind: Kind) -> impl Iterator<Item = (&str, &str)> {
        of_kind(&self.objects, kind)
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

fn of_kind(map: &BTreeMap<String, String>, kind: Kind) -> impl Iterator<Item = (&str, &str)> {
    let prefix = format!("{} ", kind.prefix());
    map.iter()
        .filter_map(move |(slot, v)| Some((slot.strip_prefix(&prefix)?, v.as_str())))
}

/// Which run keys' marks count at a name: [`Since::Any`] at a name never recorded, [`Since::After`] (the
/// fingerprint of the newest run key when the name was recorded or buried) at a recorded name whose object has
/// another UID or at a tombstone, [`Since::Never`] at a name recorded before fingerprints were kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since<'a> {
    /// Every kept key.
    Any,
    /// The keys kept after the one with this fingerprint (all of them once it has left the claim).
    After(&'a str),
    /// None.
    Never,
}

impl Since<'_> {
    /// The keys of `keys` (oldest first, as in the claim) whose marks count.
    pub fn keys(self, keys: &[RunKey]) -> &[RunKey] {
        match self {
            Self::Any => keys,
            Self::Never => &[],
            Self::After(fp) => match keys.iter().position(|k| k.fingerprint() == fp) {
                Some(i) => &keys[i + 1..],
                None => keys,
            },
        }
    }
}

/// The annotation by which an object says which run of which state wrote it: [`RunKey::mark`].
pub const MARK_ANNOTATION: &str = "sveltos.clusterinventory.io/written-by";

/// A secret of one apply run, kept in the bridge's claim (in the operator's namespace, which tenants cannot
/// read): every object the run writes carries `HMAC-SHA256(key, "<Kind> namespace/name")` in
/// [`MARK_ANNOTATION`]. A run that dies between writing an object and returning its UID to Terraform leaves an
/// object that the next run of the same state recognises by that mark ([`Ledger::owns_marked`]): nobody without
/// the key can produce the mark for a name, and a mark copied from one object is wrong for every other name.
#[derive(Clone, PartialEq, Eq)]
pub struct RunKey([u8; 32]);

impl std::fmt::Debug for RunKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunKey(<redacted>)")
    }
}

impl RunKey {
    /// A key from its hex form (as stored in the claim).
    pub fn from_hex(s: &str) -> Option<Self> {
        let bytes = hex::decode(s).ok()?;
        Some(Self(bytes.try_into().ok()?))
    }

    /// Its hex form.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// A key made from 32 bytes of randomness.
    pub fn new(random: [u8; 32]) -> Self {
        Self(random)
    }

    /// The key's public name (the first 4 bytes of its SHA-256, in hex), kept in ledgers to order runs.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        hex::encode(&Sha256::digest(self.0)[..4])
    }

    /// A keyed digest of `message` (HMAC-SHA256), for readers that hold the key.
    pub fn digest(&self, message: &[u8]) -> [u8; 32] {
        hmac_sha256(&self.0, message)
    }

    /// The mark of object `id` of `kind` written by this run.
    pub fn mark(&self, kind: Kind, id: &str) -> String {
        hex::encode(hmac_sha256(&self.0, slot(kind, id).as_bytes()))
    }

    /// The entry of this run's write journal for object `id` of `kind` with `uid` ([`super::journal`]).
    pub fn journal_entry(&self, kind: Kind, id: &str, uid: &str) -> String {
        super::journal::entry(|m: &[u8]| self.digest(m), &slot(kind, id), uid)
    }

    /// The claim's data key of batch `n` of this run's write journal.
    pub fn journal_batch_key(&self, n: u32) -> String {
        super::journal::batch_key(&self.fingerprint(), n)
    }

    /// Whether `journals` let this run's mark count for object `id` of `kind` with `uid`: the run journaled
    /// nothing at that name, or that UID there ([`Journals::admits`]).
    pub fn admitted_by(
        &self,
        journals: &Journals,
        kind: Kind,
        id: &str,
        uid: Option<&str>,
    ) -> bool {
        journals.admits(
            &self.fingerprint(),
            |m: &[u8]| self.digest(m),
            &slot(kind, id),
            uid,
        )
    }

    /// Whether this run journaled object `id` of `kind` with `uid` in `journals`.
    pub fn journaled_in(&self, journals: &Journals, kind: Kind, id: &str, uid: &str) -> bool {
        journals.journaled(
            &self.fingerprint(),
            |m: &[u8]| self.digest(m),
            &slot(kind, id),
            uid,
        )
    }
}

/// HMAC-SHA256 (RFC 2104) over `sha2`, which is already a dependency: ten lines instead of another crate.
fn hmac_sha256(key: &[u8; 32], message: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut inner = Sha256::new();
    let mut outer = Sha256::new();
    let mut block = [0u8; 64];
    block[..32].copy_from_slice(key);
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(message);
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// The apply run recorded in a claim: who is applying, since when, and whether it finished.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// `host:pid` of the provider process applying.
    pub holder: String,
    /// When the run started (RFC 3339).
    pub started: String,
    /// Until when a run that has not finished counts as alive wherever it runs (RFC 3339): its start plus the
    /// apply's timeout.
    pub until: String,
    /// Whether the run finished (the provider returned its state to Terraform).
    pub done: bool,
    /// Whether it was the bridge's first apply (its state had no bridge yet): only such a run, once dead, may be
    /// taken over by a state without the bridge; a later run belongs to a state that has it.
    pub first: bool,
    /// Whether the run answered Terraform with an error (`None`: not finished, or recorded by a version that did
    /// not say). A first apply that failed is what Terraform marks tainted.
    #[serde(default)]
    pub failed: Option<bool>,
}

impl Run {
    /// Whether this run may be a first apply that failed (so that Terraform marked its bridge tainted): a first
    /// apply that failed, or whose end was recorded by a version that did not say how it ended.
    pub fn may_have_failed_first(&self) -> bool {
        self.first && self.failed != Some(false)
    }
}

/// The claim a bridge name holds on a management cluster: one ConfigMap per bridge name, holding a random
/// instance id (also in the bridge's state) and the bridge's configuration record (for `import`). A second state
/// using the same name finds the claim with another instance id and stops before it writes anything. It also
/// holds the run keys of the last runs ([`RunKey`]) and the last run ([`Run`]), with which a run that died is
/// recovered from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The instance id of the state that holds the name.
    pub instance: String,
    /// The configuration record (the bridge's arguments as JSON, no secrets).
    pub config: Option<String>,
    /// Run keys, newest last (at most [`KEPT_RUN_KEYS`]).
    pub keys: Vec<RunKey>,
    /// The last apply run.
    pub run: Option<Run>,
    /// The SveltosClusters the bridge recorded at the end of its last apply, encoded
    /// ([`super::ledger_copy::LedgerCopy`]), for readers without the state.
    pub ledger_copy: Option<String>,
    /// The bridge's `skipped` at the end of its last apply, encoded ([`super::skipped_record`]), for `import`.
    pub skipped: Option<String>,
    /// The write journals of the runs whose keys the claim holds ([`super::journal`]), written in batches while
    /// each run writes (never by the claim's own write).
    pub journals: Journals,
}

/// How many run keys a claim keeps: the current run's and those of the runs before it, so that objects of a run
/// whose state Terraform did not save (a CLI killed right after the provider answered) are still recognised.
pub const KEPT_RUN_KEYS: usize = 3;

impl Claim {
    /// A claim of `instance` with `config`, no runs yet.
    pub fn new(instance: String, config: Option<String>) -> Self {
        Self {
            instance,
            config,
            keys: Vec::new(),
            run: None,
            ledger_copy: None,
            skipped: None,
            journals: Journals::default(),
        }
    }

    /// Whether the last run of this claim is a first apply that died: it never finished, and either its holder is
    /// a process of this host that no longer exists (`alive` answers for `host:pid` holders of this host) or its
    /// time is up.
    pub fn abandoned(&self, now: jiff::Timestamp, alive: impl Fn(&str) -> Option<bool>) -> bool {
        let Some(run) = &self.run else {
            return false;
        };
        if run.done || !run.first {
            return false;
        }
        if alive(&run.holder) == Some(false) {
            return true;
        }
        run.until
            .parse::<jiff::Timestamp>()
            .is_ok_and(|until| now > until)
    }
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
/// existed when `legacy`) may use the name that `claim` holds. A new resource may take over a claim whose first
/// apply died ([`Claim::abandoned`], decided by the caller and passed as `abandoned`).
pub fn check_claim(
    bridge: &str,
    claim_id: &str,
    mine: Option<&str>,
    legacy: bool,
    claim: Option<&Claim>,
    abandoned: bool,
) -> Result<(), ClaimConflict> {
    let Some(claim) = claim else {
        return Ok(());
    };
    match mine {
        Some(m) if m == claim.instance => Ok(()),
        None if legacy || abandoned => Ok(()),
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

    /// What is unset is left out of the private state and the claim (never written `null`): the encoding older
    /// and newer versions read.
    #[test]
    fn what_is_unset_is_left_out_of_the_ledger_and_the_run() {
        let ledger = String::from_utf8(Ledger::default().to_private()).unwrap();
        assert_eq!(ledger, r#"{"v":1,"objects":{}}"#);
        let written = WrittenCredential {
            kubeconfig_sha256: "h".into(),
            expires_at: None,
            config_sha256: None,
            renewal: false,
            resource_version: None,
            source_sha256: None,
        };
        assert_eq!(serde_json::to_string(&written).unwrap(), r#"{"sha":"h"}"#);
        let run = Run {
            holder: "h:1".into(),
            started: "s".into(),
            until: "u".into(),
            done: true,
            first: false,
            failed: None,
        };
        assert!(!serde_json::to_string(&run).unwrap().contains("failed"));
    }

    /// What a refresh hands to the plan after it in memory is what the plan would read from the private state it
    /// returned: every stored field kept, nothing that is not stored (run keys, journals, legacy names, an
    /// import's take-over), and the format version written whatever was read.
    #[test]
    fn a_stored_ledger_is_what_its_private_state_reads_back() {
        let mut l = Ledger::from_private(b"", || vec![(Kind::Secret, "a/legacy".into())]).unwrap();
        l.v = 0;
        l = l.with_run_keys(vec![RunKey::new([1; 32]), RunKey::new([2; 32])]);
        l.record(Kind::SveltosCluster, "a/c1", "u1");
        l.record(Kind::Secret, "a/c1-sveltos-kubeconfig", "u2");
        l.bury(slot(Kind::SveltosCluster, "a/gone"));
        l.record_written(
            "a/c1-sveltos-kubeconfig",
            WrittenCredential {
                kubeconfig_sha256: "h".into(),
                expires_at: Some("e".into()),
                config_sha256: Some("c".into()),
                renewal: true,
                resource_version: Some("7".into()),
                source_sha256: None,
            },
        );
        l.take_over_labelled = true;
        let l = l
            .with_reads(Some("r".into()))
            .taking_over(Some("i-0".into()))
            .with_answered(Answered {
                entries_sha256: "e".into(),
                bytes_sha256: "b".into(),
            });
        let read_back = Ledger::from_private(&l.to_private(), Vec::new).unwrap();
        let stored = l.clone().into_stored();
        assert_eq!(read_back, stored);
        assert_eq!(stored.to_private(), l.to_private());
        assert_eq!((stored.v, stored.run_keys.len()), (FORMAT, 0));
        assert!(stored.trusted_names.is_empty() && !stored.take_over_labelled);
        assert_eq!(
            stored.since_of(Kind::SveltosCluster, "a/c1"),
            l.since_of(Kind::SveltosCluster, "a/c1")
        );
        assert!(stored.since_of(Kind::SveltosCluster, "a/c1").is_some());
    }

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
        let claim = Claim::new("i-1".into(), None);
        assert!(check_claim("b", "default/c", None, false, None, false).is_ok());
        assert!(check_claim("b", "default/c", Some("i-1"), false, Some(&claim), false).is_ok());
        let e = check_claim("b", "default/c", None, false, Some(&claim), false).unwrap_err();
        assert!(
            e.to_string().contains("default/c") && e.to_string().contains("i-1"),
            "{e}"
        );
        assert!(check_claim("b", "default/c", Some("i-2"), false, Some(&claim), false).is_err());
        // A state written before claims existed takes the claim over at its next apply.
        assert!(check_claim("b", "default/c", None, true, Some(&claim), false).is_ok());
        // A new resource takes over the claim of a first apply that died; another state never does.
        assert!(check_claim("b", "default/c", None, false, Some(&claim), true).is_ok());
        assert!(check_claim("b", "default/c", Some("i-2"), false, Some(&claim), true).is_err());
    }

    #[test]
    fn a_claim_is_abandoned_only_by_a_first_apply_that_died() {
        let now = jiff::Timestamp::from_second(1_800_000_000).unwrap();
        let run = |done, first, until: i64| Run {
            holder: "host-a:42".into(),
            started: now.to_string(),
            until: jiff::Timestamp::from_second(1_800_000_000 + until)
                .unwrap()
                .to_string(),
            done,
            first,
            failed: None,
        };
        let claim = |r: Option<Run>| Claim {
            run: r,
            ..Claim::new("i".into(), None)
        };
        let unknown = |_: &str| None;
        let dead = |_: &str| Some(false);
        let alive = |_: &str| Some(true);
        assert!(!claim(None).abandoned(now, dead));
        assert!(
            claim(Some(run(false, true, 60))).abandoned(now, dead),
            "its process is gone"
        );
        assert!(!claim(Some(run(false, true, 60))).abandoned(now, alive));
        assert!(
            !claim(Some(run(false, true, 60))).abandoned(now, unknown),
            "another host, time not up"
        );
        assert!(
            claim(Some(run(false, true, -1))).abandoned(now, unknown),
            "time is up"
        );
        assert!(
            !claim(Some(run(true, true, -1))).abandoned(now, dead),
            "it finished"
        );
        assert!(
            !claim(Some(run(false, false, -1))).abandoned(now, dead),
            "a later run of a state that has it"
        );
    }

    #[test]
    fn a_run_tells_how_it_ended_and_older_records_read() {
        let recorded = r#"{"holder":"h:1","started":"s","until":"u","done":true,"first":true}"#;
        let older: Run = serde_json::from_str(recorded).unwrap();
        assert_eq!(older.failed, None);
        assert!(older.may_have_failed_first(), "an older record cannot tell");
        let ok = Run {
            failed: Some(false),
            ..older.clone()
        };
        assert!(!ok.may_have_failed_first());
        let later = Run {
            first: false,
            failed: Some(true),
            ..older.clone()
        };
        assert!(
            !later.may_have_failed_first(),
            "only a first apply is tainted"
        );
        let failed = Run {
            failed: Some(true),
            ..older
        };
        let back: Run = serde_json::from_str(&serde_json::to_string(&failed).unwrap()).unwrap();
        assert_eq!(back, failed);
        assert!(back.may_have_failed_first());
    }

    #[test]
    fn marks_are_per_key_and_per_name() {
        let k1 = RunKey::new([1; 32]);
        let k2 = RunKey::new([2; 32]);
        let m = k1.mark(Kind::SveltosCluster, "a/c1");
        assert_eq!(m.len(), 64);
        assert_ne!(m, k1.mark(Kind::SveltosCluster, "a/c2"));
        assert_ne!(m, k1.mark(Kind::Secret, "a/c1"));
        assert_ne!(m, k2.mark(Kind::SveltosCluster, "a/c1"));
        assert_eq!(RunKey::from_hex(&k1.to_hex()), Some(k1.clone()));
        // RFC 4231 test case 2 (HMAC pads a short key with zeros, so "Jefe" padded to 32 bytes is the same key).
        let mut jefe = [0u8; 32];
        jefe[..4].copy_from_slice(b"Jefe");
        assert_eq!(
            hex::encode(hmac_sha256(&jefe, b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let ledger = Ledger::default().with_run_keys(vec![k2.clone(), k1.clone()]);
        assert!(ledger.owns_marked(Kind::SveltosCluster, "a/c1", Some("u"), Some(&m)));
        assert!(
            !ledger.owns_marked(Kind::SveltosCluster, "a/c2", Some("u"), Some(&m)),
            "a copied mark"
        );
        assert!(!ledger.owns_marked(Kind::SveltosCluster, "a/c1", Some("u"), Some("0")));
        // A name the ledger recorded is owned by UID only: a recreated object with a copied mark is not.
        let mut recorded = ledger.clone();
        recorded.record(Kind::SveltosCluster, "a/c1", "u-old");
        assert!(!recorded.owns_marked(Kind::SveltosCluster, "a/c1", Some("u-new"), Some(&m)));
        assert!(!format!("{k1:?}").contains("01"));
    }

    #[test]
    fn a_copied_mark_at_a_name_the_bridge_lost_is_refused_at_every_later_refresh() {
        let keys: Vec<RunKey> = (1..=4).map(|i| RunKey::new([i; 32])).collect();
        let sc = Kind::SveltosCluster;
        let mark = |k: &RunKey| k.mark(sc, "a/c1");
        // Run 1 created c1 and recorded it.
        let mut ledger = Ledger::default().with_run_keys(keys[..1].to_vec());
        ledger.record(sc, "a/c1", "u1");
        // A tenant deleted it and recreated it with run 1's mark: refused at this refresh, and at the next ones,
        // which keep a tombstone at the name (without it the name would look never recorded).
        let mut l = ledger.with_run_keys(keys[..2].to_vec());
        for _ in 0..3 {
            assert!(!l.owns_marked(sc, "a/c1", Some("u2"), Some(&mark(&keys[0]))));
            l = l.successor([]);
        }
        // The bridge's own later run (key 2) recreating c1 and dying before recording it is recognised.
        assert!(l.owns_marked(sc, "a/c1", Some("u3"), Some(&mark(&keys[1]))));
        // Deregistered by the bridge: the same.
        let mut d = Ledger::default().with_run_keys(keys[..2].to_vec());
        d.record(sc, "a/c1", "u1");
        d.forget(sc, "a/c1");
        assert!(!d.owns_marked(sc, "a/c1", Some("u2"), Some(&mark(&keys[1]))));
        let back = Ledger::from_private(&d.to_private(), Vec::new)
            .unwrap()
            .with_run_keys(keys[..3].to_vec());
        assert!(!back.owns_marked(sc, "a/c1", Some("u2"), Some(&mark(&keys[1]))));
        assert!(back.owns_marked(sc, "a/c1", Some("u2"), Some(&mark(&keys[2]))));
        // Once the key the tombstone was made under has left the claim, the tombstone goes: no mark it refused
        // can be checked any more.
        let rotated = back.with_run_keys(keys[2..].to_vec()).successor([]);
        assert_eq!(rotated.tombstones_of(sc).count(), 0);
        // A recorded name: a copied mark of the run that recorded it is refused, a later run's is not.
        let mut r = Ledger::default().with_run_keys(keys[..1].to_vec());
        r.record(sc, "a/c1", "u1");
        let r = r.with_run_keys(keys[..2].to_vec());
        assert!(!r.owns_marked(sc, "a/c1", Some("u2"), Some(&mark(&keys[0]))));
        assert!(r.owns_marked(sc, "a/c1", Some("u2"), Some(&mark(&keys[1]))));
        // Re-recorded by a later run (its key the newest): that run's mark is refused from then on.
        let mut again = r.successor([(sc, "a/c1".to_string(), "u1".to_string())]);
        assert!(!again.owns_marked(sc, "a/c1", Some("u2"), Some(&mark(&keys[1]))));
        again.record(sc, "a/c1", "u1");
        assert_eq!(
            again.since_of(sc, "a/c1"),
            Some(keys[1].fingerprint().as_str())
        );
    }

    /// L4: a run writes `a/c1` (journaled with its UID) and `a/c2` (after its last batch), then dies. A tenant who
    /// deletes either and creates it again with the label and the mark copied: refused at the journaled name,
    /// taken at the name in the tail (the residual window), and the run's own objects recognised at both.
    #[test]
    fn a_dead_runs_mark_counts_only_for_the_uid_its_journal_holds() {
        let (k0, k1) = (RunKey::new([7; 32]), RunKey::new([8; 32]));
        let sc = Kind::SveltosCluster;
        let mut claim = Claim::new("i".into(), None);
        claim.keys = vec![k0.clone(), k1.clone()];
        claim.journals.add_batch(
            &k1.journal_batch_key(0),
            &k1.journal_entry(sc, "a/c1", "u1"),
        );
        let ledger = Ledger::default()
            .with_run_keys(claim.keys.clone())
            .with_journals(claim.journals.clone());
        let m1 = k1.mark(sc, "a/c1");
        assert!(ledger.owns_marked(sc, "a/c1", Some("u1"), Some(&m1)));
        assert!(!ledger.owns_marked(sc, "a/c1", Some("u-tenant"), Some(&m1)));
        let m2 = k1.mark(sc, "a/c2");
        assert!(ledger.owns_marked(sc, "a/c2", Some("u2"), Some(&m2)));
        assert!(
            ledger.owns_marked(sc, "a/c2", Some("u-tenant"), Some(&m2)),
            "the tail"
        );
        // The journal follows the ledger through a refresh.
        let next = ledger.successor([]);
        assert!(!next.owns_marked(sc, "a/c1", Some("u-tenant"), Some(&m1)));
    }

    /// An exec-minted Secret the bridge wrote (UID `u1`) and a ledger recording it and what was written in it.
    fn minted_secret() -> (k8s_openapi::api::core::v1::Secret, Ledger) {
        use crate::domain::{
            BridgeSpec,
            credentials::CredentialSource,
            desired::{Material, desired, written_credential},
            testutil::profile,
        };
        let spec = BridgeSpec {
            name: "main".into(),
            ..Default::default()
        };
        let material = Material::Bytes {
            bytes: b"minted".to_vec(),
            expires_at: Some("2030-01-01T00:00:00Z".into()),
            config_sha256: Some("settings".into()),
        };
        let source = CredentialSource::Exec {
            provider: "tok".into(),
        };
        let d = desired(&spec, &profile("ns", "c1", &[]), &source, &material, false);
        let mut secret = *d.secret.unwrap();
        secret.metadata.uid = Some("u1".into());
        let mut ledger = Ledger::default();
        ledger.record(Kind::Secret, SECRET_ID, "u1");
        ledger.record_written(SECRET_ID, written_credential(&secret).unwrap());
        (secret, ledger)
    }

    const SECRET_ID: &str = "ns/c1-sveltos-kubeconfig";

    /// What the bridge wrote in a Secret is kept in the ledger (private state) and read with the Secret: the data
    /// is checked against it, the expiry taken from it, whatever the Secret's annotations say.
    #[test]
    fn what_the_bridge_wrote_is_recorded_and_verified_against_the_secret() {
        use crate::domain::observed::Observed;
        let (secret, ledger) = minted_secret();
        let ledger = Ledger::from_private(&ledger.to_private(), Vec::new).unwrap();
        let recorded = ledger.written(SECRET_ID).unwrap().clone();
        assert_eq!(
            recorded.kubeconfig_sha256,
            crate::domain::sha256_hex(b"minted")
        );
        assert_eq!(recorded.expires_at.as_deref(), Some("2030-01-01T00:00:00Z"));
        assert_eq!(recorded.config_sha256.as_deref(), Some("settings"));
        let read = |s: &k8s_openapi::api::core::v1::Secret| {
            let o = Observed::build("main", &ledger, &[], std::slice::from_ref(s));
            o.owned["ns/c1"].secret.clone().unwrap()
        };
        // The expiry annotation forged: the recorded expiry stands.
        let mut forged = secret.clone();
        let ann = forged.metadata.annotations.as_mut().unwrap();
        ann.insert(
            crate::api::keys::EXPIRES_ANNOTATION.into(),
            "2099-01-01T00:00:00Z".into(),
        );
        let o = read(&forged);
        assert_eq!(o.verified(false), Some(&recorded));
        assert_eq!(
            o.expiry(false).map(String::as_str),
            Some("2030-01-01T00:00:00Z")
        );
        // The data swapped: nothing verified, and what the Secret claims is all there is to show.
        let data = forged.data.as_mut().unwrap();
        let tenants = k8s_openapi::ByteString(b"tenants".to_vec());
        data.insert(crate::domain::SECRET_KEY.into(), tenants);
        let o = read(&forged);
        assert_eq!(o.verified(false), None);
        assert_eq!(
            o.expiry(false).map(String::as_str),
            Some("2099-01-01T00:00:00Z")
        );
    }

    /// With renewal configured, the recorded hash stands for the data only where the ledger records that the
    /// bridge wrote renewal there: the token-renewal annotation copied onto a Secret where renewal was withheld
    /// (the bridge wrote none) hides no swapped data.
    #[test]
    fn only_a_recorded_renewal_lets_the_record_stand_for_the_data() {
        use crate::domain::{TOKEN_RENEWAL_ANNOTATION, observed::Observed};
        let (withheld, _) = minted_secret();
        let mut renewed = withheld.clone();
        let ann = renewed.metadata.annotations.as_mut().unwrap();
        ann.insert(
            TOKEN_RENEWAL_ANNOTATION.into(),
            r#"{"interval":"1h"}"#.into(),
        );
        for (written, renewal) in [(&withheld, false), (&renewed, true)] {
            let mut ledger = Ledger::default();
            ledger.record(Kind::Secret, SECRET_ID, "u1");
            ledger.record_written(
                SECRET_ID,
                crate::domain::desired::written_credential(written).unwrap(),
            );
            let ledger = Ledger::from_private(&ledger.to_private(), Vec::new).unwrap();
            assert_eq!(ledger.written(SECRET_ID).unwrap().renewal, renewal);
            // The tenant's Secret: the renewal annotation, its own data.
            let mut forged = renewed.clone();
            let tenants = k8s_openapi::ByteString(b"tenants".to_vec());
            let data = forged.data.as_mut().unwrap();
            data.insert(crate::domain::SECRET_KEY.into(), tenants);
            let o = Observed::build("main", &ledger, &[], std::slice::from_ref(&forged));
            let o = o.owned["ns/c1"].secret.clone().unwrap();
            let recorded = ledger.written(SECRET_ID).map(|w| &w.kubeconfig_sha256);
            let expected = if renewal {
                recorded
            } else {
                o.kubeconfig_sha256.as_ref()
            };
            assert_eq!(o.sha(true), expected, "renewal written: {renewal}");
            assert_eq!(o.verified(true).is_some(), renewal);
            // Renewal no longer configured: the data is compared either way.
            assert_eq!(o.sha(false), o.kubeconfig_sha256.as_ref());
        }
    }

    /// The record is carried over by every refresh that finds the Secret owned, dropped with it; a ledger of an
    /// earlier version records none.
    #[test]
    fn the_record_of_a_secret_follows_its_ownership() {
        let (_, ledger) = minted_secret();
        let recorded = ledger.written(SECRET_ID).cloned();
        assert!(recorded.is_some());
        let kept = ledger.successor([(Kind::Secret, SECRET_ID.to_string(), "u1".to_string())]);
        assert_eq!(kept.written(SECRET_ID).cloned(), recorded);
        assert_eq!(ledger.successor([]).written(SECRET_ID), None);
        let mut deleted = ledger.clone();
        deleted.forget(Kind::Secret, SECRET_ID);
        assert_eq!(deleted.written(SECRET_ID), None);
        let earlier = format!(r#"{{"v":1,"objects":{{"Secret {SECRET_ID}":"u1"}}}}"#);
        let earlier = Ledger::from_private(earlier.as_bytes(), Vec::new).unwrap();
        assert!(earlier.owns(Kind::Secret, SECRET_ID, Some("u1")));
        assert_eq!(earlier.written(SECRET_ID), None);
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
