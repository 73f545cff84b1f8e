//! The cross-seed properties of a settled [`MiniOzoneCluster`], each a named function.

use crate::datanode::container::store::StoreError;
use crate::hdds::ids::ContainerId;
use crate::scenarios::Violation;
use crate::scenarios::container::invariants::{
    FILE_WITH_METADATA, METADATA_WITH_FILE, first_file_without_metadata,
    first_metadata_without_file,
};
use crate::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};

/// The seeds the properties come from: a violation names the one its property belongs to,
/// or all of them when the property is the cluster's own.
pub const SEED_KEY: &str = "HDDS-16811+HDDS-17268+HDDS-16891";

/// HDDS-16891's seed key: the allocation property is its.
const ALLOCATION_SEED: &str = "HDDS-16891";

fn violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: SEED_KEY,
        property,
        detail,
    }
}

/// The liveness property every cluster case ends with: once the faults heal, the cluster
/// settles within `bound_ticks` ticks ([`MiniOzoneCluster::run_until_quiescent`]): every
/// SCM's command queues drain, every datanode runs what it took, the leader's
/// deleted-block log empties (each transaction acknowledged by every replica), and the
/// leader holds every replica as it is. A command a restarted datanode lost is sent again
/// only once the SCM's timeout for it passed: when the ticks do not settle it, that time
/// passes at once ([`MiniOzoneCluster::resend_timeout_ms`]) and `bound_ticks` more are
/// run. A violation lists what never happened ([`MiniOzoneCluster::in_flight`]).
pub fn cluster_settles_after_healing(
    cluster: &MiniOzoneCluster,
    bound_ticks: usize,
) -> Result<(), Violation> {
    const PROPERTY: &str = "the cluster settles once the faults heal";
    let settled = cluster
        .run_until_quiescent(bound_ticks)
        .or_else(|error| match error {
            ClusterError::NotQuiescent { .. } => {
                cluster.clock().advance_ms(cluster.resend_timeout_ms());
                cluster.run_until_quiescent(bound_ticks)
            }
            other => Err(other),
        });
    match settled {
        Ok(_) => Ok(()),
        Err(ClusterError::NotQuiescent { ticks }) => {
            let left = cluster
                .in_flight()
                .map_or_else(|e| e.to_string(), |in_flight| in_flight.to_string());
            Err(violation(
                PROPERTY,
                format!("still in flight after {ticks} ticks: {left}"),
            ))
        }
        Err(other) => Err(violation("scenario setup", other.to_string())),
    }
}

/// The property [`deleted_keys_are_gone_everywhere`] checks.
pub const DELETED_EVERYWHERE: &str = "every deleted block deleted everywhere";

/// Every replica of each deleted key's container holds none of its blocks.
pub fn deleted_keys_are_gone_everywhere(
    cluster: &MiniOzoneCluster,
    deleted: &[Key],
) -> Result<(), Violation> {
    no_block_live(cluster, deleted, DELETED_EVERYWHERE)
}

/// After a full repair round ([`MiniOzoneCluster::repair_round`]), still no replica holds
/// a block of a deleted key: repair brought none back. With
/// [`deleted_keys_are_gone_everywhere`] before the round, each block was deleted exactly
/// once on each replica: a block never live again cannot be deleted twice.
pub fn no_deleted_block_back_after_repair(
    cluster: &MiniOzoneCluster,
    deleted: &[Key],
) -> Result<(), Violation> {
    no_block_live(cluster, deleted, "no deleted block comes back after repair")
}

fn no_block_live(
    cluster: &MiniOzoneCluster,
    deleted: &[Key],
    property: &'static str,
) -> Result<(), Violation> {
    for key in deleted {
        for dn in 0..cluster.datanode_count() {
            let live = cluster
                .live_blocks_of(dn, key)
                .map_err(|e| violation(property, e.to_string()))?;
            if live > 0 {
                return Err(violation(
                    property,
                    format!(
                        "datanode {dn} keeps {live} block(s) of deleted key in {}",
                        key.container
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The property [`no_datanode_granted_past_its_room`] checks.
pub const NO_GRANT_PAST_ROOM: &str = "no datanode granted more containers than it has room for";

/// Judged by each datanode's own node report (its volume with the replicas it holds):
/// the space reserved for its OPEN containers fits in what is free, so no datanode was
/// granted more containers than it had room for (HDDS-16891's I-B1).
pub fn no_datanode_granted_past_its_room(cluster: &MiniOzoneCluster) -> Result<(), Violation> {
    const PROPERTY: &str = NO_GRANT_PAST_ROOM;
    for dn in 0..cluster.datanode_count() {
        let reports = cluster.node_report(dn).map_err(|e| Violation {
            seed: ALLOCATION_SEED,
            property: PROPERTY,
            detail: e.to_string(),
        })?;
        for report in reports {
            let reserved = report.committed.saturating_add(report.free_space_to_spare);
            if reserved > report.remaining {
                return Err(Violation {
                    seed: ALLOCATION_SEED,
                    property: PROPERTY,
                    detail: format!(
                        "datanode {dn} reserves {reserved} bytes for its open containers \
                         with {} bytes free",
                        report.remaining
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Every replica of each kept key's container holds all of its blocks.
pub fn kept_keys_are_whole(cluster: &MiniOzoneCluster, kept: &[Key]) -> Result<(), Violation> {
    for key in kept {
        for dn in 0..cluster.datanode_count() {
            let live = cluster
                .live_blocks_of(dn, key)
                .map_err(|e| violation("no live key lost", e.to_string()))?;
            if live != key.blocks.len() as u64 {
                return Err(violation(
                    "no live key lost",
                    format!(
                        "datanode {dn} holds {live} of {} block(s) of kept key in {}",
                        key.blocks.len(),
                        key.container
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A cluster whose doomed key was deleted while replicas reconciled, judged: it settles
/// (at most 50 ticks), then [`deleted_keys_are_gone_everywhere`] and [`log_drains`]; after
/// a full repair round of the doomed key's container,
/// [`no_deleted_block_back_after_repair`], [`kept_keys_are_whole`] for `kept` and
/// [`replicas_keep_metadata_and_files_together`].
pub fn settled_deletion_survives_repair(
    cluster: &MiniOzoneCluster,
    kept: &Key,
    doomed: &Key,
) -> Result<(), Violation> {
    let settle = |e: ClusterError| Violation {
        seed: SEED_KEY,
        property: "scenario setup",
        detail: e.to_string(),
    };
    cluster_settles_after_healing(cluster, 50)?;
    deleted_keys_are_gone_everywhere(cluster, std::slice::from_ref(doomed))?;
    log_drains(cluster)?;
    cluster.repair_round(doomed.container).map_err(settle)?;
    no_deleted_block_back_after_repair(cluster, std::slice::from_ref(doomed))?;
    kept_keys_are_whole(cluster, std::slice::from_ref(kept))?;
    replicas_keep_metadata_and_files_together(cluster)
}

/// The leader's deleted-block log is empty: every transaction was acknowledged by every
/// replica and removed through the log.
pub fn log_drains(cluster: &MiniOzoneCluster) -> Result<(), Violation> {
    let leader = cluster
        .leader()
        .map_err(|e| violation("the deleted-block log drains", e.to_string()))?;
    let left = leader.deleted_block_log();
    if left.is_empty() {
        Ok(())
    } else {
        Err(violation(
            "the deleted-block log drains",
            format!("{} transaction(s) left: {left:?}", left.len()),
        ))
    }
}

/// HDDS-16811's seed key: the replicas' properties are its.
const CONTAINER_SEED: &str = "HDDS-16811";

/// On every replica of every datanode, block metadata and block files go together: no
/// metadata without a file holding its bytes ([`no_metadata_without_file`]'s property),
/// no file without metadata ([`no_file_without_metadata`]'s).
///
/// [`no_metadata_without_file`]: crate::scenarios::container::invariants::no_metadata_without_file
/// [`no_file_without_metadata`]: crate::scenarios::container::invariants::no_file_without_metadata
pub fn replicas_keep_metadata_and_files_together(
    cluster: &MiniOzoneCluster,
) -> Result<(), Violation> {
    let broken = |property: &'static str, detail: String| Violation {
        seed: CONTAINER_SEED,
        property,
        detail,
    };
    for dn in 0..cluster.datanode_count() {
        let replicas = cluster
            .datanode(dn)
            .map_err(|e| broken(METADATA_WITH_FILE, e.to_string()))?
            .replicas();
        for id in replicas.container_ids() {
            let Ok(replica) = replicas.container(id) else {
                continue; // deleted since it was listed
            };
            let store = replica.store().as_ref();
            let unreadable = |e: StoreError| broken(METADATA_WITH_FILE, format!("{id}: {e}"));
            if let Some(gap) = first_metadata_without_file(store).map_err(unreadable)? {
                return Err(broken(
                    METADATA_WITH_FILE,
                    format!("datanode {dn}, {id}, {gap}"),
                ));
            }
            if let Some(block) = first_file_without_metadata(store).map_err(unreadable)? {
                return Err(broken(
                    FILE_WITH_METADATA,
                    format!("datanode {dn}, {id}, block {block}: file without metadata"),
                ));
            }
        }
    }
    Ok(())
}

/// HDDS-17268's seed key: the replication manager's deletes across a failover are in its
/// impact (HDDS-16449's double delete).
const TERM_FENCING_SEED: &str = "HDDS-17268";

/// The property of [`container_keeps_its_replication_factor`] a double delete breaks.
pub const BELOW_REPLICATION_FACTOR: &str = "no container left below its replication factor";

/// The seed a double delete of an over-replicated container's replicas is reported under.
pub const REPLICATION_SEED: &str = TERM_FENCING_SEED;

/// The datanodes holding a replica of `container` are exactly `factor`: fewer means two
/// SCMs' over-replication deletes fell on different replicas (HDDS-16449's double delete,
/// which HDDS-4589's order and HDDS-17268's fence each prevent), more that the excess was
/// never removed.
pub fn container_keeps_its_replication_factor(
    cluster: &MiniOzoneCluster,
    container: ContainerId,
    factor: usize,
) -> Result<(), Violation> {
    const BELOW: &str = BELOW_REPLICATION_FACTOR;
    const ABOVE: &str = "an over-replicated container's excess is removed";
    let holders: Vec<usize> = (0..cluster.datanode_count())
        .filter(|&dn| {
            cluster
                .datanode(dn)
                .is_ok_and(|d| d.replicas().container(container).is_ok())
        })
        .collect();
    let property = match holders.len().cmp(&factor) {
        std::cmp::Ordering::Equal => return Ok(()),
        std::cmp::Ordering::Less => BELOW,
        std::cmp::Ordering::Greater => ABOVE,
    };
    Err(Violation {
        seed: TERM_FENCING_SEED,
        property,
        detail: format!(
            "{container} has {} replica(s) (on datanodes {holders:?}), its factor is {factor}",
            holders.len()
        ),
    })
}
