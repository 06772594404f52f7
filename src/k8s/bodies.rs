//! Bounded reads of objects whose number and size others choose: labelled credential Secrets, Secrets a
//! `kubeconfig-secretreader` names, and the objects carrying a bridge's label (anyone who can create a Secret in
//! a namespace can label it). They are first listed as metadata ([`io::list_metadata_each`]), the caller decides
//! which it needs, and [`read_bodies`] reads only those bodies:
//!
//! - one LIST of all namespaces when the wanted objects span several and the listed objects not wanted number
//!   at most [`SPARE`] in all;
//! - otherwise, namespace by namespace: a LIST where the namespace holds more than [`GET_AT_MOST`] wanted objects
//!   and at most [`SPARE`] unwanted ones plus one per [`SPARE_PER_WANTED`] wanted ones (so what crosses the wire
//!   beyond the wanted bodies is bounded by them), one read per wanted object elsewhere ([`CONCURRENCY`] at once): for
//!   labelled objects a LIST narrowed to its name and the label ([`io::get_by_list`]), so that the `list` right
//!   their metadata LIST needs is all it takes (no `get` on Secrets beyond the namespaces the bridge writes to);
//!   a GET for objects read by name without a label.
//!
//! Each LIST's items are filtered to the wanted ones as they are decoded, so what is held is the wanted bodies,
//! one LIST answer, and one batch. Between the metadata LIST and the bodies, objects may appear (the body LIST
//! then carries them once); the next read sees them in the metadata. That window is longer where the metadata was
//! listed ahead (a refresh's Secrets, listed when Terraform hands the state over: `runtime::owned::list_secrets`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::NamespaceResourceScope;
use kube::{Client, Resource};
use serde::de::DeserializeOwned;

use super::io::{self, IoError};

/// Objects not wanted that a LIST of all namespaces may carry along: at most this many bodies of up to the API
/// server's object size limit (about 1.5 MiB) that the bridge does not need.
pub const SPARE: usize = 8;
/// A LIST of one namespace may carry along [`SPARE`] unwanted objects plus one per this many wanted ones there
/// (Secrets left by deleted profiles, say): whoever fills a namespace with unwanted objects can make the
/// provider read at most a quarter more than the wanted objects of that same namespace, which they could make as
/// large.
pub const SPARE_PER_WANTED: usize = 4;

/// Unwanted objects a LIST of a namespace holding `wanted` wanted objects may carry along.
fn spare_in(wanted: usize) -> usize {
    SPARE + wanted / SPARE_PER_WANTED
}
/// Up to this many wanted objects in a namespace are read one by one.
pub const GET_AT_MOST: usize = 16;
/// How many GETs run at once.
const CONCURRENCY: usize = 16;

pub use crate::domain::observed::{ObjectKey, key_of};

/// How the bodies of the wanted objects are read.
#[derive(Debug, PartialEq, Eq)]
pub enum Reads {
    /// One LIST of these namespaces (empty: all namespaces).
    List(Vec<String>),
    /// One read per object (a LIST narrowed to its name).
    Get(Vec<ObjectKey>),
}

/// The reads [`read_bodies`] makes for `wanted`, knowing every object `listed` (metadata, from a LIST with the
/// same label selector). `labelled`: a label selector narrows the LISTs; without one, a LIST of all namespaces is
/// never made (it would read every object of the kind).
pub fn plan_reads(
    listed: &[ObjectKey],
    wanted: &BTreeSet<ObjectKey>,
    labelled: bool,
) -> Vec<Reads> {
    // (wanted, not wanted) per namespace.
    let mut per_ns: BTreeMap<&str, (Vec<&ObjectKey>, usize)> = BTreeMap::new();
    for key in listed {
        let slot = per_ns.entry(key.0.as_str()).or_default();
        if wanted.contains(key) {
            slot.0.push(key);
        } else {
            slot.1 += 1;
        }
    }
    per_ns.retain(|_, (w, _)| !w.is_empty());
    let wanted_count: usize = per_ns.values().map(|(w, _)| w.len()).sum();
    if wanted_count == 0 {
        return Vec::new();
    }
    let spare: usize = {
        // Unwanted objects in every namespace (those without wanted objects too): a LIST of all namespaces
        // carries them all.
        let mut all: BTreeMap<&str, usize> = BTreeMap::new();
        for key in listed {
            if !wanted.contains(key) {
                *all.entry(key.0.as_str()).or_default() += 1;
            }
        }
        all.values().sum()
    };
    if wanted_count > GET_AT_MOST && per_ns.len() > 1 && labelled && spare <= SPARE {
        return vec![Reads::List(Vec::new())];
    }
    let mut reads = Vec::new();
    let mut gets = Vec::new();
    for (ns, (keys, unwanted)) in per_ns {
        if keys.len() > GET_AT_MOST && unwanted <= spare_in(keys.len()) {
            reads.push(Reads::List(vec![ns.to_string()]));
        } else {
            gets.extend(keys.into_iter().cloned());
        }
    }
    if !gets.is_empty() {
        reads.push(Reads::Get(gets));
    }
    reads
}

/// Reads the bodies of `wanted` among `listed` (see [`plan_reads`]), handing them to `each` in batches; returns
/// the wanted objects whose bodies do not decode (each its writer's problem, for the caller to confine). An object
/// gone since it was listed is skipped; `label_selector` and `scope` (namespaces, empty: all) are those `listed`
/// was read with: a LIST of "all namespaces" covers `scope` only, since nothing is known of the others.
pub async fn read_bodies<K>(
    client: &Client,
    (label_selector, scope): (Option<&str>, &[String]),
    listed: &[ObjectKey],
    wanted: &BTreeSet<ObjectKey>,
    mut each: impl FnMut(Vec<K>),
) -> Result<Vec<io::Undecodable>, IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let mut bad = Vec::new();
    for read in plan_reads(listed, wanted, label_selector.is_some()) {
        match read {
            Reads::List(namespaces) => {
                let namespaces = if namespaces.is_empty() {
                    scope.to_vec()
                } else {
                    namespaces
                };
                let unread = io::list_each::<K>(client, &namespaces, label_selector, |page| {
                    let kept: Vec<K> = page
                        .into_iter()
                        .filter(|o| wanted.contains(&key_of(o.meta())))
                        .collect();
                    if !kept.is_empty() {
                        each(kept);
                    }
                })
                .await?;
                bad.extend(
                    unread
                        .into_iter()
                        .filter(|u| wanted.contains(&key_of(&u.meta))),
                );
            }
            Reads::Get(keys) => {
                let got: Vec<io::Got<K>> = stream::iter(keys)
                    .map(|(ns, name)| async move {
                        match label_selector {
                            // Labelled objects: read under the `list` right their metadata LIST needed.
                            Some(_) => {
                                io::get_by_list::<K>(client, &ns, &name, label_selector).await
                            }
                            // Objects named by others (secretreader Secrets): a GET, as RBAC grants it.
                            None => io::get::<K>(client, &ns, &name).await,
                        }
                    })
                    .buffer_unordered(CONCURRENCY)
                    .try_collect()
                    .await?;
                let mut found = Vec::new();
                for g in got {
                    match g {
                        io::Got::Found(k) => found.push(k),
                        io::Got::Undecodable(u) => bad.push(*u),
                        io::Got::Absent => {}
                    }
                }
                if !found.is_empty() {
                    each(found);
                }
            }
        }
    }
    Ok(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(ns: &str, n: usize, prefix: &str) -> Vec<ObjectKey> {
        (0..n)
            .map(|i| (ns.to_string(), format!("{prefix}{i}")))
            .collect()
    }

    fn plan(listed: &[Vec<ObjectKey>], wanted: &[Vec<ObjectKey>]) -> Vec<Reads> {
        let listed: Vec<ObjectKey> = listed.iter().flatten().cloned().collect();
        let wanted: BTreeSet<ObjectKey> = wanted.iter().flatten().cloned().collect();
        plan_reads(&listed, &wanted, true)
    }

    #[test]
    fn nothing_wanted_reads_nothing() {
        let foreign = keys("a", 1000, "x");
        assert!(plan(&[foreign], &[]).is_empty());
    }

    #[test]
    fn a_few_wanted_objects_are_read_one_get_each() {
        let mine = keys("a", 3, "m");
        let reads = plan(std::slice::from_ref(&mine), std::slice::from_ref(&mine));
        assert_eq!(reads, vec![Reads::Get(mine)]);
    }

    #[test]
    fn many_wanted_objects_in_one_namespace_are_one_list_of_it() {
        let mine = keys("a", 100, "m");
        let reads = plan(&[mine.clone(), keys("a", SPARE + 25, "x")], &[mine]);
        assert_eq!(reads, vec![Reads::List(vec!["a".into()])]);
    }

    #[test]
    fn many_wanted_across_namespaces_with_little_else_are_one_list_of_all() {
        let (a, b) = (keys("a", 50, "m"), keys("b", 50, "m"));
        let reads = plan(&[a.clone(), b.clone(), keys("c", SPARE, "x")], &[a, b]);
        assert_eq!(reads, vec![Reads::List(Vec::new())]);
    }

    #[test]
    fn a_namespace_flooded_with_unwanted_objects_is_read_one_get_per_wanted_object() {
        // A tenant fills namespace b with labelled objects: a's bodies still come in one LIST of a, b's wanted
        // ones one GET each, and none of b's unwanted ones is read.
        let (a, b) = (keys("a", 50, "m"), keys("b", 5, "m"));
        let flood = keys("b", 1000, "x");
        let reads = plan(&[a.clone(), b.clone(), flood], &[a, b.clone()]);
        assert_eq!(reads, vec![Reads::List(vec!["a".into()]), Reads::Get(b)]);
        // Even with many wanted objects in the flooded namespace.
        let many_b = keys("b", 40, "m");
        let reads = plan(
            &[many_b.clone(), keys("b", SPARE + 10 + 1, "x")],
            std::slice::from_ref(&many_b),
        );
        assert_eq!(reads, vec![Reads::Get(many_b)]);
    }

    #[test]
    fn a_few_stale_objects_next_to_many_wanted_ones_still_allow_a_list() {
        // 1,000 profiles, 20 Secrets left by deleted ones: one LIST, not 1,000 reads.
        let mine = keys("a", 1000, "m");
        let reads = plan(&[mine.clone(), keys("a", 20, "x")], &[mine]);
        assert_eq!(reads, vec![Reads::List(vec!["a".into()])]);
    }

    #[test]
    fn without_a_label_selector_all_namespaces_are_never_listed() {
        let (a, b) = (keys("a", 50, "m"), keys("b", 50, "m"));
        let listed: Vec<ObjectKey> = a.iter().chain(&b).cloned().collect();
        let wanted: BTreeSet<ObjectKey> = listed.iter().cloned().collect();
        assert_eq!(
            plan_reads(&listed, &wanted, false),
            vec![Reads::List(vec!["a".into()]), Reads::List(vec!["b".into()])]
        );
    }

    #[test]
    fn unwanted_objects_in_a_namespace_without_wanted_ones_prevent_a_list_of_all() {
        let (a, b) = (keys("a", 50, "m"), keys("b", 50, "m"));
        let flood = keys("z", SPARE + 1, "x");
        let reads = plan(&[a.clone(), b.clone(), flood], &[a, b]);
        assert_eq!(
            reads,
            vec![Reads::List(vec!["a".into()]), Reads::List(vec!["b".into()])]
        );
    }
}
