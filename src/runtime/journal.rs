//! The write journal of one apply run, written into the bridge's claim in batches as the run's writes return
//! (what it holds and why: `crate::domain::journal`): one merge patch of the claim per
//! [`journal::BATCH_OBJECTS`] objects or per [`journal::BATCH_INTERVAL`], never one per object.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use kube::Client;

use crate::{
    domain::{
        BridgeSpec,
        journal::{self, Pending},
        ownership::{Kind, RunKey, claim_name},
    },
    k8s::claim as k8s_claim,
};

/// The journal of the running apply.
pub struct Journal<'a> {
    client: &'a Client,
    namespace: &'a str,
    claim: String,
    key: &'a RunKey,
    pending: Mutex<Pending<Instant>>,
    /// The batches written (a figure for the logs).
    written: AtomicU32,
}

impl<'a> Journal<'a> {
    /// The journal of the run of `key` of bridge `spec`.
    pub fn new(client: &'a Client, spec: &'a BridgeSpec, key: &'a RunKey) -> Self {
        Self {
            client,
            namespace: &spec.claim_namespace,
            claim: claim_name(&spec.name),
            key,
            pending: Mutex::new(Pending::default()),
            written: AtomicU32::new(0),
        }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending<Instant>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes objects the run wrote (kind, `namespace/name`, UID), then writes a batch if one is due.
    pub async fn note(&self, objects: &[(Kind, String, String)]) {
        {
            let mut p = self.pending();
            for (kind, id, uid) in objects {
                p.push(self.key.journal_entry(*kind, id, uid), Instant::now());
            }
        }
        self.flush_if_due().await;
    }

    /// Writes a batch if one is due (see [`Pending::due`]).
    pub async fn flush_if_due(&self) {
        let due = self.pending().due(|since| since.elapsed());
        if due {
            self.flush().await;
        }
    }

    /// Writes every entry waiting as one batch. A batch that cannot be written goes with the next one (until
    /// then its objects are in the journal's tail: see `crate::domain::journal`).
    pub async fn flush(&self) {
        let Some((n, entries)) = self.pending().take() else {
            return;
        };
        let key = self.key.journal_batch_key(n);
        let data = BTreeMap::from([(key, Some(entries.join(",")))]);
        match k8s_claim::patch_data(self.client, self.namespace, &self.claim, &data).await {
            Ok(()) => {
                self.written.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                tracing::warn!(error = %e, objects = entries.len(), "a batch of the run's write journal was not written; it goes with the next");
                self.pending().put_back(entries, Instant::now());
            }
        }
    }

    /// The batches written so far.
    pub fn batches(&self) -> u32 {
        self.written.load(Ordering::Relaxed)
    }
}

/// Runs `work` while writing a due batch of the journal `run` every [`journal::BATCH_INTERVAL`] (writes that return
/// rarely still reach the claim in time), then writes what is left.
pub async fn journaled<T>(run: &Journal<'_>, work: impl Future<Output = T>) -> T {
    let done = tokio::sync::Notify::new();
    let ticking = async {
        loop {
            tokio::select! {
                () = tokio::time::sleep(journal::BATCH_INTERVAL) => run.flush_if_due().await,
                () = done.notified() => break,
            }
        }
    };
    let working = async {
        let out = work.await;
        done.notify_one();
        out
    };
    let (out, ()) = tokio::join!(working, ticking);
    run.flush().await;
    out
}
