//! `ReadResource` (the refresh): the state's `clusters` rebuilt from what the bridge owns, read with the ledger
//! and the run keys of the bridge's claim; what was read is kept for the plan that follows, and the inventory is
//! read ahead for it (see [`super::read_ahead`]).

use crate::{
    domain::{ownership::IMPORTED, sha256_hex},
    provider::{
        diag::io_diags,
        state::{NotReady, ProviderState},
    },
    runtime::refresh::{RefreshOf, RefreshRead, refresh},
    tfplugin::{DeferredReason, Diagnostics, ReadRequest, ReadResponse, Value},
};

use super::{
    claim::{claim_namespace, ledger_of},
    clusters::{ClustersAnswer, Earlier, Recording},
    import::restore_imported,
    model::BridgeConfig,
    phase::PhaseMemo,
    read_ahead::{Pending, Refreshed, ahead_of},
};

/// Why a refresh answers with the current state as it came.
pub(super) enum Unread {
    /// The provider's connection is not known yet.
    Deferred(DeferredReason),
    /// What exists cannot be read.
    Failed(Diagnostics),
}

impl From<Diagnostics> for Unread {
    fn from(d: Diagnostics) -> Self {
        Unread::Failed(d)
    }
}

impl Unread {
    /// The answer: the current state kept whole, with `private` as it came.
    pub(super) fn respond(self, private: Vec<u8>) -> ReadResponse {
        let (diagnostics, deferred) = match self {
            Unread::Deferred(reason) => (Diagnostics::new(), Some(reason)),
            Unread::Failed(d) => (d, None),
        };
        ReadResponse {
            keep_current_state: true,
            private,
            diagnostics,
            deferred,
            ..Default::default()
        }
    }
}

/// The refresh of `req`, or why the current state is kept (answered by [`Unread::respond`]).
pub(super) async fn read_bridge(
    provider: &ProviderState,
    memo: &PhaseMemo,
    req: &mut ReadRequest,
) -> Result<ReadResponse, Unread> {
    let client = provider.client(req.client).map_err(|e| match e {
        NotReady::Defer(reason) => Unread::Deferred(reason),
        NotReady::Fail(d) => Unread::Failed(d.into()),
    })?;
    let bridge = req.current_state.get_attr("name").as_str();
    let bridge = bridge.unwrap_or_default().to_string();
    let instance = req.current_state.get_attr("instance_id").as_str();
    memo.refreshed(&bridge, instance.map(String::from));
    // Where the bridge's objects may be: the namespaces the state selects (and those of its ledger).
    let selected = BridgeConfig::of_state(&req.current_state)
        .namespaces
        .unwrap_or_default();
    let claim_ns = claim_namespace(&req.current_state);
    let of = RefreshOf {
        bridge: &bridge,
        claim_namespace: &claim_ns,
        instance,
        selected: &selected,
        // Read ahead only through the provider's connection, with settings an apply recorded (see `read_ahead`).
        ahead: ahead_of(&req.current_state),
        listed: memo.take_listed(&bridge),
    };
    let ledger = ledger_of(&req.private, &req.current_state)?;
    let earlier = ledger.answered().cloned();
    let read = refresh(&client, of, ledger).await.map_err(io_diags)?;
    let RefreshRead {
        ledger,
        mut observed,
        claim,
        inventory,
    } = read;
    // The state is rebuilt from what exists: its old `clusters` was not decoded (a state older than the UID
    // ledger excepted) and goes before the new one is built. A failure below answers with the state as it came
    // (`keep_current_state`), which the plugin layer still holds.
    let mut state = std::mem::take(&mut req.current_state);
    state.set_attr("clusters", Value::Null);
    // A freshly imported bridge carries the import marker (the CLI keeps private data through import): it
    // takes over every object carrying its label, and restores its configuration.
    let imported = req.private == IMPORTED;
    let (diagnostics, ledger) = if imported {
        let restored = restore_imported(claim, &mut state, &bridge)?;
        (restored.warnings, ledger.taking_over(restored.takes_over))
    } else {
        (Diagnostics::new(), ledger)
    };
    let config = BridgeConfig::of_state(&state);
    // Labels others added that the state's configuration removes show as a change of their cluster.
    if let Ok(spec) = config.to_spec() {
        observed.mark_removable_labels(&spec.copy_labels);
    }
    let entries = observed.entries(|k| config.renews(k));
    // Entries the state holds already are answered with the bytes received (see `ClustersAnswer`).
    let earlier = Earlier {
        record: earlier.as_ref(),
        received_sha256: req.unread.sha256("clusters"),
    };
    let answer = ClustersAnswer::of(entries, earlier, Recording::Recorded);
    let mut private = std::mem::take(&mut req.private);
    let mut stored = None;
    if !ledger.is_empty() || imported || !observed.owned.is_empty() {
        let reads = ledger.reads().map(String::from);
        let next = observed.ledger(&ledger).with_reads(reads);
        let next = answer.recorded_in(next).into_stored();
        private = next.to_private();
        stored = Some(next);
    }
    let private_sha256 = sha256_hex(&private);
    let refreshed = Some(Refreshed {
        private_sha256,
        ledger: stored,
        observed,
    });
    let pending = Pending {
        refreshed,
        inventory,
    };
    memo.set_pending(&bridge, pending);
    let (new_state, attribute_bytes) = answer.into_state(state, &bridge);
    Ok(ReadResponse {
        new_state,
        attribute_bytes,
        private,
        diagnostics,
        ..Default::default()
    })
}
