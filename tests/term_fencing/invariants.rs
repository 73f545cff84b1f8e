//! The invariants of the term-fencing scenarios catch what they are named after: each is
//! shown failing on a state that breaks it, beside one that keeps it.

use hadoop_ref::clock::ManualClock;
use hadoop_ref::datanode::container::ContainerController;
use hadoop_ref::datanode::dispatcher::{CommandOutcome, CommandReport};
use hadoop_ref::datanode::state_context::{DispatchedCommand, StateContextBehavior};
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, ScmId};
use hadoop_ref::scenarios::term_fencing::{SEED_KEY, replicas_follow_dispatched_deletes};
use hadoop_ref::sim::fencing_datanode::{FencingDatanode, Observed};
use hadoop_ref::sim::scm_endpoint::InProcessScm;

use crate::test_util::term_fencing::force_delete;

fn datanode() -> FencingDatanode {
    let scms = [InProcessScm::new(ScmId(1))];
    FencingDatanode::new(
        DatanodeId(1),
        StateContextBehavior::SeedPatch,
        &scms,
        &[ContainerId(1), ContainerId(2)],
        ManualClock::new(0).shared(),
    )
    .unwrap()
}

fn executed_force_delete(container: u64) -> Observed {
    Observed {
        report: CommandReport {
            dispatched: DispatchedCommand {
                command: force_delete(1, 1, container),
                term_at_dispatch: 1,
                heartbeat_term_high_water: None,
            },
            outcome: CommandOutcome::Executed,
            delete_results: Vec::new(),
        },
        heard_before: None,
    }
}

#[test]
fn a_replica_gone_without_a_delete_or_present_after_one_is_caught() {
    let dn = datanode();
    replicas_follow_dispatched_deletes(&dn, &[]).unwrap();
    // A delete that ran, yet the replica is still here.
    let ran = [executed_force_delete(1)];
    let violation = replicas_follow_dispatched_deletes(&dn, &ran).unwrap_err();
    assert_eq!(violation.seed, SEED_KEY);
    // The replica goes, as the delete said.
    dn.replicas.delete_container(ContainerId(1), true).unwrap();
    replicas_follow_dispatched_deletes(&dn, &ran).unwrap();
    // Another replica gone with no delete of it dispatched.
    dn.replicas.delete_container(ContainerId(2), true).unwrap();
    assert!(replicas_follow_dispatched_deletes(&dn, &ran).is_err());
}
