//! Maintenance windows without a fight: with `active_window`, sveltoscluster-manager owns `spec.paused` (it sets it
//! outside the window and removes it inside, on every flip). The bridge refuses `paused` and `unhealthy = "pause"`
//! next to a window at validation, and never writes `spec.paused` for a cluster with one: its plan stays empty
//! across the manager's flips.

use serde_json::Value as Json;
use support::inventory::{Inv, apply_ok, bridge, flat};
use support::sveltos::{Sveltos, Window};
use support::{Cli, unique_namespace};

/// A window as short as sveltoscluster-manager can keep: it looks at a SveltosCluster's window when it reconciles
/// it, about once a minute; at each look past `nextPause` it pauses the cluster and schedules the next unpause a
/// minute ahead and the next pause two minutes ahead (`@every`: from that look), so the cluster spends about one
/// reconcile inside the window and one outside.
const WINDOW: &str = "  active_window {\n    from = \"@every 1m\"\n    to   = \"@every 2m\"\n  }";

/// How long one flip may take: a hang guard, not a measurement (the manager flips about every minute).
const FLIP_DEADLINE: std::time::Duration = std::time::Duration::from_secs(300);

/// `paused` next to the window is refused at plan, at its attribute; without it, apply registers the cluster with
/// the window and sveltoscluster-manager takes `spec.paused` over; across two of its flips (paused, unpaused, paused
/// again, or the other way round) every plan is empty.
#[tokio::test(flavor = "multi_thread")]
async fn the_plan_stays_empty_while_the_manager_flips_the_window() {
    let Some(sveltos) = Sveltos::get() else {
        return;
    };
    let inv = Inv::of(&sveltos.env).await;
    let ns = unique_namespace(&inv.client, "window").await;
    inv.profile_with_secret(&ns, "c1", &[], Json::Null, &sveltos.member_kubeconfig())
        .await;
    let cli = Cli::tofu();
    let tf = inv.tf(
        &cli,
        &bridge(&ns, &[&ns], &format!("{WINDOW}\n  paused = false")),
    );
    let refused = flat(&tf.run_err(&["plan", "-input=false", "-no-color"]));
    assert!(
        refused.contains("Error: paused next to an active window")
            && refused.contains("sveltoscluster-manager owns spec.paused"),
        "{refused}"
    );
    assert!(inv.sc(&ns, "c1").await.is_none());

    inv.rewrite(&tf, &bridge(&ns, &[&ns], WINDOW));
    apply_ok(&tf);
    let mut seen = sveltos
        .until(
            "the manager scheduling the window",
            FLIP_DEADLINE,
            || async {
                let w = Window::of(&inv.client, &ns, "c1").await;
                w.next_unpause.is_some().then_some(w)
            },
        )
        .await;
    assert_eq!(
        tf.plan(),
        0,
        "the manager's first look shows as drift: {seen:?}"
    );
    for flip in 1..=2 {
        let before = seen.is_paused();
        seen = sveltos
            .until(
                &format!("flip {flip} of the window"),
                FLIP_DEADLINE,
                || async {
                    let w = Window::of(&inv.client, &ns, "c1").await;
                    (w.is_paused() != before).then_some(w)
                },
            )
            .await;
        assert_eq!(tf.plan(), 0, "flip {flip} ({seen:?}) shows as drift");
    }
}
