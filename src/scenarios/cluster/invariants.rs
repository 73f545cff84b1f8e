//! The cross-seed properties of a settled [`MiniOzoneCluster`], each a named function.

use crate::scenarios::Violation;
use crate::sim::mini_cluster::{Key, MiniOzoneCluster};

/// The seeds the properties come from.
pub const SEED_KEY: &str = "HDDS-16811+HDDS-17268";

fn violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: SEED_KEY,
        property,
        detail,
    }
}

/// Every replica of each deleted key's container holds none of its blocks.
pub fn deleted_keys_are_gone_everywhere(
    cluster: &MiniOzoneCluster,
    deleted: &[Key],
) -> Result<(), Violation> {
    for key in deleted {
        for dn in 0..cluster.datanode_count() {
            let live = cluster
                .live_blocks(dn, key.container)
                .map_err(|e| violation("every deleted block deleted everywhere", e.to_string()))?;
            if live > 0 {
                return Err(violation(
                    "every deleted block deleted everywhere",
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

/// Every replica of each kept key's container holds all of its blocks.
pub fn kept_keys_are_whole(cluster: &MiniOzoneCluster, kept: &[Key]) -> Result<(), Violation> {
    for key in kept {
        for dn in 0..cluster.datanode_count() {
            let live = cluster
                .live_blocks(dn, key.container)
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
