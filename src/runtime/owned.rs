//! What a bridge owns, read where it may be: its SveltosClusters listed by its label and reduced as they are
//! decoded ([`list_clusters`], which needs no ledger: a refresh starts it before Terraform hands the ledger over,
//! `super::read_ahead::OwnedAhead`), then sorted with the ledger while its Secrets are listed ([`sort_owned`]),
//! or with its Secrets listed ahead as well ([`list_secrets`]); all at once: [`read_owned`].

use std::collections::BTreeSet;

use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kube::Client;

use super::Namespaced;
use crate::{
    api::{SveltosCluster, keys},
    domain::{
        observed::{ListedClusters, Observed, meta_text_bytes, secret_meta_for_sorting},
        ownership::{Kind, Ledger},
    },
    k8s::{
        bodies,
        io::{self, IoError},
    },
};

fn owner_selector(bridge: &str) -> String {
    format!("{}={bridge}", keys::BRIDGE_LABEL)
}

/// Above this many namespaces, what the bridge owns is listed in all namespaces at once.
const OWNED_NAMESPACES: usize = 32;

/// Where the bridge's own objects are listed: the namespaces it selects (`selected`; empty: all) and every
/// namespace its ledger names (where it wrote before the selection changed); all namespaces after an import
/// (which takes over labelled objects wherever they are) or past [`OWNED_NAMESPACES`]. Labelled objects anywhere
/// else are nobody's business: anyone who can create a Secret can label it, and is then not read.
pub fn owned_scope(selected: &[String], ledger: &Ledger) -> Vec<String> {
    let Some(mut scope) = ledger.namespaces().filter(|_| !selected.is_empty()) else {
        return Vec::new();
    };
    scope.extend(selected.iter().cloned());
    if scope.len() > OWNED_NAMESPACES {
        return Vec::new();
    }
    scope.into_iter().collect()
}

/// Most bytes of one of the bridge's SveltosClusters as served that a run reads: what the bridge writes is a few
/// KiB (at most 64 copied labels of 16 KiB, the annotations the configuration sets), but a tenant who may patch its
/// SveltosCluster can make its labels (unbounded by the API server) and `managedFields` over a MiB. A longer one is
/// its cluster's problem, kept as it is ([`Observed::add_unreadable`]), and not counted in the run's budget.
pub const OWNED_CLUSTER_BYTES: usize = 512 << 10;

/// What is kept of a SveltosCluster longer than [`OWNED_CLUSTER_BYTES`]: the labels and annotations that tell whose
/// it is.
const OWNED_KEYS: &[&str] = &[
    keys::BRIDGE_LABEL,
    crate::domain::ownership::MARK_ANNOTATION,
];

/// What this bridge owns, listed where it may be ([`owned_scope`] of `selected`). Secrets (which anyone who can
/// create a Secret in a namespace can label): a metadata LIST of those carrying the bridge's label (within
/// `budget`), then the bodies of those the ledger recognises only (`k8s::bodies`); labelled Secrets it does not
/// recognise are impostors, known from their metadata. SveltosClusters (which tenants may patch): a LIST by the
/// label, page by page within `budget`, each object within [`OWNED_CLUSTER_BYTES`], impostors sorted out as it is
/// decoded. An object of the bridge's that does not decode, or is longer, is kept as it is, its cluster's problem
/// ([`Observed::add_unreadable`]).
pub async fn read_owned(
    client: &Client,
    bridge: &str,
    ledger: &Ledger,
    selected: &[String],
    budget: &io::ReadBudget,
) -> Result<Observed, IoError> {
    let scope = owned_scope(selected, ledger);
    let clusters = list_clusters(client, bridge, &scope, budget);
    sort_owned(client, bridge, ledger, (&scope, budget), (clusters, None)).await
}

/// The SveltosClusters labelled for a bridge as [`list_clusters`] listed them, and those that do not decode or
/// are longer than [`OWNED_CLUSTER_BYTES`].
pub type ClusterListing = (ListedClusters, Vec<io::Undecodable>);

/// Lists the SveltosClusters labelled for `bridge` in `scope` (empty: all namespaces): a LIST by the label, page
/// by page within `budget`, each object within [`OWNED_CLUSTER_BYTES`], each page reduced to what is observed of
/// it as it is decoded. What does not need the ledger: [`sort_owned`] tells the bridge's own from impostors.
pub async fn list_clusters(
    client: &Client,
    bridge: &str,
    scope: &[String],
    budget: &io::ReadBudget,
) -> Result<ClusterListing, IoError> {
    let cap = io::ItemCap {
        bytes: OWNED_CLUSTER_BYTES,
        keep: OWNED_KEYS,
    };
    let mut listed = ListedClusters::default();
    let bad = io::list_bounded_each::<SveltosCluster>(
        client,
        scope,
        Some(&owner_selector(bridge)),
        (budget, cap),
        |page| listed.add(bridge, &page),
    )
    .await?;
    Ok((listed, bad))
}

/// Bytes a listing of a bridge's Secrets made before the ledger is known may hold ([`held_bytes`]) for each object
/// the bridge owns (a SveltosCluster and a Secret for each cluster): one of the bridge's Secrets reduced to what
/// sorting reads is about 500 bytes of text (names, UID, resourceVersion, its label, the run mark, the kubeconfig
/// hash and the credential source) and [`HELD_PER_ITEM`] more, so about 2.2 KiB for the 4 KiB its cluster allows.
const HELD_PER_OWNED: usize = 2 << 10;

/// Bytes such a listing holds whatever the bridge owns.
const HELD_AT_LEAST: usize = 1 << 20;

/// What holding one listed item costs beyond its text: its slot in the list (twice: the room a growing list keeps)
/// and the nodes and allocations of its maps and strings.
const HELD_PER_ITEM: usize = 2 * std::mem::size_of::<ObjectMeta>() + (1 << 10);

/// What holding `meta` (reduced) costs, counted against a listing ahead's bound.
fn held_bytes(meta: &ObjectMeta) -> usize {
    meta_text_bytes(meta).saturating_add(HELD_PER_ITEM)
}

/// The Secrets labelled for a bridge as [`list_secrets`] listed them: their metadata reduced to what sorting them
/// reads ([`secret_meta_for_sorting`]), and those that do not decode.
#[derive(Debug, Default)]
pub struct SecretListing {
    metas: Vec<ObjectMeta>,
    bad: Vec<io::Undecodable>,
}

/// Lists the metadata of the Secrets labelled for `bridge` in `scope` (empty: all namespaces), as [`read_owned`]
/// does, but before the ledger that sorts them is known: each is reduced as it is decoded
/// ([`secret_meta_for_sorting`]), and all of them are held until [`sort_owned`] sorts them. `owned`: how many
/// objects the bridge's state records; the LIST reads within the budget of a refresh of such a bridge, a budget of
/// its own. `None` as soon as what is held ([`held_bytes`]) would pass [`HELD_PER_OWNED`] for each of them (and
/// [`HELD_AT_LEAST`]): more labelled Secrets, or larger, than the bridge writes (anyone who can create a Secret in
/// a namespace the bridge reads can label it). The LIST is then cancelled, what it held dropped, and the refresh
/// lists them itself, one page at a time, within its own budget.
pub async fn list_secrets(
    client: &Client,
    bridge: &str,
    scope: &[String],
    owned: usize,
) -> Result<Option<SecretListing>, IoError> {
    let hold = owned
        .saturating_mul(HELD_PER_OWNED)
        .saturating_add(HELD_AT_LEAST);
    // Its own budget: what a listing given up read is not charged to the refresh that lists again.
    let budget = io::ReadBudget::for_refresh(owned);
    let (mut listing, mut held) = (SecretListing::default(), 0usize);
    // Told once what is held passes `hold`: the LIST is then dropped (cancelled) at its next page.
    let (give_up, given_up) = tokio::sync::oneshot::channel::<()>();
    let mut give_up = Some(give_up);
    let selector = owner_selector(bridge);
    let list = io::list_metadata_each::<Secret>(client, scope, Some(&selector), &budget, |metas| {
        for meta in metas {
            if give_up.is_none() {
                return;
            }
            let meta = secret_meta_for_sorting(meta);
            held = held.saturating_add(held_bytes(&meta));
            if held > hold {
                give_up.take().map(|g| g.send(()));
                listing.metas = Vec::new();
                return;
            }
            listing.metas.push(meta);
        }
    });
    // Given up: what was held is already past `hold`.
    let bad = tokio::select! {
        bad = list => bad?,
        _ = given_up => Vec::new(),
    };
    for mut u in bad {
        u.meta = secret_meta_for_sorting(u.meta);
        let text = u.namespace.len() + u.name.len() + u.reason.len();
        held = held
            .saturating_add(held_bytes(&u.meta))
            .saturating_add(text);
        listing.bad.push(u);
    }
    if held > hold {
        tracing::debug!(
            bridge,
            held,
            hold,
            "the bridge's Secrets hold more than it writes; the refresh lists them itself"
        );
        return Ok(None);
    }
    listing.metas.shrink_to_fit();
    Ok(Some(listing))
}

/// What the bridge owns with `ledger`, from its SveltosClusters as `clusters` lists them and its Secrets as
/// `secrets` listed them ahead ([`list_secrets`]; `None`: listed here meanwhile, in `scope` within `budget`, as
/// [`read_owned`] says); the bodies of those the ledger recognises and cannot vouch for are read here.
pub async fn sort_owned(
    client: &Client,
    bridge: &str,
    ledger: &Ledger,
    (scope, budget): (&[String], &io::ReadBudget),
    (clusters, secrets): (
        impl std::future::Future<Output = Result<ClusterListing, IoError>>,
        Option<SecretListing>,
    ),
) -> Result<Observed, IoError> {
    let sel = owner_selector(bridge);
    // Each batch of bodies is reduced to what the bridge keeps of it (identities and hashes) as it is decoded:
    // the listed objects, Secrets with their kubeconfig bytes, are never all held at once.
    let mut owned_secrets = Observed::default();
    let (clusters, ()) = futures::try_join!(
        clusters,
        read_labelled::<Secret>(
            client,
            (&sel, scope),
            (bridge, ledger, budget),
            (Kind::Secret, secrets),
            &mut owned_secrets,
            |w, page| w.add_owned_secrets(bridge, ledger, page),
        ),
    )?;
    let (listed, bad) = clusters;
    let mut observed = Observed::default();
    observed.add_listed_clusters(ledger, listed);
    for u in bad {
        observed.add_unreadable(ledger, Kind::SveltosCluster, &u.meta, &u.reason);
    }
    observed.join(owned_secrets);
    Ok(observed)
}

/// [`read_owned`] for one kind.
async fn read_labelled<K: Namespaced>(
    client: &Client,
    (selector, scope): (&str, &[String]),
    (bridge, ledger, budget): (&str, &Ledger, &io::ReadBudget),
    (kind, ahead): (Kind, Option<SecretListing>),
    observed: &mut Observed,
    add: impl Fn(&mut Observed, &[K]),
) -> Result<(), IoError> {
    let (mut listed, mut wanted) = (Vec::new(), BTreeSet::new());
    let mut sort = |metas: Vec<ObjectMeta>| {
        let sorted = observed.sort_labelled(bridge, ledger, kind, &metas);
        // What is known without its body is no body a read may carry along unwanted: it is the bridge's own, as
        // the bridge wrote it (so it does not count against the spare room of `bodies::plan_reads`).
        let known: BTreeSet<_> = sorted.known.into_iter().collect();
        wanted.extend(sorted.wanted);
        listed.extend(
            metas
                .iter()
                .map(bodies::key_of)
                .filter(|k| !known.contains(k)),
        );
    };
    let bad = match ahead {
        Some(ahead) => {
            sort(ahead.metas);
            ahead.bad
        }
        None => io::list_metadata_each::<K>(client, scope, Some(selector), budget, sort).await?,
    };
    for u in bad {
        observed.add_unreadable(ledger, kind, &u.meta, &u.reason);
    }
    let bad = bodies::read_bodies::<K>(client, (Some(selector), scope), &listed, &wanted, |page| {
        add(observed, &page)
    })
    .await?;
    for u in bad {
        observed.add_unreadable(ledger, kind, &u.meta, &u.reason);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bridges_objects_are_listed_where_it_selects_or_wrote() {
        let mut ledger = Ledger::default();
        ledger.record(Kind::SveltosCluster, "old/c1", "u1");
        ledger.record(Kind::Secret, "old/c1-sveltos-kubeconfig", "u2");
        ledger.trust_name(Kind::Secret, "legacy/c2-sveltos-kubeconfig");
        let selected = ["b".to_string(), "a".to_string()];
        assert_eq!(owned_scope(&selected, &ledger), ["a", "b", "legacy", "old"]);
        // Every namespace selected, or taken over by an import, or too many: all namespaces.
        assert!(owned_scope(&[], &ledger).is_empty());
        assert!(owned_scope(&selected, &Ledger::trusting()).is_empty());
        let many: Vec<String> = (0..=OWNED_NAMESPACES).map(|i| format!("n{i}")).collect();
        assert!(owned_scope(&many, &ledger).is_empty());
    }
}
