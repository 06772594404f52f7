//! LISTs: of objects (one request per namespace) or of metadata only (paginated, within a [`ReadBudget`]), every
//! item decoded on its own ([`super::decode`]): an item that does not decode is set aside by name
//! ([`Undecodable`]) and handed back to the caller, whose problem it is to confine.

use std::{collections::BTreeMap, fmt::Debug, sync::Mutex};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{Client, Resource, api::ListParams};
use serde::de::DeserializeOwned;

use super::{
    decode::{ItemCap, Keep, PAGE_SIZE, Undecodable, decode_items_capped},
    error::{IoCause, IoError},
    retry::with_retry,
};

/// Longest answer to one page of a metadata LIST, in bytes. A longer answer is not read to its end: the page is
/// asked for again with half as many items (down to one object, whose metadata the API server's object size limit
/// keeps far below this), so what is held at once is at most this much text and the items decoded from it (a
/// first page asked for with [`ReadBudget::first_page`]: [`FIRST_ANSWER_BYTES`]).
pub const ANSWER_BYTES: usize = 8 << 20;

/// Most bytes of metadata LIST answers one run (a plan, an apply, a refresh, a data source's read) reads: past it
/// the run fails, naming the namespaces that hold the most. Metadata of a real object is a few KiB at most (about
/// 1 KiB for the objects the bridge reads), so this is room for over a hundred thousand objects; labels (which the
/// API server does not bound in total) and `managedFields` (which repeats every key) let anyone who can create a
/// Secret make one object's metadata over a MiB. A run of a bridge that owns objects gets [`OWNED_BYTES`] more for
/// each ([`ReadBudget::for_owned`]).
pub const RUN_BYTES: u64 = 128 << 20;

/// What each object the bridge owns (as its ledger, private state no tenant can write, records) adds to the budget
/// of a run of that bridge: each owned SveltosCluster or Secret stands for a cluster whose credential Secret, own
/// Secret and SveltosCluster the run reads, about 2 KiB of answer per ledger entry when honest (measured at 50,000
/// clusters in one namespace: 128 MiB ran out), so four times that. A flood in a namespace the bridge reads still
/// fails the run once it passes what the bridge's own size allows; a tenant cannot grow the ledger.
pub const OWNED_BYTES: u64 = 8 << 10;

/// Most items asked for in the first page of a LIST whose size is known beforehand ([`ReadBudget::first_page`],
/// [`list_metadata_expecting`]).
pub const FIRST_PAGE_ITEMS: u32 = 16 << 10;

/// Longest answer to such a first page, in bytes: room for [`FIRST_PAGE_ITEMS`] honest objects (the bridge's
/// SveltosClusters are about 1.3 KiB, its Secrets' metadata less). A longer answer is not read to its end, and
/// the LIST goes on from there in pages of [`PAGE_SIZE`] within [`ANSWER_BYTES`] (at most one such read per LIST
/// and namespace). A first page is asked for by a refresh's budget (`runtime::refresh`), whose LISTs are those of
/// what the bridge owns, two at once, and by the metadata LIST of labelled credential Secrets
/// ([`list_metadata_expecting`]), one namespace at a time, which a refresh starts only once its own LISTs are
/// done: one run holds at most two such answers at once. Terraform may run several resources and data sources at
/// once, each within its own. The bytes of an answer dropped at this cap are read, not held, and not charged to
/// the run's [`ReadBudget`] (nor are those of a page asked again with fewer items below).
pub const FIRST_ANSWER_BYTES: usize = 32 << 20;

/// How many items a first page asks for when `items` are expected: at least [`PAGE_SIZE`], at most
/// [`FIRST_PAGE_ITEMS`] (the benchmark's read floor asks as the provider does).
pub fn first_page_items(items: usize) -> u32 {
    (items.min(FIRST_PAGE_ITEMS as usize) as u32).max(PAGE_SIZE)
}

fn scope_label(namespace: Option<&str>) -> String {
    namespace
        .map(|n| format!("in namespace {n}"))
        .unwrap_or_else(|| "in all namespaces".into())
}

/// What the metadata LISTs of one run may still read ([`RUN_BYTES`]), and how much each namespace took.
#[derive(Debug)]
pub struct ReadBudget {
    limit: u64,
    first_page: u32,
    spent: Mutex<(u64, BTreeMap<String, u64>)>,
}

impl Default for ReadBudget {
    fn default() -> Self {
        Self::new(RUN_BYTES)
    }
}

impl ReadBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: u64) -> Self {
        Self {
            limit,
            first_page: PAGE_SIZE,
            spent: Mutex::new((0, BTreeMap::new())),
        }
    }

    /// This budget, its LISTs asking for up to `items` (at most [`FIRST_PAGE_ITEMS`]) in their first page, each
    /// answer of which may be up to [`FIRST_ANSWER_BYTES`] long: for a reader that knows how many objects it will
    /// find (a refresh, from its ledger). The API server answers a LIST's first page from its cache, and each
    /// page after it about four times slower per item (measured: 10,000 SveltosClusters read in one page in
    /// 0.5 s, in pages of 500 in 2.1–2.3 s), so a refresh reads what it owns in one page where it can.
    pub fn first_page(mut self, items: usize) -> Self {
        self.first_page = first_page_items(items);
        self
    }

    /// The budget of a run of a bridge whose ledger records `owned` objects: [`RUN_BYTES`] and [`OWNED_BYTES`] for
    /// each of them.
    pub fn for_owned(owned: usize) -> Self {
        Self::new(RUN_BYTES.saturating_add((owned as u64).saturating_mul(OWNED_BYTES)))
    }

    /// The budget of a refresh of a bridge that owns `owned` objects: [`ReadBudget::for_owned`], asking for all of
    /// them in the first page where they fit ([`ReadBudget::first_page`]).
    pub fn for_refresh(owned: usize) -> Self {
        Self::for_owned(owned).first_page(owned + 1)
    }

    /// The bytes this budget allows in all.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Charges one answer of `bytes`, whose items took `by_namespace`; an error naming the namespaces that hold
    /// the most once the run's total passes the limit.
    fn charge(&self, bytes: usize, by_namespace: BTreeMap<String, u64>) -> Result<(), String> {
        let mut spent = self.spent.lock().unwrap_or_else(|e| e.into_inner());
        spent.0 += bytes as u64;
        for (ns, n) in by_namespace {
            *spent.1.entry(ns).or_default() += n;
        }
        if spent.0 <= self.limit {
            return Ok(());
        }
        let mut largest: Vec<(&String, &u64)> = spent.1.iter().collect();
        largest.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let named: Vec<String> = largest
            .iter()
            .take(3)
            .map(|(ns, n)| format!("namespace {ns}: {:.1} MiB", **n as f64 / 1048576.0))
            .collect();
        Err(format!(
            "the metadata read by this run passed its budget of {} MiB (largest: {}). Someone who can create \
             objects there made their labels or managedFields large: remove those objects, or leave that \
             namespace out of what the bridge reads",
            self.limit >> 20,
            named.join(", ")
        ))
    }
}

/// How a LIST is made: whole objects in one request per namespace, or page by page within a budget (metadata
/// only, or whole objects each within a cap).
#[derive(Clone, Copy)]
enum Mode<'b> {
    Objects,
    /// Metadata, within the budget, the first page asking for this many items.
    Metadata(&'b ReadBudget, u32),
    Bounded(&'b ReadBudget, ItemCap<'b>),
}

/// Lists every `K` in the given namespaces (all when empty) matching `label_selector`; the items that do not
/// decode are returned beside them.
pub async fn list<K>(
    client: &Client,
    namespaces: &[String],
    label_selector: Option<&str>,
) -> Result<(Vec<K>, Vec<Undecodable>), IoError>
where
    K: Resource + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let mut out = Vec::new();
    let bad = list_each(client, namespaces, label_selector, |page| out.extend(page)).await?;
    // Grown by doubling: up to half of it spare room, held as long as the items are.
    out.shrink_to_fit();
    Ok((out, bad))
}

/// Lists every `K` in the given namespaces (all when empty) matching `label_selector`, handing the items to
/// `each` in batches of [`PAGE_SIZE`] as they are decoded; returns the items that do not decode.
///
/// One LIST per namespace, not paginated: the API server answers it from its watch cache (a consistent read,
/// as a paginated LIST is), where every page of a paginated LIST of custom resources is read from etcd; measured
/// at 10,000 SveltosClusters, 0.9 s against 2.6 s. The body is decoded item by item, so what is held at once is
/// the body and one batch, never every parsed object. A failed request is retried ([`with_retry`]); the body is
/// decoded once, after the request succeeded. The whole LIST is one attempt of
/// [`ATTEMPT_TIMEOUT`](super::ATTEMPT_TIMEOUT).
pub async fn list_each<K>(
    client: &Client,
    namespaces: &[String],
    label_selector: Option<&str>,
    each: impl FnMut(Vec<K>),
) -> Result<Vec<Undecodable>, IoError>
where
    K: Resource + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let lp = params(label_selector, None);
    list_pages::<K, K>(client, namespaces, &lp, Mode::Objects, each).await
}

/// Like [`list_each`], metadata only (no object bodies cross the wire), page by page ([`PAGE_SIZE`] items, each
/// answer at most [`ANSWER_BYTES`]; a first page as `budget` asks, [`ReadBudget::first_page`]) within `budget`:
/// for objects whose number and size others choose, read first as metadata so that only the bodies needed are read
/// (`crate::k8s::bodies`).
pub async fn list_metadata_each<K>(
    client: &Client,
    namespaces: &[String],
    label_selector: Option<&str>,
    budget: &ReadBudget,
    each: impl FnMut(Vec<ObjectMeta>),
) -> Result<Vec<Undecodable>, IoError>
where
    K: Resource + Debug,
    <K as Resource>::DynamicType: Default,
{
    let first = budget.first_page;
    metadata_pages::<K>(client, (namespaces, label_selector), (budget, first), each).await
}

/// Like [`list_metadata_each`], for a caller that expects about `expected` items (the labelled credential Secrets
/// of the profiles it read): the first page asks for them ([`first_page_items`], its answer within
/// [`FIRST_ANSWER_BYTES`]). The API server answers a first page from its cache and every page after it from etcd
/// (measured at 10,000 credential Secrets: 21 pages of 500 cost it 0.4–1.2 s of CPU, etcd 0.2 s and 140 MB of
/// allocations; one page 0.1 s, no etcd, 28 MB), so a LIST asked for in one page is the cheaper read for both.
/// More items than expected, or an answer longer than [`FIRST_ANSWER_BYTES`], are read on in pages as usual.
///
/// The cost: where the items' metadata averages more than [`FIRST_ANSWER_BYTES`] divided by the items asked for
/// (3.3 KiB at 10,000; `kubectl apply` leaves a whole Secret, data included, in an annotation), the first answer
/// is dropped at that cap and the LIST read in pages as before: one request more than pages alone would make.
pub async fn list_metadata_expecting<K>(
    client: &Client,
    (namespaces, label_selector): (&[String], Option<&str>),
    budget: &ReadBudget,
    expected: usize,
    each: impl FnMut(Vec<ObjectMeta>),
) -> Result<Vec<Undecodable>, IoError>
where
    K: Resource + Debug,
    <K as Resource>::DynamicType: Default,
{
    let first = expecting(budget, expected);
    metadata_pages::<K>(client, (namespaces, label_selector), (budget, first), each).await
}

/// The first page of a metadata LIST within `budget` whose caller expects `expected` items.
fn expecting(budget: &ReadBudget, expected: usize) -> u32 {
    budget.first_page.max(first_page_items(expected))
}

async fn metadata_pages<K>(
    client: &Client,
    (namespaces, label_selector): (&[String], Option<&str>),
    (budget, first): (&ReadBudget, u32),
    mut each: impl FnMut(Vec<ObjectMeta>),
) -> Result<Vec<Undecodable>, IoError>
where
    K: Resource + Debug,
    <K as Resource>::DynamicType: Default,
{
    let lp = params(label_selector, None);
    list_pages::<K, kube::core::PartialObjectMeta<K>>(
        client,
        namespaces,
        &lp,
        Mode::Metadata(budget, first),
        |page| each(page.into_iter().map(|o| o.metadata).collect()),
    )
    .await
}

/// Like [`list_each`], page by page ([`PAGE_SIZE`] items, each answer at most [`ANSWER_BYTES`]; a first page as
/// `budget` asks, [`ReadBudget::first_page`]) within `budget`,
/// for objects others may make large: an item longer than `cap.bytes` is set aside as an [`Undecodable`] (with
/// only the labels and annotations `cap.keep` names) and not counted in the budget, so one object made large is
/// its own problem; what is held at once is one answer and one batch.
pub async fn list_bounded_each<K>(
    client: &Client,
    namespaces: &[String],
    label_selector: Option<&str>,
    (budget, cap): (&ReadBudget, ItemCap<'_>),
    each: impl FnMut(Vec<K>),
) -> Result<Vec<Undecodable>, IoError>
where
    K: Resource + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let lp = params(label_selector, None);
    let mode = Mode::Bounded(budget, cap);
    list_pages::<K, K>(client, namespaces, &lp, mode, each).await
}

/// Like [`list_bounded_each`], collected: for readers that keep every object they list (the data sources), each
/// within `cap` and all within `budget`.
pub async fn list_bounded<K>(
    client: &Client,
    namespaces: &[String],
    label_selector: Option<&str>,
    bound: (&ReadBudget, ItemCap<'_>),
) -> Result<(Vec<K>, Vec<Undecodable>), IoError>
where
    K: Resource + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let mut out = Vec::new();
    let bad = list_bounded_each(client, namespaces, label_selector, bound, |page| {
        out.extend(page)
    })
    .await?;
    Ok((out, bad))
}

/// Like [`list_metadata_each`], collected.
pub async fn list_metadata<K>(
    client: &Client,
    namespaces: &[String],
    label_selector: Option<&str>,
    budget: &ReadBudget,
) -> Result<(Vec<ObjectMeta>, Vec<Undecodable>), IoError>
where
    K: Resource + Debug,
    <K as Resource>::DynamicType: Default,
{
    let mut out = Vec::new();
    let bad = list_metadata_each::<K>(client, namespaces, label_selector, budget, |page| {
        out.extend(page)
    })
    .await?;
    Ok((out, bad))
}

/// Reads the objects named `name` in `namespace` (at most one) with a LIST narrowed to that name and
/// `label_selector`: the object, or what is known of it when it does not decode.
pub(super) async fn list_named<K>(
    client: &Client,
    namespace: &str,
    name: &str,
    label_selector: Option<&str>,
) -> Result<(Option<K>, Option<Undecodable>), IoError>
where
    K: Resource + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let lp = params(label_selector, Some(&format!("metadata.name={name}")));
    let mut found = None;
    let bad = list_pages::<K, K>(
        client,
        &[namespace.to_string()],
        &lp,
        Mode::Objects,
        |page| {
            found = found.take().or(page.into_iter().next());
        },
    )
    .await?;
    Ok((found, bad.into_iter().next()))
}

/// Lists every cluster-scoped `K` matching `label_selector` (objects written by the cluster's administrators:
/// one that does not decode fails the LIST, naming it).
pub async fn list_cluster_scoped<K>(
    client: &Client,
    label_selector: Option<&str>,
) -> Result<Vec<K>, IoError>
where
    K: Resource<Scope = k8s_openapi::ClusterResourceScope> + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let kind = K::kind(&Default::default()).to_string();
    let (out, bad) = list::<K>(client, &[], label_selector).await?;
    match bad.into_iter().next() {
        None => Ok(out),
        Some(u) => Err(IoError {
            action: "list",
            object: format!("{kind} {}", u.name),
            message: format!("it does not decode as {kind}: {}", u.reason),
            code: None,
            source: IoCause::Undecodable,
        }),
    }
}

fn params(label_selector: Option<&str>, field_selector: Option<&str>) -> ListParams {
    let mut lp = ListParams::default();
    if let Some(sel) = label_selector {
        lp = lp.labels(sel);
    }
    if let Some(sel) = field_selector {
        lp = lp.fields(sel);
    }
    lp
}

/// [`list_each`] of `K`s decoded as `T` (`K` itself, or its metadata with [`Mode::Metadata`]), namespace by
/// namespace (all at once when `namespaces` is empty); returns the items that do not decode.
async fn list_pages<K, T>(
    client: &Client,
    namespaces: &[String],
    lp: &ListParams,
    mode: Mode<'_>,
    mut each: impl FnMut(Vec<T>),
) -> Result<Vec<Undecodable>, IoError>
where
    K: Resource,
    <K as Resource>::DynamicType: Default,
    T: DeserializeOwned + Resource,
{
    let kind = K::kind(&Default::default()).to_string();
    let managed = crate::domain::observed::reads_managed_fields(&kind);
    let scopes: Vec<Option<&str>> = if namespaces.is_empty() {
        vec![None]
    } else {
        namespaces.iter().map(|n| Some(n.as_str())).collect()
    };
    let mut bad = Vec::new();
    for ns in scopes {
        let at = Scope {
            client,
            kind: &kind,
            url: K::url_path(&Default::default(), ns),
            label: scope_label(ns),
        };
        match mode {
            Mode::Objects => {
                let body = at.answer(lp, false, None).await?.unwrap_or_default();
                let keep = Keep { cap: None, managed };
                decode_items_capped(&body, &mut each, &mut bad, &mut |_, _| {}, keep)
                    .map_err(|e| at.not_a_list(e))?;
            }
            Mode::Metadata(budget, first) => {
                let keep = Keep { cap: None, managed };
                at.pages(lp, (budget, keep), first, &mut each, &mut bad)
                    .await?
            }
            Mode::Bounded(budget, cap) => {
                let keep = Keep {
                    cap: Some(cap),
                    managed,
                };
                at.pages(lp, (budget, keep), budget.first_page, &mut each, &mut bad)
                    .await?
            }
        }
    }
    Ok(bad)
}

/// One collection a LIST reads: a kind in one namespace or in all.
struct Scope<'a> {
    client: &'a Client,
    kind: &'a str,
    url: String,
    label: String,
}

impl Scope<'_> {
    /// One answer (with retries): `None` when longer than `cap`.
    async fn answer(
        &self,
        lp: &ListParams,
        metadata_only: bool,
        cap: Option<usize>,
    ) -> Result<Option<String>, IoError> {
        with_retry("list", self.kind, &self.label, || {
            let lp = lp.clone();
            async move {
                let request = kube::core::Request::new(&self.url);
                let req = if metadata_only {
                    request.list_metadata(&lp)
                } else {
                    request.list(&lp)
                }
                .map_err(kube::Error::BuildRequest)?;
                super::capped_text(self.client, req, cap).await
            }
        })
        .await
    }

    /// The collection page by page, each answer within [`ANSWER_BYTES`] (a first page larger than [`PAGE_SIZE`]
    /// within [`FIRST_ANSWER_BYTES`]) and all within `budget`: its metadata, or
    /// with a `cap` its whole objects, each within the cap (what is longer is set aside, not charged).
    async fn pages<T: DeserializeOwned + Resource>(
        &self,
        base: &ListParams,
        (budget, keep): (&ReadBudget, Keep<'_>),
        first_page: u32,
        each: &mut impl FnMut(Vec<T>),
        bad: &mut Vec<Undecodable>,
    ) -> Result<(), IoError> {
        let (mut limit, mut token) = (first_page, None::<String>);
        loop {
            let mut lp = base.clone().limit(limit);
            if let Some(t) = &token {
                lp = lp.continue_token(t);
            }
            // Only a first page may ask for more than a page, and its answer be longer.
            let cap = if limit > PAGE_SIZE {
                FIRST_ANSWER_BYTES
            } else {
                ANSWER_BYTES
            };
            let Some(body) = self.answer(&lp, keep.cap.is_none(), Some(cap)).await? else {
                if limit > PAGE_SIZE {
                    tracing::debug!(kind = %self.kind, scope = %self.label, items = limit, "a first page was longer than its cap; reading on in pages");
                    // Objects made large: read page by page from here, as without a first page.
                    limit = PAGE_SIZE;
                    continue;
                }
                if limit == 1 {
                    return Err(
                        self.refused(format!("one object is longer than {} MiB", cap >> 20))
                    );
                }
                limit /= 2;
                continue;
            };
            let mut by_namespace: BTreeMap<String, u64> = BTreeMap::new();
            let meta = decode_items_capped(
                &body,
                each,
                bad,
                &mut |ns, n| *by_namespace.entry(ns.to_string()).or_default() += n as u64,
                keep,
            )
            .map_err(|e| self.not_a_list(e))?;
            budget
                .charge(body.len() - meta.oversized_bytes, by_namespace)
                .map_err(|why| self.refused(why))?;
            match meta.next {
                Some(next) => {
                    token = Some(next);
                    limit = limit.min(PAGE_SIZE);
                }
                None => return Ok(()),
            }
        }
    }

    /// The error for an answer that is not a list at all (an item that does not decode is not one).
    fn not_a_list(&self, e: serde_json::Error) -> IoError {
        IoError {
            action: "list",
            object: format!("{} {}", self.kind, self.label),
            message: format!(
                "the API server's answer is not a list of {}: {e}",
                self.kind
            ),
            code: None,
            source: IoCause::Kube(kube::Error::SerdeError(e)),
        }
    }

    fn refused(&self, why: String) -> IoError {
        IoError {
            action: "list",
            object: format!("{} {}", self.kind, self.label),
            message: why,
            code: None,
            source: IoCause::Budget,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_budget_fails_closed_naming_the_namespaces_that_hold_the_most() {
        let budget = ReadBudget::new(10 << 20);
        let mib = |n: u64| n << 20;
        budget
            .charge(
                6 << 20,
                BTreeMap::from([("a".to_string(), mib(1)), ("flood".to_string(), mib(5))]),
            )
            .unwrap();
        let why = budget
            .charge(5 << 20, BTreeMap::from([("flood".to_string(), mib(5))]))
            .unwrap_err();
        assert!(why.contains("budget of 10 MiB"), "{why}");
        assert!(
            why.contains("largest: namespace flood: 10.0 MiB, namespace a: 1.0 MiB"),
            "{why}"
        );
        // Spent is spent: every later answer fails too.
        assert!(budget.charge(1, BTreeMap::new()).is_err());
        assert_eq!(ReadBudget::default().limit, RUN_BYTES);
    }

    #[test]
    fn the_budget_of_a_bridge_grows_with_what_its_ledger_records_and_only_with_that() {
        assert_eq!(ReadBudget::for_owned(0).limit, RUN_BYTES);
        // 50,000 clusters (a SveltosCluster and a Secret each): the 128 MiB that ran out in the benchmark, and
        // 781 MiB more.
        let big = ReadBudget::for_owned(100_000);
        assert_eq!(big.limit, RUN_BYTES + 100_000 * OWNED_BYTES);
        assert_eq!(big.limit >> 20, 909);
        // Past it the run still fails closed, naming the namespace.
        big.charge(
            big.limit as usize,
            BTreeMap::from([("ns".into(), big.limit)]),
        )
        .unwrap();
        let why = big
            .charge(1, BTreeMap::from([("flood".into(), 1 << 20)]))
            .unwrap_err();
        assert!(why.contains("budget of 909 MiB"), "{why}");
        assert_eq!(ReadBudget::for_owned(usize::MAX).limit, u64::MAX);
        // A first page asks for what is known to be there, within a page and FIRST_PAGE_ITEMS.
        assert_eq!(ReadBudget::default().first_page, PAGE_SIZE);
        assert_eq!(ReadBudget::default().first_page(3).first_page, PAGE_SIZE);
        assert_eq!(ReadBudget::default().first_page(1201).first_page, 1201);
        // A caller that expects items asks for them in the first page: one per profile and one more (from 500
        // profiles on a first page is larger than a page), up to FIRST_PAGE_ITEMS, never less than its budget's.
        let plain = ReadBudget::default();
        assert_eq!(expecting(&plain, 499 + 1), PAGE_SIZE);
        assert_eq!(expecting(&plain, 500 + 1), 501);
        assert_eq!(expecting(&plain, 10_000 + 1), 10_001);
        assert_eq!(expecting(&plain, 50_000 + 1), FIRST_PAGE_ITEMS);
        assert_eq!(expecting(&ReadBudget::for_refresh(2000), 10), 2001);
        assert_eq!(
            ReadBudget::default().first_page(usize::MAX).first_page,
            FIRST_PAGE_ITEMS
        );
    }
}
