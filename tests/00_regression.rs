//! Every minimized failure found while building the crate, kept as a named test with a
//! one-line postmortem. A race whose regression needs a checker lives with the checker:
//!
//! - `loom-tests/rebuild_gate_race.rs`, `space_check_sees_created_container_as_committed_or_pending`.
//!   Postmortem: the shuttle SCM cluster over-granted a slot with the fix in place, because
//!   a space check read the storage report (container not yet committed) before the bucket
//!   (entry already confirmed away); the tracker now reads the reports under the bucket
//!   lock. With Ozone's order, loom finds the over-grant in about 1 600 executions.
//! - `loom-tests/rebuild_gate_race.rs`, `rebuild_sees_allocation_committed_across_reelection`.
//!   Postmortem: a review found that the fixed rebuild applied the log before taking the
//!   gate, so an old-term allocation committing (with a timeout answer) during a same-SCM
//!   re-election lost its kept slot; safety rested on the simulated log's term check,
//!   which real Ratis does not make. The rebuild now applies the log under the gate; with
//!   the old order loom finds the lost slot in 37 executions.
//! - `loom-tests/delete_during_repair.rs`, `refresh_after_the_tree_write_is_caught`.
//!   Postmortem: with HDDS-16808's refresh done as Ozone orders it (compare and set the
//!   data checksum after the tree write returned), the deleting round's refresh and a
//!   reconciliation's interleaved and left the in-memory and persisted value on the older
//!   root; loom finds it in about 28 000 executions. The refresh now runs inside the tree
//!   write's critical section (`ContainerConfig::refresh_checksum_in_tree_write`).
#![cfg(not(any(loom, feature = "shuttle")))]

use hadoop_ref::clock::ManualClock;
use hadoop_ref::datanode::commands::{
    CommandId, CommandKind, CommandOutcome, CommandReport, ScmCommand,
};
use hadoop_ref::datanode::state_context::{
    Behavior, DispatchedCommand, EndpointState, StateContext, StateContextConfig,
};
use hadoop_ref::datanode::{ContainerId, DatanodeError, ScmId};
use hadoop_ref::scenarios::term_fencing::{Observed, no_command_below_heard_term};

/// Postmortem: moving the heartbeat high water into an atomic dropped its update on the
/// locked path, so the fence invariant could not see a discarded term and shuttle let
/// `LegacyIgnoreHeartbeatTermBeforeInit` escape the cluster scenario.
#[test]
fn heartbeat_high_water_is_recorded_by_every_behavior_before_and_after_init() {
    for behavior in Behavior::ALL {
        let context = StateContext::new(
            behavior,
            StateContextConfig::default(),
            &[(ScmId(1), false)],
            ManualClock::new(0).shared(),
        )
        .unwrap();
        context.endpoints()[0].set_state(EndpointState::Heartbeat);
        context.update_term_from_heartbeat(2).unwrap();
        assert_eq!(
            context.heartbeat_term_high_water(),
            Some(2),
            "{behavior:?} before init"
        );
        context
            .add_command(ScmCommand::new(CommandId(1), 2, CommandKind::Reregister))
            .unwrap();
        assert!(context.get_next_command().is_some());
        context.update_term_from_heartbeat(5).unwrap();
        assert_eq!(
            context.heartbeat_term_high_water(),
            Some(5),
            "{behavior:?} after init"
        );
    }
}

/// Postmortem: the fence invariant judged only commands whose handler succeeded; a stale
/// force delete of a replica an earlier command had already removed failed in the handler
/// and went unjudged, which hid the legacy defect in the cluster scenario. It now judges
/// every dispatch, whatever the handler does.
#[test]
fn stale_command_that_a_handler_refused_is_still_judged() {
    let command = ScmCommand::new(
        CommandId(1),
        1,
        CommandKind::DeleteContainer {
            container: ContainerId(1),
            force: true,
        },
    );
    let report = CommandReport {
        dispatched: DispatchedCommand {
            command,
            term_at_dispatch: 1,
            heartbeat_term_high_water: Some(2),
        },
        outcome: CommandOutcome::Failed(DatanodeError::UnknownContainer {
            container: ContainerId(1),
        }),
    };
    assert!(report.ran());
    let observed = Observed {
        report,
        heard_before: Some(2),
    };
    assert!(no_command_below_heard_term(&[observed]).is_err());
}
