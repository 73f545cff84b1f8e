//! The invariants of the term-fencing scenarios catch what they are named after: each is
//! shown failing on a state that breaks it, beside one that keeps it.

use hadoop_ref::clock::ManualClock;
use hadoop_ref::datanode::container::ContainerController;
use hadoop_ref::datanode::dispatcher::{CommandOutcome, CommandReport};
use hadoop_ref::datanode::state_context::{DispatchedCommand, StateContextBehavior};
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, ScmId};
use hadoop_ref::scenarios::term_fencing::{
    NO_HANDED_OVER_COMMAND_BELOW_TAKEN_TERM, SEED_KEY,
    no_handed_over_command_runs_below_heard_term, replicas_follow_dispatched_deletes,
};
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
        heard_before_run: None,
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

/// HDDS-7620's property: a force delete that ran after the datanode took a higher term
/// than its own is caught; skipped, or judged against the term heard at dispatch alone, it
/// is not; a close (the processor's own handler, which upstream does not check again) is
/// not judged.
#[test]
fn a_handed_over_command_run_below_a_term_taken_before_its_run_is_caught() {
    let mut ran = executed_force_delete(1);
    no_handed_over_command_runs_below_heard_term(std::slice::from_ref(&ran)).unwrap();
    ran.heard_before_run = Some(2);
    let violation =
        no_handed_over_command_runs_below_heard_term(std::slice::from_ref(&ran)).unwrap_err();
    assert_eq!(violation.property, NO_HANDED_OVER_COMMAND_BELOW_TAKEN_TERM);
    let mut skipped = ran.clone();
    skipped.report.outcome = CommandOutcome::SkippedStaleTerm { current: 2 };
    no_handed_over_command_runs_below_heard_term(&[skipped]).unwrap();
    let mut close = ran;
    close.report.dispatched.command = crate::test_util::term_fencing::close_command(1, 1);
    no_handed_over_command_runs_below_heard_term(&[close]).unwrap();
}
