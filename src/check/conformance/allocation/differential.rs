//! The HDDS-16891 differential: allocations, first writes, leader elections in one or two
//! halves, SCM restarts, snapshot installs, unconfirmed submits, datanode re-registrations
//! and heartbeats and clock ticks, applied to a cluster of the implementation's SCMs and to
//! one of `StorageContainerManager`s running the reference behavior.
//!
//! **The race** a sequence can show is the logic half of the seed: a new leader or a
//! restarted SCM that holds no slot for an unwritten container and grants it again, a
//! re-registered datanode whose bucket is forgotten. **The fix** it holds the
//! implementation to is the reference behavior's.
//!
//! The clusters have one pipeline, so the random pipeline choice is no observable output;
//! containers are named by the order in which each side first shows them (`#1`, `#2`, …),
//! so an implementation may draw its container ids from the log's sequence differently.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use proptest::prelude::*;

use super::super::differential::{DifferentialConfig, DifferentialReport, Step, explore};
use crate::clock::ManualClock;
use crate::hdds::ids::{ContainerId, DatanodeId, PipelineId};
use crate::scenarios::allocation::{CONTAINER_SIZE, SCENARIO_START_MS, SEED_KEY};
use crate::scm::{
    PendingContainerTrackerApi, Pipeline, RegistrationChange, ScmBehavior, ScmConfig, ScmError,
    ScmFactory,
};
use crate::sim::ratis::SubmitFault;
use crate::sim::scm_cluster::ScmCluster;

/// SCMs of each side's cluster.
const SCMS: usize = 2;
/// Slots of the datanodes (ids 1, 2), both on the one pipeline.
const SLOTS: [u64; 2] = [2, 3];
/// Longest clock tick: a few ticks age an entry out of its `TwoWindowBucket`. Half the
/// default roll interval, and drawn as such now and then, so that ticks land exactly on a
/// roll (`rollIfNeeded` rolls at `elapsed >= interval`).
const MAX_TICK_MS: u64 = 150_000;

/// One operation of the differential's world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Elect(usize),
    BeginElection(usize),
    LeaderReady(usize),
    Restart(usize),
    InstallSnapshot(usize),
    CatchUp(usize),
    Allocate,
    Write(usize),
    WriteOn(usize, usize),
    Close(usize),
    Reregister(usize, RegistrationChange),
    Heartbeat(usize),
    Tick(u64),
    Fault(SubmitFault),
}

impl Op {
    fn label(self) -> &'static str {
        match self {
            Op::Elect(_) => "Ratis elects a leader",
            Op::BeginElection(_) => "leader changed (not ready)",
            Op::LeaderReady(_) => "leader ready",
            Op::Restart(_) => "SCM restarts",
            Op::InstallSnapshot(_) => "SCM installs a snapshot",
            Op::CatchUp(_) => "SCM applies the log",
            Op::Allocate => "client allocates",
            Op::Write(_) => "first write of a granted container",
            Op::WriteOn(..) => "first write on one datanode",
            Op::Close(_) => "leader closes a granted container",
            Op::Reregister(..) => "datanode registers again",
            Op::Heartbeat(_) => "datanode heartbeats",
            Op::Tick(_) => "clock advances",
            Op::Fault(_) => "next submit answers an error",
        }
    }

    fn fields(self) -> Vec<(String, String)> {
        let scm = |i: usize| vec![("scm".to_owned(), format!("scm{}", i + 1))];
        let dn = |i: usize| ("datanode".to_owned(), DatanodeId(i as u64 + 1).to_string());
        match self {
            Op::Elect(i)
            | Op::BeginElection(i)
            | Op::LeaderReady(i)
            | Op::Restart(i)
            | Op::InstallSnapshot(i)
            | Op::CatchUp(i) => scm(i),
            Op::Write(k) | Op::Close(k) => vec![("granted".into(), format!("the {}th", k + 1))],
            Op::WriteOn(k, i) => vec![("granted".into(), format!("the {}th", k + 1)), dn(i)],
            Op::Reregister(i, change) => vec![dn(i), ("change".into(), format!("{change:?}"))],
            Op::Heartbeat(i) => vec![dn(i)],
            Op::Tick(ms) => vec![("ms".into(), ms.to_string())],
            Op::Fault(fault) => vec![("fault".into(), format!("{fault:?}"))],
            Op::Allocate => Vec::new(),
        }
    }
}

fn op() -> impl Strategy<Value = Op> {
    let scm = 0..SCMS;
    let dn = 0..SLOTS.len();
    let change = prop::sample::select(vec![
        RegistrationChange::Address,
        RegistrationChange::Version,
        RegistrationChange::Ports,
    ]);
    let fault = prop::sample::select(vec![
        SubmitFault::TimeoutAfterCommit,
        SubmitFault::NotLeaderAfterCommit,
    ]);
    prop_oneof![
        3 => scm.clone().prop_map(Op::Elect),
        1 => scm.clone().prop_map(Op::BeginElection),
        1 => scm.clone().prop_map(Op::LeaderReady),
        2 => scm.clone().prop_map(Op::Restart),
        1 => scm.clone().prop_map(Op::InstallSnapshot),
        1 => scm.prop_map(Op::CatchUp),
        6 => Just(Op::Allocate),
        4 => (0usize..5).prop_map(Op::Write),
        2 => (0usize..5, dn.clone()).prop_map(|(k, d)| Op::WriteOn(k, d)),
        1 => (0usize..5).prop_map(Op::Close),
        2 => (dn.clone(), change).prop_map(|(d, c)| Op::Reregister(d, c)),
        1 => dn.prop_map(Op::Heartbeat),
        1 => (1..=MAX_TICK_MS).prop_map(Op::Tick),
        1 => Just(Op::Tick(MAX_TICK_MS)),
        1 => fault.prop_map(Op::Fault),
    ]
}

/// One side: a cluster of SCMs `F` starts, the containers it granted in grant order, and
/// the names its containers are shown by.
struct Side<F: ScmFactory> {
    cluster: ScmCluster<F>,
    granted: Vec<ContainerId>,
    names: BTreeMap<ContainerId, usize>,
}

impl<F: ScmFactory> Side<F> {
    fn start(factory: F) -> Result<Self, String> {
        let pipeline = Pipeline {
            id: PipelineId(1),
            nodes: (1..=SLOTS.len() as u64).map(DatanodeId).collect(),
        };
        let config = ScmConfig {
            container_size: CONTAINER_SIZE,
            ..ScmConfig::with_pipelines(vec![pipeline])
        };
        let clock = ManualClock::new(SCENARIO_START_MS);
        let cluster = ScmCluster::new(factory, clock, config, SCMS as u64, &SLOTS)
            .map_err(|error| format!("could not start: {error}"))?;
        Ok(Self {
            cluster,
            granted: Vec::new(),
            names: BTreeMap::new(),
        })
    }

    /// `#k`: the k-th container this side showed.
    fn name(&mut self, container: ContainerId) -> String {
        let next = self.names.len() + 1;
        format!("#{}", self.names.entry(container).or_insert(next))
    }

    fn refusal(&mut self, error: &ScmError) -> String {
        match error {
            ScmError::NotLeader { .. } => "not leader".into(),
            ScmError::SubmitNotConfirmed { container, reason } => {
                format!("{} not confirmed ({reason})", self.name(*container))
            }
            other => other.to_string(),
        }
    }

    /// What the operation returned, shown.
    fn run(&mut self, op: Op) -> String {
        let cluster = &self.cluster;
        match op {
            Op::Elect(i) => cluster.elect(i),
            Op::BeginElection(i) => cluster.begin_election(i),
            Op::LeaderReady(i) => cluster.scm(i).notify_leader_ready(),
            Op::Restart(i) => {
                if let Err(error) = cluster.restart_scm(i) {
                    return format!("restart failed: {}", self.refusal(&error));
                }
            }
            Op::InstallSnapshot(i) => cluster.install_snapshot(i),
            Op::CatchUp(i) => return format!("applied up to {}", cluster.scm(i).catch_up()),
            Op::Allocate => {
                return match cluster.allocate() {
                    Ok(container) => {
                        self.granted.push(container);
                        format!("granted {}", self.name(container))
                    }
                    Err(error) => {
                        if let ScmError::SubmitNotConfirmed { container, .. } = error {
                            self.granted.push(container);
                        }
                        format!("refused: {}", self.refusal(&error))
                    }
                };
            }
            Op::Write(k) => match self.granted.get(k).copied() {
                Some(container) => cluster.write_first_block(container),
                None => return "nothing granted".into(),
            },
            Op::WriteOn(k, i) => match self.granted.get(k).copied() {
                Some(container) => {
                    cluster.write_first_block_on(container, DatanodeId(i as u64 + 1))
                }
                None => return "nothing granted".into(),
            },
            Op::Close(k) => match self.granted.get(k).copied() {
                Some(container) => cluster.close_container(container),
                None => return "nothing granted".into(),
            },
            Op::Reregister(i, change) => cluster.reregister(i, change),
            Op::Heartbeat(i) => cluster.heartbeat(i),
            Op::Tick(ms) => {
                cluster.clock().advance_ms(ms);
            }
            Op::Fault(fault) => cluster.ring().inject(fault),
        }
        "done".into()
    }

    /// What upstream code can observe after the operation: its result; per SCM whether it
    /// serves, its table (state, replicas) and each datanode's pending containers; per
    /// datanode the containers it created and refused.
    fn shown(&mut self, result: String) -> String {
        let mut out = result;
        for index in 0..SCMS {
            let scm = self.cluster.scm(index);
            let serving = if scm.is_serving() { "serving" } else { "-" };
            let _ = write!(out, "; scm{} {serving} [", index + 1);
            for info in scm.containers() {
                let replicas: Vec<String> = scm
                    .replicas(info.id)
                    .iter()
                    .map(|d| d.to_string())
                    .collect();
                let name = self.name(info.id);
                let _ = write!(out, " {name} {:?} at [{}]", info.state, replicas.join(","));
            }
            out.push_str(" ] pending");
            for dn in (1..=SLOTS.len() as u64).map(DatanodeId) {
                let pending = match scm.pending(dn) {
                    Ok(pending) => {
                        let names: Vec<String> = pending.iter().map(|c| self.name(*c)).collect();
                        names.join(",")
                    }
                    Err(error) => self.refusal(&error),
                };
                let _ = write!(out, " {dn}{{{pending}}}");
            }
        }
        let datanodes: Vec<_> = self
            .cluster
            .datanodes()
            .iter()
            .map(|d| (d.id(), d.created(), d.refused()))
            .collect();
        for (id, created, refused) in datanodes {
            let created: Vec<String> = created.iter().map(|c| self.name(*c)).collect();
            let refused: Vec<String> = refused.iter().map(|c| self.name(*c)).collect();
            let _ = write!(
                out,
                "; {id} created [{}] refused [{}]",
                created.join(","),
                refused.join(",")
            );
        }
        out
    }

    fn apply(&mut self, op: Op) -> String {
        let result = self.run(op);
        self.shown(result)
    }
}

/// Applies generated sequences of allocations, first writes, elections (whole, or leader
/// changed and leader ready apart), SCM restarts, snapshot installs, log catch-ups,
/// unconfirmed submits, re-registrations with changed details, heartbeats and clock ticks
/// to two SCMs `factory` starts and to two `StorageContainerManager`s running `reference`,
/// each over its own ring and datanodes; compares after every operation its result, and
/// per SCM whether it serves, its table with the replicas and every datanode's pending
/// containers, and per datanode what it created and refused. The first divergence is
/// shrunk and told as a step table. In the production build.
pub fn differential<F: ScmFactory>(
    factory: F,
    reference: ScmBehavior,
    config: &DifferentialConfig,
) -> DifferentialReport {
    let who = (
        SEED_KEY,
        reference.name(),
        std::any::type_name::<F::Scm>().to_owned(),
    );
    let ops = prop::collection::vec(op(), 1..40);
    explore(who, config, ops, |ops: &Vec<Op>| {
        run(factory, reference, ops)
    })
}

fn run<F: ScmFactory>(factory: F, reference: ScmBehavior, ops: &[Op]) -> Vec<Step> {
    let (mut expected, mut actual) = match (Side::start(reference), Side::start(factory)) {
        (Ok(expected), Ok(actual)) => (expected, actual),
        (expected, actual) => {
            return vec![Step {
                label: "start".into(),
                fields: Vec::new(),
                reference: expected.err().unwrap_or_else(|| "started".into()),
                implementation: actual.err().unwrap_or_else(|| "started".into()),
            }];
        }
    };
    let mut steps = Vec::new();
    for op in ops {
        let step = Step {
            label: op.label().into(),
            fields: op.fields(),
            reference: expected.apply(*op),
            implementation: actual.apply(*op),
        };
        let diverged = step.diverges();
        steps.push(step);
        if diverged {
            break;
        }
    }
    steps
}
