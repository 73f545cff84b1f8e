//! The protocol steps of a cluster case, each one call on the real components: what a
//! thread of a started `MiniOzoneCluster` does between two of its waits (a heartbeat to
//! one SCM, one command taken, one step of an executor, one pass of a service), and the
//! next step of a driver's script. Each declares what it reads and writes, so that two
//! steps touching nothing in common commute (the explorer's partial-order reduction).

use std::fmt;
use std::str::FromStr;

use crate::scenarios::Violation;
use crate::scenarios::cluster::SEED_KEY;
use crate::scenarios::cluster::explorable::Explorable;
use crate::sim::mini_cluster::{ClusterError, MiniOzoneCluster};

/// One protocol step of a cluster case. Datanodes and SCMs by index (0-based; shown as
/// `dn1`, `scm1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// A datanode's heartbeat thread for one SCM endpoint, stepped until it sent a
    /// heartbeat (`HeartbeatEndpointTask`).
    Heartbeat {
        /// The datanode.
        dn: usize,
        /// The SCM.
        scm: usize,
    },
    /// The datanode's command processor takes one command (runs it, or hands it to its
    /// executor).
    Process {
        /// The datanode.
        dn: usize,
    },
    /// One step of the datanode's replication supervisor (a reconciliation's next step,
    /// or its next command).
    Supervise {
        /// The datanode.
        dn: usize,
    },
    /// The datanode's delete-container executor runs its next command.
    DeleteContainer {
        /// The datanode.
        dn: usize,
    },
    /// The datanode's on-demand scanner runs its next scan.
    Scan {
        /// The datanode.
        dn: usize,
    },
    /// One run of the datanode's block deleting service.
    DeleteBlocks {
        /// The datanode.
        dn: usize,
    },
    /// One pass of an SCM's replication manager (after its safe-mode check).
    ReplicationManager {
        /// The SCM.
        scm: usize,
    },
    /// One run of an SCM's over- and under-replicated processors.
    Processors {
        /// The SCM.
        scm: usize,
    },
    /// One round of an SCM's block deleting service.
    ScmDeleteBlocks {
        /// The SCM.
        scm: usize,
    },
    /// The next step of a driver's script.
    Driver {
        /// The script.
        script: usize,
    },
}

/// What a step reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resource {
    Datanode(usize),
    AllDatanodes,
    Scm(usize),
    /// The replicated log, and what every SCM applies from it.
    Ring,
    Everything,
}

impl Resource {
    fn overlaps(self, other: Resource) -> bool {
        use Resource::*;
        match (self, other) {
            (Everything, _) | (_, Everything) => true,
            (AllDatanodes, Datanode(_)) | (Datanode(_), AllDatanodes) => true,
            (AllDatanodes, AllDatanodes) | (Ring, Ring) => true,
            (Datanode(a), Datanode(b)) | (Scm(a), Scm(b)) => a == b,
            _ => false,
        }
    }
}

/// What a step reads and what it writes.
struct Footprint {
    reads: &'static [Resource],
    writes: Vec<Resource>,
}

impl Action {
    /// Its footprint in a state where the SCMs `leading` believe they lead:
    /// conservative, so that two steps it calls independent do commute. A heartbeat writes
    /// its datanode and its SCM, and the ring when that SCM leads (a report may move a
    /// container through the log; a follower only records it); a supervisor step reads
    /// every other datanode (its peers); an SCM's service writes its SCM, and the ring
    /// when it leads; a driver's step may touch anything.
    fn footprint(self, leading: &[bool]) -> Footprint {
        use Resource::*;
        let ring = |scm: usize| leading.get(scm).copied().unwrap_or(true);
        match self {
            Action::Heartbeat { dn, scm } => Footprint {
                reads: &[],
                writes: if ring(scm) {
                    vec![Datanode(dn), Scm(scm), Ring]
                } else {
                    vec![Datanode(dn), Scm(scm)]
                },
            },
            Action::Process { dn }
            | Action::DeleteContainer { dn }
            | Action::Scan { dn }
            | Action::DeleteBlocks { dn } => Footprint {
                reads: &[],
                writes: vec![Datanode(dn)],
            },
            Action::Supervise { dn } => Footprint {
                reads: &[AllDatanodes],
                writes: vec![Datanode(dn)],
            },
            Action::Processors { scm } => Footprint {
                reads: &[],
                writes: vec![Scm(scm)],
            },
            Action::ReplicationManager { scm } | Action::ScmDeleteBlocks { scm } => Footprint {
                reads: &[],
                writes: if ring(scm) {
                    vec![Scm(scm), Ring]
                } else {
                    vec![Scm(scm)]
                },
            },
            Action::Driver { .. } => Footprint {
                reads: &[],
                writes: vec![Everything],
            },
        }
    }

    /// Whether running `self` and `other` in either order from a state where the SCMs
    /// `leading` believe they lead reaches the same state, and neither enables or
    /// disables the other: neither writes what the other reads or writes. Symmetric.
    pub fn independent(self, other: Action, leading: &[bool]) -> bool {
        let (a, b) = (self.footprint(leading), other.footprint(leading));
        let conflicts = |writes: &[Resource], touched: &[Resource]| {
            writes
                .iter()
                .any(|w| touched.iter().any(|t| w.overlaps(*t)))
        };
        !(conflicts(&a.writes, &b.writes)
            || conflicts(&a.writes, b.reads)
            || conflicts(&b.writes, a.reads))
    }

    /// Which SCMs believe they lead (a crashed one counts as leading: conservative).
    pub fn leading(cluster: &MiniOzoneCluster) -> Vec<bool> {
        (0..cluster.scm_count())
            .map(|scm| cluster.scm(scm).map_or(true, |s| s.context().is_leader))
            .collect()
    }

    /// The cluster's steps enabled now (a driver's are listed by the search), in a fixed
    /// order: a step whose thread would find nothing to do is left out (a heartbeat to a
    /// crashed or cut-off SCM, a processor with an empty queue).
    pub fn enabled(cluster: &MiniOzoneCluster) -> Result<Vec<Action>, ClusterError> {
        let mut enabled = Vec::new();
        for dn in 0..cluster.datanode_count() {
            for scm in 0..cluster.scm_count() {
                if cluster.scm(scm).is_ok() && cluster.link_is_up(dn, scm)? {
                    enabled.push(Action::Heartbeat { dn, scm });
                }
            }
            let datanode = cluster.datanode(dn)?;
            let (supervisor, delete_container) = datanode.executors().in_flight();
            let busy = [
                (datanode.context().queue_len() > 0, Action::Process { dn }),
                (supervisor > 0, Action::Supervise { dn }),
                (delete_container > 0, Action::DeleteContainer { dn }),
                (
                    datanode.replicas().scanner().queued() > 0,
                    Action::Scan { dn },
                ),
                (
                    cluster.has_pending_deletions(dn)?,
                    Action::DeleteBlocks { dn },
                ),
            ];
            enabled.extend(busy.into_iter().filter(|(on, _)| *on).map(|(_, a)| a));
        }
        for scm in 0..cluster.scm_count() {
            let Ok(running) = cluster.scm(scm) else {
                continue;
            };
            if running.context().is_leader {
                enabled.push(Action::ReplicationManager { scm });
                if !running.deleted_block_log().is_empty() {
                    enabled.push(Action::ScmDeleteBlocks { scm });
                }
            }
            if running.replication_queue_len() > 0 {
                enabled.push(Action::Processors { scm });
            }
        }
        Ok(enabled)
    }

    /// Runs the step on `case`; a driver's step is its script's step at `position`.
    pub fn apply(self, case: &Explorable, position: usize) -> Result<(), Violation> {
        let cluster = &case.cluster;
        let setup = |e: ClusterError| Violation {
            seed: SEED_KEY,
            property: "scenario setup",
            detail: e.to_string(),
        };
        match self {
            Action::Heartbeat { dn, scm } => {
                let scm_id = cluster.scm(scm).map_err(setup)?.id();
                let datanode = cluster.datanode(dn).map_err(setup)?;
                datanode.heartbeat_to(scm_id).map_err(|e| setup(e.into()))?;
            }
            Action::Process { dn } => {
                cluster.datanode(dn).map_err(setup)?.process_command();
            }
            Action::Supervise { dn } => {
                cluster.datanode(dn).map_err(setup)?.supervisor_step();
            }
            Action::DeleteContainer { dn } => {
                cluster.datanode(dn).map_err(setup)?.delete_container_step();
            }
            Action::Scan { dn } => {
                cluster.datanode(dn).map_err(setup)?.scan_step();
            }
            Action::DeleteBlocks { dn } => cluster.run_block_deleting_service(dn).map_err(setup)?,
            // A service's refusal (deposed meanwhile, a full queue) is its thread's: tried
            // again at its next run, as on the cluster's threads.
            Action::ReplicationManager { scm } => cluster.run_replication_manager(scm),
            Action::Processors { scm } => {
                let running = cluster.scm(scm).map_err(setup)?;
                let _ = running.run_over_replicated_processor();
                let _ = running.run_under_replicated_processor();
            }
            Action::ScmDeleteBlocks { scm } => {
                let _ = cluster
                    .scm(scm)
                    .map_err(setup)?
                    .run_block_deleting_service();
            }
            Action::Driver { script } => case.scripts[script][position].run(cluster)?,
        }
        Ok(())
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Action::Heartbeat { dn, scm } => write!(f, "heartbeat dn{} scm{}", dn + 1, scm + 1),
            Action::Process { dn } => write!(f, "process dn{}", dn + 1),
            Action::Supervise { dn } => write!(f, "supervise dn{}", dn + 1),
            Action::DeleteContainer { dn } => write!(f, "delete-container dn{}", dn + 1),
            Action::Scan { dn } => write!(f, "scan dn{}", dn + 1),
            Action::DeleteBlocks { dn } => write!(f, "delete-blocks dn{}", dn + 1),
            Action::ReplicationManager { scm } => write!(f, "replication-manager scm{}", scm + 1),
            Action::Processors { scm } => write!(f, "processors scm{}", scm + 1),
            Action::ScmDeleteBlocks { scm } => write!(f, "scm-delete-blocks scm{}", scm + 1),
            Action::Driver { script } => write!(f, "driver {}", script + 1),
        }
    }
}

/// An action's text that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an action: {0:?}")]
pub struct BadAction(pub String);

impl FromStr for Action {
    type Err = BadAction;

    /// Parses what [`Display`](fmt::Display) writes.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || BadAction(text.to_owned());
        let words: Vec<&str> = text.split_whitespace().collect();
        let index = |word: &str, prefix: &str| -> Result<usize, BadAction> {
            word.strip_prefix(prefix)
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|n| n.checked_sub(1))
                .ok_or_else(bad)
        };
        match words.as_slice() {
            ["heartbeat", dn, scm] => Ok(Action::Heartbeat {
                dn: index(dn, "dn")?,
                scm: index(scm, "scm")?,
            }),
            [kind, node] => {
                let dn = || index(node, "dn");
                let scm = || index(node, "scm");
                match *kind {
                    "process" => Ok(Action::Process { dn: dn()? }),
                    "supervise" => Ok(Action::Supervise { dn: dn()? }),
                    "delete-container" => Ok(Action::DeleteContainer { dn: dn()? }),
                    "scan" => Ok(Action::Scan { dn: dn()? }),
                    "delete-blocks" => Ok(Action::DeleteBlocks { dn: dn()? }),
                    "replication-manager" => Ok(Action::ReplicationManager { scm: scm()? }),
                    "processors" => Ok(Action::Processors { scm: scm()? }),
                    "scm-delete-blocks" => Ok(Action::ScmDeleteBlocks { scm: scm()? }),
                    "driver" => Ok(Action::Driver {
                        script: index(node, "")?,
                    }),
                    _ => Err(bad()),
                }
            }
            _ => Err(bad()),
        }
    }
}
