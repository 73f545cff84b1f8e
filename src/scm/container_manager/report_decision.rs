//! What one reported replica does to its container (`AbstractContainerReportHandler`'s
//! `processContainerReplica`: `updateContainerStats`, then `updateContainerState`), as a
//! pure decision the report handler carries out once it released the table.
//!
//! **The race it meets (HDDS-16811).** A replica that got a deleted block back (a repair
//! that copied it from a peer) reports blocks while its container is DELETING; upstream
//! force-deletes a CLOSED (HDDS-14416) or QUASI_CLOSED (HDDS-14684) replica, and brings the
//! container back otherwise (HDDS-11136, HDDS-12421). **The decision is upstream's**: the
//! force delete removes the replica, restored block and all, and the report handler never
//! revives the container for it.

use super::super::config::DeletingReplicaRule;
use super::super::container_info::{ContainerInfo, LifeCycleState};
use crate::hdds::container::{ContainerReplicaReport, ContainerState};

/// What the report handler does after it recorded (or ignored) a replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReportAction {
    /// A lifecycle event through the log (`updateContainerState`; leader only).
    Move(LifeCycleState),
    /// `transitionDeletingOrDeletedToTargetState` through the log.
    ComeBack(LifeCycleState),
    /// A delete of the reported replica (`deleteReplica`; leader only).
    DeleteReplica {
        /// Skip the datanode's OPEN and non-empty checks.
        force: bool,
    },
}

/// The decision for one replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Decision {
    /// The replica is not recorded (a CLOSED replica whose sequence id differs from the
    /// container's: `bcsidMismatched`).
    pub(super) ignore: bool,
    /// What to do next, if anything.
    pub(super) action: Option<ReportAction>,
}

impl Decision {
    const RECORD: Decision = Decision {
        ignore: false,
        action: None,
    };

    fn act(action: ReportAction) -> Decision {
        Decision {
            ignore: false,
            action: Some(action),
        }
    }
}

/// `updateContainerStats`' sequence id: raised to a healthy replica's (not UNHEALTHY,
/// INVALID or DELETED). Returns whether it moved.
pub(super) fn raise_sequence_id(
    info: &mut ContainerInfo,
    replica: &ContainerReplicaReport,
) -> bool {
    let healthy = !matches!(
        replica.state,
        ContainerState::Unhealthy | ContainerState::Invalid | ContainerState::Deleted
    );
    if healthy && info.sequence_id < replica.sequence_id {
        info.sequence_id = replica.sequence_id;
        return true;
    }
    false
}

/// `updateContainerState` for a RATIS container, after its sequence id was raised; `rule`
/// judges a replica of a DELETING or DELETED container.
pub(super) fn decide(
    info: &ContainerInfo,
    replica: &ContainerReplicaReport,
    rule: DeletingReplicaRule,
) -> Decision {
    use ContainerState as R;
    use LifeCycleState as S;
    let bcsid_matches = replica.sequence_id == info.sequence_id;
    match info.state {
        S::Open if replica.state != R::Open => Decision::act(ReportAction::Move(S::Closing)),
        S::Open | S::Closed => Decision::RECORD,
        S::Closing => match replica.state {
            R::QuasiClosed => Decision::act(ReportAction::Move(S::QuasiClosed)),
            R::Closed if bcsid_matches => Decision::act(ReportAction::Move(S::Closed)),
            R::Closed => Decision {
                ignore: true,
                action: None,
            },
            _ => Decision::RECORD,
        },
        S::QuasiClosed => match replica.state {
            R::Closed if bcsid_matches => Decision::act(ReportAction::Move(S::Closed)),
            R::Closed => Decision {
                ignore: true,
                action: None,
            },
            _ => Decision::RECORD,
        },
        // An empty replica of a DELETED container is deleted as any other; a non-empty one
        // is judged as a DELETING container's (HDDS-12421).
        S::Deleted if replica.is_empty => {
            Decision::act(ReportAction::DeleteReplica { force: false })
        }
        S::Deleted | S::Deleting => decide_deleting(info, replica, rule),
    }
}

/// The DELETING branch, by `rule`: a replica force-deleted (a CLOSED one since
/// HDDS-14416, a QUASI_CLOSED one too since HDDS-14684), or, when non-empty, bringing the
/// container back: to QUASI_CLOSED on master (CLOSED for a CLOSED replica, which master
/// never reaches), to CLOSED before HDDS-14684.
fn decide_deleting(
    info: &ContainerInfo,
    replica: &ContainerReplicaReport,
    rule: DeletingReplicaRule,
) -> Decision {
    use ContainerState as R;
    let force_deleted = match rule {
        DeletingReplicaRule::ForceDeleteClosedOrQuasiClosed => {
            matches!(replica.state, R::Closed | R::QuasiClosed)
        }
        DeletingReplicaRule::LegacyForceDeleteClosedOnly => replica.state == R::Closed,
        DeletingReplicaRule::LegacyComeBackToClosed => false,
    };
    // Upstream's guard: always true here, as `raise_sequence_id` ran first.
    if force_deleted && replica.sequence_id <= info.sequence_id {
        return Decision::act(ReportAction::DeleteReplica { force: true });
    }
    if replica.is_empty || matches!(replica.state, R::Invalid | R::Deleted) {
        return Decision::RECORD;
    }
    let to = match rule {
        DeletingReplicaRule::ForceDeleteClosedOrQuasiClosed if replica.state != R::Closed => {
            LifeCycleState::QuasiClosed
        }
        _ => LifeCycleState::Closed,
    };
    Decision::act(ReportAction::ComeBack(to))
}
